import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { createRegistryClient, describeError, problemOf, RegistryUnreachableError, type RegistryClient } from '../../client/index.js'
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

/** The typed client for one registry and key, with the CLI's handling of what no command handles itself. */
export interface Connection {
  url: string
  registry: RegistryClient
}

/**
 * Connects to the registry through the typed client (src/client): every command's request goes through
 * it, so its paths, parameters and bodies are checked against the registry's description. A 401, a 403
 * and a registry that does not answer end any command the same way: one line, exit code 2.
 */
export function connect(credentials: Credentials): Connection {
  const registry = createRegistryClient({
    url: credentials.url, key: credentials.key, userAgent: `api-registry-cli/${PACKAGE_VERSION}`, timeoutMs: 600_000,
  })
  registry.use({
    onResponse: async ({ response }) => {
      if (response.status === 401) throw new CliFailure(`the registry at ${credentials.url} refused the API key (401): check --key, REGISTRY_API_KEY or \`registry login\``, 2)
      if (response.status === 403) {
        const problem = problemOf(await response.clone().json().catch(() => undefined))
        throw new CliFailure(`the API key may not do this (403 forbidden): ${problem?.detail ?? ''}`.trimEnd(), 2)
      }
    },
    onError: ({ error }) => (error instanceof RegistryUnreachableError ? new CliFailure(error.message, 2) : undefined),
  })
  return { url: credentials.url, registry }
}

/** An error answer the command does not handle itself: one line, exit code 2. */
export function unexpected(answer: { response: Response; error?: unknown }, what: string): CliFailure {
  return new CliFailure(`${what}: the registry answered ${describeError(answer.response, answer.error)}`, 2)
}
