/**
 * REGISTRY_OUTBOUND_HOSTS enforced by repository sync, SDK output repositories and the push mirror:
 * a URL whose host is not allowed is refused when it is configured (400, nothing stored), and a URL
 * stored before the policy changed, or a server redirecting to a host not allowed, fails at connect
 * time in the feature's own terms. Two names of the loopback interface tell hosts apart: the real git
 * server listens on `127.0.0.1`, and `localhost` is the host a policy leaves out.
 */
import { rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { stringify } from 'yaml'
import { json, petstore, startTestServer, tempDir, type TestServer } from '../helpers.js'
import { git as mirrorGit, startMirrorServer } from '../mirror/helpers.js'
import { createApi, createSdk, seed, waitForBuild } from '../sdk/support.js'
import { startGitHttpServer, type GitHttpServer } from '../support/git-http-server.js'
import { createRepository, type TestRepository } from '../support/git-repos.js'

const NOT_ALLOWED = /not in (this server's )?REGISTRY_OUTBOUND_HOSTS/
const ELSEWHERE = ['git.example.com']

let gitRoot: string
let gitServer: GitHttpServer
let repo: TestRepository
let gitPort: number

t.before(async () => {
  gitRoot = tempDir('registry-outbound-git-')
  gitServer = await startGitHttpServer(gitRoot)
  gitPort = Number(new URL(gitServer.url).port)
  repo = await createRepository(gitServer, 'specs')
  await repo.commit({ 'openapi.yaml': stringify(petstore('1.0.0')) })
})

t.teardown(async () => {
  await gitServer.close()
  repo.cleanup()
  rmSync(gitRoot, { recursive: true, force: true })
})

/** A registry on `storage` (kept on close) with a policy; issues a key when the organization exists. */
async function open(storage: string, outboundHosts: string[]): Promise<TestServer> {
  const s = await startTestServer({ storage, outboundHosts })
  const key = s.key || (await s.registry.organizations.createKey('acme')).secret
  return { ...s, key, call: ({ key: callKey, ...request }) => s.call({ ...request, key: callKey === undefined ? key : callKey }) }
}

/** A loopback server answering every request with `status` and a Location on `host`:gitPort, same path. */
async function redirector(status: number, host: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((request, response) => {
    request.resume()
    response.writeHead(status, { location: `http://${host}:${gitPort}${request.url}` }).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}

function storageDir(t: { teardown: (fn: () => void) => void }): string {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  return storage
}

t.test('repository sync: refused when connected, and at sync time once the policy no longer allows the host', async (t) => {
  const storage = storageDir(t)
  let s = await open(storage, ['127.0.0.1'])
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Petstore' } })).data.id
  const connect = (url: string) => s.call({ method: 'PUT', url: `/v1/apis/${api}/repository`, payload: { provider: 'github', url, branch: 'main', path: 'openapi.yaml' } })

  const refused = await connect(`http://localhost:${gitPort}/specs.git`)
  t.equal(refused.statusCode, 400)
  t.match(json(refused), { code: 'invalid_request', detail: NOT_ALLOWED, errors: [{ path: ['url'], message: /'localhost'/ }] })
  t.equal((await s.call({ method: 'GET', url: `/v1/apis/${api}/repository` })).statusCode, 404, 'nothing stored')

  t.equal((await connect(repo.url)).statusCode, 201, 'an allowed host is connected')
  const synced = await s.call({ method: 'POST', url: `/v1/apis/${api}/sync` })
  t.equal(synced.statusCode, 201, synced.body)
  await s.close()

  // The operator narrows the policy: the stored connection is refused before any request is made.
  s = await open(storage, ELSEWHERE)
  t.teardown(() => s.close())
  const seen = gitServer.requests.length
  const failed = await s.call({ method: 'POST', url: `/v1/apis/${api}/sync` })
  t.equal(failed.statusCode, 502)
  t.match(json(failed), { code: 'repository_unavailable', detail: /^the repository could not be fetched: refused by the outbound policy \(url: the host '127\.0\.0\.1' is not in this server's REGISTRY_OUTBOUND_HOSTS\)$/ })
  t.equal(gitServer.requests.length, seen, 'the git server was not contacted')
  const last = json(await s.call({ method: 'GET', url: `/v1/apis/${api}/repository` })).data.last_sync
  t.match(last, { status: 'failed', error: { code: 'repository_unavailable', detail: NOT_ALLOWED } })
  t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${api}/versions` })).total, 1, 'no version was made')
})

t.test('repository sync: a redirect to a host not allowed is not followed; an allowed one is', async (t) => {
  const s = await open(storageDir(t), ['127.0.0.1'])
  t.teardown(() => s.close())
  const away = await redirector(302, 'localhost')
  const along = await redirector(307, '127.0.0.1')
  t.teardown(async () => { await away.close(); await along.close() })
  const connected = async (url: string) => {
    const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: `Redirected ${url}` } })).data.id
    const put = await s.call({ method: 'PUT', url: `/v1/apis/${api}/repository`, payload: { provider: 'gitlab', url, branch: 'main', path: 'openapi.yaml' } })
    t.equal(put.statusCode, 201, put.body)
    return api
  }

  const apiAway = await connected(`${away.url}/specs.git`)
  const seen = gitServer.requests.length
  const refused = await s.call({ method: 'POST', url: `/v1/apis/${apiAway}/sync` })
  t.equal(refused.statusCode, 502)
  t.match(json(refused), { code: 'repository_unavailable', detail: 'the repository could not be fetched: refused by the outbound policy' })
  t.equal(gitServer.requests.length, seen, 'the redirect was not followed')
  t.match(s.serverLog.at(-1), { api_id: apiAway, reason: /redirected to http:\/\/localhost:\d+: the host 'localhost' is not in this server's REGISTRY_OUTBOUND_HOSTS/ },
    "where it was redirected is in the operator's log only")

  const apiAlong = await connected(`${along.url}/specs.git`)
  const followed = await s.call({ method: 'POST', url: `/v1/apis/${apiAlong}/sync` })
  t.equal(followed.statusCode, 201, followed.body)
  t.match(json(followed).data, { number: 1, source: 'gitlab' })
  t.ok(gitServer.requests.length > seen, 'fetched from the git server through the redirects')
})

t.test('SDK output repositories: url and api_url refused when set; a stored one fails the build', async (t) => {
  const storage = storageDir(t)
  gitServer.createBare('pets-php')
  await seed(`${gitServer.url}/pets-php.git`)
  let s = await open(storage, ['127.0.0.1', 'gitlab.example.com', 'github.com'])
  const api = await createApi(s)
  const sdk = await createSdk(s, [api], ['php'])
  const put = (payload: Record<string, unknown>) => s.call({ method: 'PUT', url: `/v1/sdks/${sdk.id}/targets/php/repository`, payload })

  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    ['a git url on another host', { provider: 'git', url: `http://localhost:${gitPort}/pets-php.git` }, 'url', /'localhost'/],
    ['a GitLab api_url on another host', { provider: 'gitlab', url: 'https://gitlab.example.com/acme/pets.git', api_url: 'http://169.254.169.254/api/v4', token: 't' }, 'api_url', /'169\.254\.169\.254'/],
    ['github.com, whose API is api.github.com', { provider: 'github', url: 'https://github.com/acme/pets.git', token: 't' }, 'api_url', /https:\/\/api\.github\.com \(derived from url\).*'api\.github\.com'/],
    ['a GitLab api_url not allowed', { provider: 'gitlab', url: 'https://gitlab.example.com/acme/pets.git', api_url: 'https://api.github.com', token: 't' }, 'api_url', /'api\.github\.com'/],
  ]
  for (const [what, payload, field, message] of cases) {
    const response = await put(payload)
    t.equal(response.statusCode, 400, what)
    t.match(json(response), { code: 'invalid_request', detail: NOT_ALLOWED, errors: [{ path: [field], message }] }, what)
  }
  // A GitHub Enterprise host's API is derived on the same host (<origin>/api/v3): allowed with it.
  const enterprise = await put({ provider: 'github', url: 'https://gitlab.example.com/acme/pets.git', token: 't' })
  t.equal(enterprise.statusCode, 201, 'the derived API is on the same host')
  t.match(json(await s.call({ method: 'GET', url: `/v1/sdks/${sdk.id}/targets/php/repository` })).data, { provider: 'github', url: 'https://gitlab.example.com/acme/pets.git' }, 'refused PUTs stored nothing')

  // A remote that redirects to a host not allowed: the build fails, nothing is pushed there.
  const away = await redirector(302, 'localhost')
  t.teardown(() => away.close())
  t.equal((await put({ provider: 'git', url: `${away.url}/pets-php.git` })).statusCode, 200)
  const [redirected] = json(await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })).data
  const refusedBuild = await waitForBuild(s, redirected.id)
  t.equal(refusedBuild.status, 'failed')
  t.equal(refusedBuild.error, `could not deliver to ${away.url}/pets-php.git: refused by the outbound policy`)

  const allowed = await put({ provider: 'git', url: `${gitServer.url}/pets-php.git` })
  t.equal(allowed.statusCode, 200, allowed.body)
  await s.close()

  s = await open(storage, ELSEWHERE)
  t.teardown(() => s.close())
  const seen = gitServer.requests.length
  const [build] = json(await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })).data
  const done = await waitForBuild(s, build.id)
  t.equal(done.status, 'failed')
  t.match(done.error, /url: the host '127\.0\.0\.1' is not in this server's REGISTRY_OUTBOUND_HOSTS/)
  t.equal(gitServer.requests.length, seen, 'nothing was fetched or pushed')
  t.match((await s.call({ method: 'GET', url: `/v1/builds/${build.id}/logs` })).body, /failed: .*REGISTRY_OUTBOUND_HOSTS/)
})

t.test('push mirror: refused when set, and last_error once the policy no longer allows the host or a redirect leaves it', async (t) => {
  const storage = storageDir(t)
  const bare = gitServer.createBare('acme-mirror')
  let s = await startMirrorServer({ storage, outboundHosts: ['127.0.0.1'] })
  const api = await s.createApi('Petstore')
  await s.upload(api.id, petstore('1.0.0'))
  await s.settle()

  const refused = await s.call({ method: 'PUT', url: '/v1/mirror', payload: { url: `http://localhost:${gitPort}/acme-mirror.git` } })
  t.equal(refused.statusCode, 400)
  t.match(json(refused), { code: 'invalid_request', detail: NOT_ALLOWED, errors: [{ path: ['url'], message: /'localhost'/ }] })
  t.match(json(await s.call({ method: 'GET', url: '/v1/mirror' })).data, { url: null }, 'nothing stored')

  const url = `${gitServer.url}/acme-mirror.git`
  t.equal((await s.call({ method: 'PUT', url: '/v1/mirror', payload: { url } })).statusCode, 200)
  await s.settle()
  const pushed = json(await s.call({ method: 'GET', url: '/v1/mirror' })).data
  t.match(pushed, { url, last_error: null })
  t.equal(pushed.last_pushed_commit, pushed.head, 'an allowed remote is pushed to')
  await s.close()

  s = await startMirrorServer({ storage, outboundHosts: ELSEWHERE })
  t.teardown(() => s.close())
  await s.upload(api.id, petstore('2.0.0'))
  await s.settle()
  const status = json(await s.call({ method: 'GET', url: '/v1/mirror' })).data
  t.match(status, { url, last_pushed_commit: pushed.head, last_error: /^refused by the outbound policy \(url: the host '127\.0\.0\.1' is not in this server's REGISTRY_OUTBOUND_HOSTS\)$/ })
  t.not(status.head, pushed.head)
  t.equal((await mirrorGit(['--git-dir', bare, 'rev-parse', 'main'])).trim(), pushed.head, 'the remote did not move')
})

t.test('push mirror: a redirect to a host not allowed is not followed', async (t) => {
  const away = await redirector(302, 'localhost')
  const s = await startMirrorServer({ outboundHosts: ['127.0.0.1'] })
  t.teardown(async () => { await s.close(); await away.close() })
  const api = await s.createApi('Petstore')
  await s.upload(api.id, petstore('1.0.0'))
  await s.settle()
  const seen = gitServer.requests.length
  t.equal((await s.call({ method: 'PUT', url: '/v1/mirror', payload: { url: `${away.url}/acme-mirror.git` } })).statusCode, 200)
  await s.settle()
  t.match(json(await s.call({ method: 'GET', url: '/v1/mirror' })).data, { last_pushed_commit: null, last_error: `could not push to ${away.url}/acme-mirror.git: refused by the outbound policy` })
  t.equal(gitServer.requests.length, seen, 'the git server was not contacted')
})
