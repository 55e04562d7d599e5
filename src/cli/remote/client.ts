import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { PACKAGE_VERSION } from '../../version.js'

/**
 * How a remote command ended when it did not publish or pass: `exitCode` 1 is blocked (lint,
 * compatibility, an invalid document), 2 a usage, authentication or network error. The message is
 * the one line printed on stderr.
 */
export class CliFailure extends Error {
  constructor(message: string, readonly exitCode: 1 | 2) {
    super(message)
  }
}

export const usage = (message: string) => new CliFailure(message, 2)

/** A problem+json answer (CONTRACT §2), as far as the client reads it. */
export interface Problem {
  status: number
  code: string
  detail: string
  errors?: { code?: string; message: string; severity?: string; path?: (string | number)[]; pointer?: string }[]
}

export interface Credentials { url: string; key: string }

export interface ConnectionOptions { url?: string; key?: string }

/** Where `registry login` keeps the URL and key: the user's configuration directory (XDG), readable by the user alone. */
export function credentialsFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config')
  return join(base, 'api-registry', 'credentials.json')
}

export async function saveCredentials(credentials: Credentials): Promise<string> {
  const file = credentialsFile()
  await mkdir(dirname(file), { recursive: true, mode: 0o700 })
  await writeFile(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 })
  await chmod(file, 0o600) // an existing file keeps its mode on write
  return file
}

export async function forgetCredentials(): Promise<string> {
  const file = credentialsFile()
  await rm(file, { force: true })
  return file
}

async function savedCredentials(): Promise<Partial<Credentials>> {
  try {
    return JSON.parse(await readFile(credentialsFile(), 'utf8')) as Partial<Credentials>
  } catch {
    return {}
  }
}

/** The URL and key: the options, else REGISTRY_URL / REGISTRY_API_KEY, else what `registry login` saved. */
export async function resolveCredentials(options: ConnectionOptions): Promise<Credentials> {
  const saved = await savedCredentials()
  // An empty variable counts as unset (CI templates often pass one through empty).
  const url = options.url || process.env.REGISTRY_URL || saved.url
  const key = options.key || process.env.REGISTRY_API_KEY || saved.key
  if (!url) throw usage('no registry URL: pass --url, set REGISTRY_URL, or run `registry login`')
  if (!key) throw usage('no API key: pass --key, set REGISTRY_API_KEY, or run `registry login`')
  return { url: checkedUrl(url), key }
}

export function checkedUrl(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw usage(`the registry URL '${url}' is not a URL (e.g. https://registry.example.com)`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw usage(`the registry URL '${url}' is not http(s)`)
  return parsed.href.replace(/\/+$/, '')
}

export interface Answer<T> { status: number; body: T; text: string }

/** The registry's HTTP API, as the remote commands use it: answers or throws a CliFailure that says why. */
export class RegistryClient {
  constructor(private readonly credentials: Credentials) {}

  get url(): string { return this.credentials.url }

  async request<T>(method: string, path: string, init: { body?: unknown; accept?: string } = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.credentials.key}`,
      'user-agent': `api-registry-cli/${PACKAGE_VERSION}`,
      accept: init.accept ?? 'application/json',
    }
    if (init.body !== undefined) headers['content-type'] = 'application/json'
    let response: Response
    try {
      response = await fetch(`${this.credentials.url}${path}`, {
        method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: AbortSignal.timeout(600_000),
      })
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause
      throw new CliFailure(`cannot reach the registry at ${this.credentials.url}: ${cause?.code ?? cause?.message ?? (error as Error).message}`, 2)
    }
    const text = await response.text()
    const type = response.headers.get('content-type') ?? ''
    const body = (type.includes('json') && text ? JSON.parse(text) : text) as T
    if (response.status === 401) throw new CliFailure(`the registry at ${this.credentials.url} refused the API key (401): check --key, REGISTRY_API_KEY or \`registry login\``, 2)
    if (response.status === 403) throw new CliFailure(`the API key may not do this (403 forbidden): ${(body as unknown as Problem).detail ?? ''}`.trimEnd(), 2)
    return { status: response.status, body, text }
  }
}

/** A problem answer the command does not handle itself: one line, exit code 2. */
export function unexpected(answer: Answer<unknown>, what: string): CliFailure {
  const problem = answer.body as Partial<Problem> | string
  const detail = typeof problem === 'object' && problem ? `${problem.code ?? ''}: ${problem.detail ?? ''}` : String(problem).slice(0, 200)
  return new CliFailure(`${what}: the registry answered ${answer.status} ${detail}`.trimEnd(), 2)
}
