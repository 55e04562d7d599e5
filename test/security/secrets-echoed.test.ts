/**
 * Issue 14, finding 4: a git provider whose error answers echo the request's credentials (the
 * Authorization header, the token in the status line and the body, decoded and URL-encoded). The
 * tokens a key holder gave for a repository sync, an SDK output repository and the push mirror must
 * appear nowhere: not in the build, its log, the build list, the sync's answer and status, the
 * mirror's status, nor the server's log. A real server process: its log is what it writes.
 */
import { rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { petstore } from '../helpers.js'
import { OUTBOUND_LOOPBACK_ENV, api, startServer } from '../process/spawn.js'
import { seed } from '../sdk/support.js'
import { startGitHttpServer } from '../support/git-http-server.js'
import { tempDir } from '../temp.js'

const KEY = 'sk_secrets-echoed-test-000000000000000000000'
// Tokens with characters that URL encoding and JSON escaping change, each of its own operation.
const TOKENS = {
  sync: 'ghp_sync/Token+Value=7Q"x',
  output: 'glpat-output/Token+Value=9Z',
  github: 'ghp_pullRequest/Token+Value=3W',
  mirror: 'mirror/Token+Value=5K',
  webhook: 'webhook-secret/Value+1',
}

/** Every form a token could be echoed in. */
function forms(token: string): string[] {
  const found = [token, encodeURIComponent(token), JSON.stringify(token).slice(1, -1)]
  for (const user of ['x-access-token', 'oauth2', 'registry', 'x', '']) found.push(Buffer.from(`${user}:${token}`).toString('base64'))
  return found
}

/** Answers every request with the credentials it came with: in the status line, the headers and the body. */
function echo(request: IncomingMessage, response: ServerResponse): void {
  const authorization = request.headers.authorization ?? ''
  const privateToken = String(request.headers['private-token'] ?? '')
  if (!authorization && !privateToken) {
    response.writeHead(401, { 'www-authenticate': 'Basic realm="echo"' }).end('credentials, please')
    return
  }
  const decoded = authorization.startsWith('Basic ') ? Buffer.from(authorization.slice(6), 'base64').toString('utf8') : authorization.slice(7)
  const password = decoded.slice(decoded.indexOf(':') + 1)
  const body = JSON.stringify({
    message: `Bad credentials for ${decoded || privateToken}`,
    authorization, private_token: privateToken, decoded, url_encoded: encodeURIComponent(password || privateToken),
  })
  const status = request.url?.includes('/pulls') || request.url?.includes('/merge_requests') ? 422 : 403
  response.writeHead(status, `Denied ${(password || privateToken).replace(/[^\x21-\x7e]/g, '')}`, { 'content-type': 'application/json', 'x-echo': authorization }).end(body)
}

t.test('tokens a git provider echoes back appear nowhere a key holder or the log can read', async (t) => {
  const storage = tempDir()
  const gitRoot = tempDir('secrets-echoed-git-')
  const echoing = createServer((request, response) => {
    request.resume()
    request.on('end', () => echo(request, response))
  })
  await new Promise<void>((resolve) => echoing.listen(0, '127.0.0.1', resolve))
  const echoUrl = `http://127.0.0.1:${(echoing.address() as AddressInfo).port}`
  // A real git server that takes the GitHub target's token, so that its push succeeds and the pull
  // request is asked of the echoing "API".
  const git = await startGitHttpServer(gitRoot, { auth: { password: TOKENS.github } })
  git.createBare('pets-ts')
  await seed(`http://x:${encodeURIComponent(TOKENS.github)}@${git.url.slice('http://'.length)}/pets-ts.git`)
  const server = await startServer(storage, { REGISTRY_BOOTSTRAP_KEY: KEY, LOG_LEVEL: 'debug', ...OUTBOUND_LOOPBACK_ENV })
  t.teardown(async () => {
    await server.stop('SIGKILL')
    echoing.closeAllConnections()
    await new Promise((resolve) => echoing.close(resolve))
    await git.close()
    rmSync(storage, { recursive: true, force: true })
    rmSync(gitRoot, { recursive: true, force: true })
  })
  const call = (method: string, path: string, body?: unknown) => api(server.url, KEY, method, path, body)
  const seen: string[] = []
  const read = async (method: string, path: string, body?: unknown) => {
    const response = await call(method, path, body)
    seen.push(`${method} ${path} → ${response.status} ${response.text}`)
    return response
  }

  // Repository sync with a token, from the echoing provider.
  const apiId = (await call('POST', '/v1/apis', { name: 'Petstore' })).json().data.id
  t.equal((await call('POST', `/v1/apis/${apiId}/spec`, { document: petstore() })).status, 201)
  const connected = await call('PUT', `/v1/apis/${apiId}/repository`, {
    provider: 'github', url: `${echoUrl}/acme/specs.git`, branch: 'main', path: 'openapi.yaml', token: TOKENS.sync, webhook_secret: TOKENS.webhook,
  })
  t.equal(connected.status, 201, connected.text)
  t.equal((await read('POST', `/v1/apis/${apiId}/sync`)).status, 502)
  await read('GET', `/v1/apis/${apiId}/repository`)

  // SDK builds: a git output repository on the echoing server, and a GitHub one whose API echoes.
  const sdk = (await call('POST', '/v1/sdks', { name: 'Pets', targets: ['php', 'typescript'], apis: [{ api_id: apiId }] })).json().data
  t.equal((await call('PUT', `/v1/sdks/${sdk.id}/targets/php/repository`, { provider: 'gitlab', url: `${echoUrl}/acme/pets-php.git`, api_url: `${echoUrl}/api/v4`, token: TOKENS.output })).status, 201)
  t.equal((await call('PUT', `/v1/sdks/${sdk.id}/targets/typescript/repository`, { provider: 'github', url: `${git.url}/pets-ts.git`, api_url: echoUrl, token: TOKENS.github })).status, 201)
  const builds = (await call('POST', `/v1/sdks/${sdk.id}/builds`)).json().data as { id: string; target: string }[]
  for (const build of builds) {
    for (let i = 0; ; i++) {
      const status = (await call('GET', `/v1/builds/${build.id}`)).json().data.status
      if (status === 'failed' || status === 'succeeded') break
      if (i > 1200) throw new Error(`build ${build.target} still ${status}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const done = (await read('GET', `/v1/builds/${build.id}`)).json().data
    t.equal(done.status, 'failed', `${build.target}: the provider refused`)
    await read('GET', `/v1/builds/${build.id}/logs`)
  }
  await read('GET', '/v1/builds')
  await read('GET', `/v1/sdks/${sdk.id}/builds`)

  // The push mirror, to the echoing server with a token.
  t.equal((await call('PUT', '/v1/mirror', { url: `${echoUrl}/acme/mirror.git`, token: TOKENS.mirror })).status, 200)
  for (let i = 0; ; i++) {
    const status = (await read('GET', '/v1/mirror')).json().data
    if (status.last_error) break
    if (i > 600) throw new Error('the mirror push never failed')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }

  await server.stop('SIGTERM')
  const texts = { 'what key holders read': seen.join('\n'), "the server's log": server.output() }
  t.match(texts["the server's log"], /repository sync: the repository could not be fetched/, 'the sync failure is logged')
  t.match(texts["the server's log"], /SDK build: the delivery failed/, 'the delivery failures are logged')
  t.match(texts["the server's log"], /git mirror: push failed/, 'the push failure is logged')
  t.match(texts["the server's log"], /\[redacted\]/, 'with the echoed credentials taken out')
  for (const [where, text] of Object.entries(texts)) {
    for (const [operation, token] of Object.entries(TOKENS)) {
      const leaked = forms(token).filter((form) => text.includes(form))
      t.same(leaked, [], `${where}: no form of the ${operation} token`)
    }
  }
})
