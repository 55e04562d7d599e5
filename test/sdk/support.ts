/** Shared pieces of the SDK tests: a seeded git server, stand-ins for GitHub and GitLab, polling. */
import { execFile, execFileSync } from 'node:child_process'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { Test } from 'tap'
import type { TestServer } from '../helpers.js'
import { json, petstore, tempDir } from '../helpers.js'
import { startGitHttpServer } from '../support/git-http-server.js'

export const run = promisify(execFile)

/** PHP is needed to lint and run the generated PHP; `.ci/run` installs Debian's php-cli when missing. */
export const skipWithoutPhp: false | string = (() => {
  try {
    execFileSync('php', ['--version'], { stdio: 'ignore' })
    return false
  } catch {
    return 'php is not installed: generated PHP not run (.ci/run installs php-cli)'
  }
})()

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.com',
  GIT_TERMINAL_PROMPT: '0',
}

/** Runs git (asynchronously: the git server answers on this process's event loop). */
export async function git(args: string[], cwd?: string): Promise<string> {
  const { stdout } = await run('git', args, { cwd, env: GIT_ENV })
  return stdout
}

/** Puts a first commit (a README) on `branch` of a bare repository. */
export async function seed(bareUrl: string, branch = 'main'): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-seed-'))
  try {
    await git(['init', '--quiet', `--initial-branch=${branch}`, dir])
    writeFileSync(join(dir, 'README.md'), '# output repository\n')
    await git(['add', 'README.md'], dir)
    await git(['commit', '--quiet', '-m', 'first'], dir)
    await git(['push', '--quiet', bareUrl, `${branch}:${branch}`], dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export interface BuildFixture {
  /** A bare repository on a git server, with a first commit on main. */
  petsUrl: string
  /** A server that takes git requests and never answers: a build delivering there stays running. */
  stuckUrl: string
  /** Drops the stuck server's open connections (those of a killed client stay open otherwise). */
  closeStuckConnections(): void
  storage: string
}

/**
 * What the build-queue tests run against (see BuildFixture): closed and removed when `t` ends.
 * `onStuckRequest` sees each request the stuck server takes.
 */
export async function buildFixture(t: Test, onStuckRequest: (request: IncomingMessage) => void = () => {}): Promise<BuildFixture> {
  const root = tempDir('sdk-git-')
  const server = await startGitHttpServer(root)
  server.createBare('pets')
  const petsUrl = `${server.url}/pets.git`
  await seed(petsUrl)
  const stuck = createServer(onStuckRequest)
  await new Promise<void>((resolve) => stuck.listen(0, '127.0.0.1', resolve))
  const storage = tempDir()
  t.teardown(async () => {
    stuck.closeAllConnections()
    await new Promise((resolve) => stuck.close(resolve))
    await server.close()
    rmSync(root, { recursive: true, force: true })
    rmSync(storage, { recursive: true, force: true })
  })
  return {
    petsUrl, stuckUrl: `http://127.0.0.1:${(stuck.address() as AddressInfo).port}/pets.git`, storage,
    closeStuckConnections: () => stuck.closeAllConnections(),
  }
}

/** The files of a branch of a repository, by cloning it (answers paths, sorted). */
export async function filesOf(url: string, branch: string): Promise<{ files: string[]; read: (path: string) => Promise<string>; cleanup: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-clone-'))
  await git(['clone', '--quiet', '--branch', branch, url, dir])
  const listed = (await git(['ls-files'], dir)).split('\n').filter(Boolean).sort()
  const { readFile } = await import('node:fs/promises')
  return { files: listed, read: (path) => readFile(join(dir, path), 'utf8'), cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/** An API with a petstore document; answers its id. */
export async function createApi(s: TestServer, name = 'Petstore', document: unknown = petstore()): Promise<string> {
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name } })).data
  const upload = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document } })
  if (upload.statusCode !== 201) throw new Error(`upload: ${upload.body}`)
  return api.id
}

export async function createSdk(s: TestServer, apiIds: string[], targets: string[] = ['typescript', 'php'], extra: Record<string, unknown> = {}): Promise<any> {
  const response = await s.call({ method: 'POST', url: '/v1/sdks', payload: { name: 'Pets SDK', targets, apis: apiIds.map((api_id) => ({ api_id })), ...extra } })
  if (response.statusCode !== 201) throw new Error(`create sdk: ${response.body}`)
  return json(response).data
}

const DONE = new Set(['succeeded', 'failed', 'canceled'])

/** Polls a build until it is done (or `until` holds). */
export async function waitForBuild(s: TestServer, id: string, until: (build: any) => boolean = (b) => DONE.has(b.status), timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const build = json(await s.call({ method: 'GET', url: `/v1/builds/${id}` })).data
    if (until(build)) return build
    if (Date.now() > deadline) throw new Error(`build ${id} still ${build.status}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** A request a stand-in saw. */
export interface Seen { method: string; url: string; headers: IncomingMessage['headers']; body: any }

/**
 * A stand-in for GitHub's or GitLab's REST API, as their documentation describes it: records every
 * request; a POST opens a pull (merge) request and answers the creation response (201 with
 * number/html_url, or iid/web_url), or, when one is already open for that head (source) branch, what
 * the provider answers then (GitHub 422, GitLab 409); a GET of the list answers the open ones whose
 * head (`owner:branch`) or source branch is the one asked for.
 */
export async function startProviderStandIn(provider: 'github' | 'gitlab'): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = []
  const open = new Map<string, Record<string, unknown>>()
  let next = 41
  const server: Server = createServer((request, response) => {
    let text = ''
    request.on('data', (chunk) => { text += chunk })
    request.on('end', () => {
      let body: any = null
      try { body = JSON.parse(text) } catch { body = text }
      seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body })
      const answer = (status: number, value: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value))
      const url = new URL(request.url ?? '/', 'http://stand-in')
      if (request.method === 'GET') {
        // GitHub's `head` is `owner:branch`, the owner being the repository's (/repos/{owner}/{repo}/pulls).
        const owner = url.pathname.split('/')[2]
        const head = url.searchParams.get('head') ?? ''
        const wanted = provider === 'github' ? (head.startsWith(`${owner}:`) ? head.slice(owner.length + 1) : undefined) : url.searchParams.get('source_branch')
        const state = url.searchParams.get('state')
        const listed = state === (provider === 'github' ? 'open' : 'opened') && wanted ? open.get(wanted) : undefined
        answer(200, listed ? [listed] : [])
        return
      }
      const branch = provider === 'github' ? body.head : body.source_branch
      if (open.has(branch)) {
        if (provider === 'github') answer(422, { message: 'Validation Failed', errors: [{ resource: 'PullRequest', code: 'custom', message: `A pull request already exists for acme:${branch}.` }] })
        else answer(409, { message: ['Another open merge request already exists for this source branch: !42'] })
        return
      }
      next += 1
      const opened = provider === 'github'
        ? { id: 9000 + next, number: next, state: 'open', html_url: `https://github.example/acme/pets/pull/${next}` }
        : { id: 9000 + next, iid: next, state: 'opened', web_url: `https://gitlab.example/acme/pets/-/merge_requests/${next}` }
      open.set(branch, opened)
      answer(201, opened)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`, seen,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}
