/**
 * Issue 14, finding 3: without REGISTRY_OUTBOUND_HOSTS, a key could make the server connect anywhere
 * (cloud metadata, loopback, the private network) through repository sync, SDK output repositories
 * and the push mirror, and the sync error said whether a port was closed, what status a service
 * answered and whether it spoke git. Now, by default:
 * - internal addresses and names are refused when a URL is configured (400 naming the field);
 * - a name that passed but resolves to an internal address is refused when connecting;
 * - a redirect to an internal address is not followed;
 * - an operator opts in to internal hosts by listing them (the tests' 127.0.0.1 included);
 * - key holders are told "refused by the outbound policy" or "unreachable", nothing more; the reason
 *   is in the server's log.
 */
import { rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { stringify } from 'yaml'
import { OUTBOUND_LOOPBACK, json, petstore, startTestServer, tempDir, type TestServer } from '../helpers.js'
import { startMirrorServer } from '../mirror/helpers.js'
import { createApi, createSdk, seed, waitForBuild } from '../sdk/support.js'
import { startGitHttpServer, type GitHttpServer } from '../support/git-http-server.js'
import { createRepository, type TestRepository } from '../support/git-repos.js'

const REFUSED = 'refused by the outbound policy'

/** URLs on internal hosts, each refused by the default policy when configured. */
const INTERNAL = [
  'http://169.254.169.254/latest/meta-data.git', // cloud metadata (link-local)
  'http://[fd00:ec2::254]/x.git', // AWS metadata over IPv6 (unique-local)
  'http://metadata.google.internal/x.git', 'http://metadata/x.git', 'http://instance-data/x.git',
  'http://127.0.0.1:8080/x.git', 'http://127.1/x.git', 'http://0x7f000001/x.git', 'http://[::1]/x.git', 'http://localhost/x.git', 'http://git.localhost/x.git',
  'http://[::ffff:127.0.0.1]/x.git', 'http://[::ffff:7f00:1]/x.git', 'http://[::127.0.0.1]/x.git', 'http://[::ffff:a9fe:a9fe]/x.git',
  'http://0.0.0.0/x.git', 'http://[::]/x.git',
  'http://10.1.2.3/x.git', 'http://172.16.0.1/x.git', 'http://192.168.1.1/x.git', 'http://100.64.0.1/x.git', 'http://[fc00::1]/x.git', 'http://[fe80::1]/x.git',
]

let gitRoot: string
let gitServer: GitHttpServer
let repo: TestRepository
let gitPort: number

t.before(async () => {
  gitRoot = tempDir('registry-outbound-default-')
  gitServer = await startGitHttpServer(gitRoot)
  gitPort = Number(new URL(gitServer.url).port)
  repo = await createRepository(gitServer, 'specs')
  await repo.commit({ 'openapi.yaml': stringify(petstore('1.0.0')) })
  gitServer.createBare('pets-php')
  await seed(`${gitServer.url}/pets-php.git`)
})

t.teardown(async () => {
  await gitServer.close()
  repo.cleanup()
  rmSync(gitRoot, { recursive: true, force: true })
})

/** A loopback server answering every request with `answer`. */
async function loopback(answer: (request: IncomingMessage, response: ServerResponse) => void) {
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => answer(request, response))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${port}`, port }
}

/** A port on loopback that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

async function newApi(s: TestServer, name: string): Promise<string> {
  return json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name } })).data.id
}

const connect = (s: TestServer, api: string, url: string) =>
  s.call({ method: 'PUT', url: `/v1/apis/${api}/repository`, payload: { provider: 'gitlab', url, branch: 'main', path: 'openapi.yaml' } })

t.test('by default, internal addresses and names are refused when configured, 400 naming the field; public ones are stored', async (t) => {
  const s = await startTestServer()
  t.teardown(() => s.close())
  const api = await createApi(s)
  const sdk = await createSdk(s, [api], ['php'])
  const refused = (response: { statusCode: number; body: string }, field: string) => {
    const body = JSON.parse(response.body)
    return { status: response.statusCode, code: body.code, field: body.errors?.[0]?.path?.[0], names: body.detail?.startsWith(`${field}: `) }
  }
  for (const url of INTERNAL) {
    const expected = (field: string) => ({ status: 400, code: 'invalid_request', field, names: true })
    t.same(refused(await connect(s, api, url), 'url'), expected('url'), `repository sync: ${url}`)
    const output = await s.call({ method: 'PUT', url: `/v1/sdks/${sdk.id}/targets/php/repository`, payload: { provider: 'git', url } })
    t.same(refused(output, 'url'), expected('url'), `output repository: ${url}`)
    const apiUrl = await s.call({
      method: 'PUT', url: `/v1/sdks/${sdk.id}/targets/php/repository`,
      payload: { provider: 'gitlab', url: 'https://gitlab.example.com/acme/pets.git', api_url: url.replace(/\/[^/]*\.git$/, '/api/v4'), token: 'glpat-x' },
    })
    t.same(refused(apiUrl, 'api_url'), expected('api_url'), `api_url: ${url}`)
    t.same(refused(await s.call({ method: 'PUT', url: '/v1/mirror', payload: { url } }), 'url'), expected('url'), `push mirror: ${url}`)
  }
  t.equal((await s.call({ method: 'GET', url: `/v1/apis/${api}/repository` })).statusCode, 404, 'no connection stored')
  t.equal((await s.call({ method: 'GET', url: `/v1/sdks/${sdk.id}/targets/php/repository` })).statusCode, 404, 'no output repository stored')
  t.match(json(await s.call({ method: 'GET', url: '/v1/mirror' })).data, { url: null }, 'no remote stored')

  t.equal((await connect(s, api, 'https://gitlab.com/acme/pets.git')).statusCode, 201, 'a public host is allowed')
  const github = await s.call({ method: 'PUT', url: `/v1/sdks/${sdk.id}/targets/php/repository`, payload: { provider: 'github', url: 'https://github.com/acme/pets.git', token: 'ghp_x' } })
  t.equal(github.statusCode, 201, github.body)
  t.equal((await s.call({ method: 'PUT', url: '/v1/mirror', payload: { url: 'https://github.com/acme/mirror.git' } })).statusCode, 200)
})

t.test('a host name that resolves to an internal address is refused when connecting, though the name was allowed', async (t) => {
  // `localhost` is listed (so configuring it passes); what it resolves to (127.0.0.1, ::1) is not.
  const s = await startTestServer({ outboundHosts: ['localhost'] })
  t.teardown(() => s.close())
  const seen = gitServer.requests.length

  const api = await newApi(s, 'Resolved')
  t.equal((await connect(s, api, `http://localhost:${gitPort}/specs.git`)).statusCode, 201, 'the name is allowed')
  const synced = await s.call({ method: 'POST', url: `/v1/apis/${api}/sync` })
  t.equal(synced.statusCode, 502)
  t.same(json(synced).detail, `the repository could not be fetched: ${REFUSED}`)
  t.match(json(await s.call({ method: 'GET', url: `/v1/apis/${api}/repository` })).data.last_sync, { status: 'failed', error: { detail: `the repository could not be fetched: ${REFUSED}` } })

  const sdkApi = await createApi(s)
  const sdk = await createSdk(s, [sdkApi], ['php'])
  const url = `http://localhost:${gitPort}/pets-php.git`
  t.equal((await s.call({ method: 'PUT', url: `/v1/sdks/${sdk.id}/targets/php/repository`, payload: { provider: 'git', url } })).statusCode, 201)
  const [build] = json(await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })).data
  const done = await waitForBuild(s, build.id)
  t.match(done, { status: 'failed', error: `could not deliver to ${url}: ${REFUSED}` })
  t.equal(gitServer.requests.length, seen, 'the git server behind the name was never contacted')
  t.match(s.serverLog, [{ reason: /'localhost' resolved to .*127\.0\.0\.1.*refuses/ }], "the operator's log says why")
})

t.test('the push mirror is refused when connecting to a name that resolves to an internal address', async (t) => {
  const s = await startMirrorServer({ outboundHosts: ['localhost'] })
  t.teardown(() => s.close())
  const api = await s.createApi('Petstore')
  await s.upload(api.id, petstore('1.0.0'))
  await s.settle()
  const seen = gitServer.requests.length
  const url = `http://localhost:${gitPort}/acme-mirror.git`
  t.equal((await s.call({ method: 'PUT', url: '/v1/mirror', payload: { url } })).statusCode, 200)
  await s.settle()
  t.match(json(await s.call({ method: 'GET', url: '/v1/mirror' })).data, { last_pushed_commit: null, last_error: `could not push to ${url}: ${REFUSED}` })
  t.equal(gitServer.requests.length, seen, 'the git server was never contacted')
})

t.test('a redirect to an internal address is not followed', async (t) => {
  const s = await startTestServer({ outboundHosts: OUTBOUND_LOOPBACK })
  t.teardown(() => s.close())
  for (const target of [`http://127.0.0.2:${gitPort}`, 'http://169.254.169.254', `http://localhost:${gitPort}`, 'http://[::ffff:10.0.0.1]', 'http://10.0.0.1']) {
    const redirector = await loopback((request, response) => response.writeHead(302, { location: `${target}${request.url}` }).end())
    const api = await newApi(s, `Redirected to ${target}`)
    t.equal((await connect(s, api, `${redirector.url}/specs.git`)).statusCode, 201)
    const seen = gitServer.requests.length
    const synced = await s.call({ method: 'POST', url: `/v1/apis/${api}/sync` })
    t.equal(synced.statusCode, 502, target)
    t.equal(json(synced).detail, `the repository could not be fetched: ${REFUSED}`, `${target} (logged: ${String(s.serverLog.at(-1)?.reason)})`)
    t.equal(gitServer.requests.length, seen, `${target}: not followed`)
  }
})

t.test('an operator opts in to internal hosts by listing them', async (t) => {
  for (const outboundHosts of [OUTBOUND_LOOPBACK, ['127.0.0.0/8'], ['localhost', '127.0.0.1', '::1']]) {
    const s = await startTestServer({ outboundHosts })
    t.teardown(() => s.close())
    const api = await newApi(s, 'Opted in')
    const host = outboundHosts.includes('localhost') ? 'localhost' : '127.0.0.1'
    t.equal((await connect(s, api, repo.url.replace('127.0.0.1', host))).statusCode, 201)
    const synced = await s.call({ method: 'POST', url: `/v1/apis/${api}/sync` })
    t.equal(synced.statusCode, 201, `${outboundHosts.join(',')}: ${synced.body}`)
  }
})

t.test('what a key holder is told of a failed connection says nothing of ports, statuses or protocols', async (t) => {
  const s = await startTestServer({ outboundHosts: OUTBOUND_LOOPBACK })
  t.teardown(() => s.close())
  const closed = `http://127.0.0.1:${await closedPort()}`
  const failing = await loopback((_, response) => response.writeHead(500, { 'content-type': 'text/plain' }).end('internal error at db-7:5432'))
  const login = await loopback((_, response) => response.writeHead(401, { 'www-authenticate': 'Basic realm="admin console"' }).end('login required'))
  const notGit = await loopback((_, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Jenkins</h1>'))
  const targets = {
    'a closed port': `${closed}/x.git`,
    'an HTTP 500': `${failing.url}/x.git`,
    'an HTTP 401': `${login.url}/x.git`,
    'a web page, not git': `${notGit.url}/x.git`,
    'a git repository without the branch': `${gitServer.url}/pets-php.git`,
  }
  const told = new Set<string>()
  for (const [what, url] of Object.entries(targets)) {
    const api = await newApi(s, what)
    await s.call({ method: 'PUT', url: `/v1/apis/${api}/repository`, payload: { provider: 'github', url, branch: 'no-such-branch', path: 'openapi.yaml' } })
    const synced = await s.call({ method: 'POST', url: `/v1/apis/${api}/sync` })
    t.equal(synced.statusCode, 502, what)
    told.add(json(synced).detail)
    told.add(json(await s.call({ method: 'GET', url: `/v1/apis/${api}/repository` })).data.last_sync.error.detail)
  }
  t.same([...told], ["the repository could not be fetched: unreachable (the server's log says why)"], 'one answer for every kind of failure')
  const reasons = s.serverLog.map((line) => String(line.reason)).join('\n')
  for (const reason of [/ECONNREFUSED/, /HTTP 500/, /HTTP 401/, /not answer as a git repository/, /branch 'no-such-branch'/]) {
    t.match(reasons, reason, "the operator's log says why")
  }

  // SDK delivery: the git remote, and the provider's REST API (api_url), which answers with a status and a body.
  const api = await createApi(s)
  const sdk = await createSdk(s, [api], ['php'])
  const provider = await loopback((_, response) => response.writeHead(422, { 'content-type': 'application/json' }).end('{"message":"Validation Failed: internal-only field"}'))
  const builds: [string, Record<string, unknown>, string][] = [
    ['a closed port', { provider: 'git', url: `${closed}/x.git` }, `could not deliver to ${closed}/x.git`],
    ['an HTTP 500', { provider: 'git', url: `${failing.url}/x.git` }, `could not deliver to ${failing.url}/x.git`],
    ['a provider API answering 422', { provider: 'gitlab', url: `${gitServer.url}/pets-php.git`, api_url: provider.url, token: 'glpat-x' }, `could not open the pull request through ${provider.url}`],
  ]
  for (const [what, repository, step] of builds) {
    t.equal((await s.call({ method: 'PUT', url: `/v1/sdks/${sdk.id}/targets/php/repository`, payload: repository })).statusCode < 300, true)
    const [build] = json(await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })).data
    const done = await waitForBuild(s, build.id)
    t.match(done, { status: 'failed', error: `${step}: unreachable (the server's log says why)` }, what)
    const log = (await s.call({ method: 'GET', url: `/v1/builds/${build.id}/logs` })).body
    t.notMatch(log, /HTTP|ECONNREFUSED|answered|Validation|db-7|git repository|pushed|fetching/, `${what}: the build's log tells no more`)
  }
  t.match(s.serverLog.map((line) => String(line.reason)).join('\n'), /answered 422 .*Validation Failed/, "the provider's answer is in the operator's log")
})

t.test("the push mirror's error says nothing of ports or statuses either", async (t) => {
  const failing = await loopback((_, response) => response.writeHead(500).end('internal error at db-7:5432'))
  const closed = `http://127.0.0.1:${await closedPort()}`
  for (const url of [`${closed}/m.git`, `${failing.url}/m.git`]) {
    const s = await startMirrorServer({ outboundHosts: OUTBOUND_LOOPBACK })
    t.teardown(() => s.close())
    const api = await s.createApi('Petstore')
    await s.upload(api.id, petstore('1.0.0'))
    await s.settle()
    await s.call({ method: 'PUT', url: '/v1/mirror', payload: { url } })
    await s.settle()
    t.match(json(await s.call({ method: 'GET', url: '/v1/mirror' })).data, { last_error: `could not push to ${url}: unreachable (the server's log says why)` }, url)
  }
})
