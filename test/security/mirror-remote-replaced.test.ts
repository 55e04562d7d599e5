/**
 * Issue 14, finding 1 (the same class of bug elsewhere): the push mirror's remote is written by the
 * server (the outcome of each push) and by the CLI (`registry mirror set-remote`). A push that was under
 * way when the CLI replaced the remote must not write its outcome onto the new remote, even when the new
 * one has the same URL (a new token, say): the server would show the old token's failure as the new
 * remote's and wait out a backoff before trying the new token.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { rmSync } from 'node:fs'
import t from 'tap'
import { petstore } from '../helpers.js'
import { api, cliAsync, cliJson, startServer } from '../process/spawn.js'
import { startGitHttpServer } from '../support/git-http-server.js'
import { tempDir } from '../temp.js'

const OLD_TOKEN = 'old-mirror-token-0000'
const NEW_TOKEN = 'new-mirror-token-1111'

interface Deferred { promise: Promise<void>; resolve: () => void }
function deferred(): Deferred {
  let resolve!: () => void
  const promise = new Promise<void>((done) => { resolve = done })
  return { promise, resolve }
}

function basicPassword(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization
  if (!header?.startsWith('Basic ')) return undefined
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8')
  return decoded.slice(decoded.indexOf(':') + 1)
}

/**
 * In front of the real git server: a request with the old token is held until `releaseOld`, then
 * refused (401); requests with the new token are held until `releaseNew`, then passed through.
 */
async function startGate(upstream: string) {
  const oldHeld = deferred()
  const releaseOld = deferred()
  const newSeen = deferred()
  const releaseNew = deferred()
  const forward = (request: IncomingMessage, response: ServerResponse) => {
    const proxied = httpRequest(`${upstream}${request.url}`, { method: request.method, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(response)
    })
    proxied.on('error', () => response.destroy())
    request.pipe(proxied)
  }
  const refuse = (response: ServerResponse) => response.writeHead(401, { 'www-authenticate': 'Basic realm="gate"' }).end('unauthorized')
  const server = createServer((request, response) => {
    const password = basicPassword(request)
    if (password === undefined) return refuse(response)
    if (password === OLD_TOKEN) {
      oldHeld.resolve()
      void releaseOld.promise.then(() => refuse(response))
      return
    }
    newSeen.resolve()
    void releaseNew.promise.then(() => forward(request, response))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    oldHeld: oldHeld.promise, newSeen: newSeen.promise,
    releaseOld: releaseOld.resolve, releaseNew: releaseNew.resolve,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}

t.test('a push under way when the CLI replaces the remote (same URL, new token) does not write onto the new remote', async (t) => {
  const storage = tempDir()
  const gitRoot = tempDir('mirror-remote-')
  const git = await startGitHttpServer(gitRoot, { auth: { password: NEW_TOKEN } })
  git.createBare('mirror')
  const gate = await startGate(git.url)
  // Loopback remotes are allowed explicitly (the outbound policy may refuse internal hosts by default).
  const env = { REGISTRY_OUTBOUND_HOSTS: '127.0.0.1' }
  const s = ['--storage', storage]
  const org = cliJson([...s, 'org', 'create', 'acme'], env)
  const server = await startServer(storage, env)
  t.teardown(async () => {
    await server.stop('SIGKILL')
    gate.releaseOld()
    gate.releaseNew()
    await gate.close()
    await git.close()
    rmSync(storage, { recursive: true, force: true })
    rmSync(gitRoot, { recursive: true, force: true })
  })
  const created = await api(server.url, org.api_key, 'POST', '/v1/apis', { name: 'petstore' })
  t.equal((await api(server.url, org.api_key, 'POST', `/v1/apis/${created.json().data.id}/spec`, { document: petstore() })).status, 201)
  const url = `${gate.url}/mirror.git`
  const show = async () => {
    const shown = await cliAsync(['--json', ...s, 'mirror', 'show', '--org', 'acme'], env)
    t.equal(shown.code, 0, shown.stderr)
    return JSON.parse(shown.stdout)
  }

  const first = await cliAsync(['--json', ...s, 'mirror', 'set-remote', url, '--org', 'acme', '--token', OLD_TOKEN], env)
  t.equal(first.code, 0, first.stderr)
  await gate.oldHeld // the server is pushing with the old token
  const replaced = await cliAsync(['--json', ...s, 'mirror', 'set-remote', url, '--org', 'acme', '--token', NEW_TOKEN], env)
  t.equal(replaced.code, 0, replaced.stderr)
  gate.releaseOld() // the old push fails now, after the remote was replaced
  await gate.newSeen // the server has recorded the old push's outcome and tries again, with the new token

  t.match(await show(), { url, token_set: true, last_error: null, last_error_at: null, last_pushed_commit: null },
    "the old token's failure is not shown as the new remote's")

  gate.releaseNew()
  let status = await show()
  for (let i = 0; i < 100 && status.last_pushed_commit === null; i++) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    status = await show()
  }
  t.equal(status.last_pushed_commit, status.head, 'the new token pushed the head')
  t.equal(status.last_error, null)
})
