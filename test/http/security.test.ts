/**
 * Security review of the HTTP surface, as tests. Covered elsewhere and not repeated here:
 * - every /v1 route answers another organization's id exactly as a missing id (same 404 status and
 *   body): test/http/resources.test.ts, 'organization isolation on every route';
 * - bad input (alias bombs, deep nesting, __proto__, invalid UTF-8, custom ruleset functions, external
 *   $refs never fetched, rate limiting): test/http/bad-input.test.ts;
 * - logs never hold keys or tokens: test/process/logging.test.ts.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import t from 'tap'
import { listImportFiles } from '../../src/cli/import.js'
import { FsBlobStore } from '../../src/storage/lmdb/fs-blob-store.js'
import { json, petstore, startTestServer, tempDir, type TestServer } from '../helpers.js'

type Response = { statusCode: number; headers: Record<string, unknown>; body: string }

function expectProblem(t: any, res: Response, status: number, code?: string) {
  t.equal(res.statusCode, status, `${status}: ${res.body.slice(0, 200)}`)
  t.match(String(res.headers['content-type']), /^application\/problem\+json/)
  const body = JSON.parse(res.body)
  t.equal(body.status, status)
  if (code) t.equal(body.code, code)
  return body
}

/** Sends raw bytes to a listening server and answers everything it sends back before closing. */
function rawRequest(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request))
    let received = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => { received += chunk })
    socket.on('close', () => resolve(received))
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? resolve(received) : reject(error)))
  })
}

t.test('keys: missing, malformed, unknown and revoked keys get the identical 401', async (t) => {
  // Timing: a key is never compared with a stored secret. The server hashes what it is sent (SHA-256)
  // and looks the hash up in LMDB (src/domain/accounts/organizations.ts authenticate, src/domain/accounts/keys.ts), so
  // no comparison whose time depends on how much of a secret matches ever runs. The one secret that is
  // compared, REGISTRY_METRICS_TOKEN, is compared as digests with crypto.timingSafeEqual.
  // What a client can observe is asserted here: every failure is the same answer, byte for byte.
  const s = await startTestServer()
  t.teardown(s.close)
  const issued = await s.registry.organizations.createKey('acme', 'to revoke')
  await s.registry.organizations.revokeKey(issued.key.id)
  const nearMiss = s.key.slice(0, -1) + (s.key.endsWith('A') ? 'B' : 'A')
  const attempts: (string | undefined)[] = [
    undefined, '', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', `bearer ${'x'.repeat(10)}`, 'Bearer sk_short',
    `Bearer sk_${'x'.repeat(300)}`, `Bearer ${nearMiss}`, `Bearer ${issued.secret}`, `Bearer ${s.key} extra`, `Token ${s.key}`,
  ]
  const answers = new Set<string>()
  for (const authorization of attempts) {
    for (const url of ['/v1/apis', `/v1/apis/01J00000000000000000000000`]) {
      const res = await s.call({ method: 'GET', url, key: null, headers: authorization === undefined ? {} : { authorization } })
      expectProblem(t, res, 401, 'unauthorized')
      t.equal(res.headers['www-authenticate'], 'Bearer')
      answers.add(res.body)
    }
  }
  t.equal(answers.size, 1, 'one body for every failure: nothing tells a near miss from garbage')
  t.equal((await s.call({ method: 'GET', url: '/v1/apis' })).statusCode, 200, 'the right key works')
  t.equal((await s.call({ method: 'GET', url: '/v1/apis', key: null, headers: { authorization: `bearer   ${s.key}` } })).statusCode, 200,
    'the scheme is case-insensitive (RFC 7235)')
})

t.test('the public registry answers a private, a foreign and a missing resource with the same 404', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const other = await s.registry.organizations.create('other')
  for (const [plural, payload] of [['apis', {}], ['schemas', { document: { type: 'object' } }], ['rulesets', {}]] as const) {
    await s.call({ method: 'POST', url: `/v1/${plural}`, payload: { name: 'hidden', ...payload } })
    await s.call({ method: 'POST', url: `/v1/${plural}`, payload: { name: 'shown', visibility: 'public', ...payload } })
    const answers = new Set<string>()
    for (const [url, key] of [
      [`/@acme/${plural}/hidden`, null], [`/@acme/${plural}/hidden`, other.secret], [`/@acme/${plural}/missing`, null],
      [`/@acme/${plural}/missing`, other.secret], [`/@acme/${plural}/hidden/latest`, null], [`/@acme/${plural}/missing/latest`, null],
      [`/@acme/${plural}/hidden/versions`, other.secret], [`/@acme/${plural}/missing/versions`, other.secret],
      [`/@acme/${plural}/hidden/versions/1`, null], [`/@acme/${plural}/missing/versions/1`, null],
    ] as [string, string | null][]) {
      const res = await s.call({ method: 'GET', url, key })
      expectProblem(t, res, 404, 'not_found')
      answers.add(res.body)
    }
    t.equal(answers.size, 1, `${plural}: one 404 body for private, foreign-key and missing`)
    t.equal((await s.call({ method: 'GET', url: `/@acme/${plural}/hidden` })).statusCode, 200, 'the owner sees its private resource')
    const listed = (key: string | null) => s.call({ method: 'GET', url: `/@acme/${plural}`, key }).then(json)
    t.same((await listed(null)).data.map((r: { slug: string }) => r.slug), ['shown'])
    t.same(await listed(other.secret), await listed(null), "another organization's key sees what anyone sees")
  }
})

t.test('no path traversal through slugs, ids, organization names or static files', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'pets', visibility: 'public' } })
  const hostile = [
    '/@acme/apis/..%2f..%2f..%2fetc%2fpasswd', '/@acme/apis/..%2f..%2fetc%2fpasswd/latest', '/@acme/apis/%2e%2e/latest',
    '/@..%2f..%2fetc/apis/x', '/@..%2f..%2fetc/apis', '/@acme/apis/pets/versions/..%2f..%2f1',
    '/@acme%2f..%2f..%2fetc/apis/pets/latest', '/v1/apis/..%2f..%2fetc%2fpasswd/spec', '/v1/apis/%2e%2e%2f%2e%2e/versions',
    '/v1/apis/..\\..\\windows/spec', '/@acme/apis/pets%00/latest', '/@acme/apis/pets/../../../etc/passwd',
    '/docs/static/..%2f..%2f..%2f..%2fpackage.json', '/docs/..%2f..%2fpackage.json', '/docs/static/%2e%2e/%2e%2e/%2e%2e/package.json',
  ]
  for (const url of hostile) {
    const res = await s.call({ method: 'GET', url })
    t.ok(res.statusCode >= 400 && res.statusCode < 500, `${url}: ${res.statusCode}`)
    t.notMatch(res.body, /root:|"name":\s*"api-registry"|"dependencies"/, `${url}: no file contents`)
  }
  for (const slug of ['../x', '..', 'a/b', 'a%2fb', '.hidden', 'A', 'x'.repeat(65)]) {
    expectProblem(t, await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'n', slug } }), 400, 'invalid_request')
  }
  const derived = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: '../../etc/passwd' } })).data
  t.equal(derived.slug, 'etc-passwd', 'a slug derived from a hostile name is only [a-z0-9-]')

  // Blob file names come from hex digests only; anything else is refused before a path is built.
  const store = new FsBlobStore(s.storage)
  for (const ref of [
    { checksum: 'sha256:../../../etc/passwd', digest: 'a'.repeat(64), format: 'json' as const },
    { checksum: `sha256:${'a'.repeat(64)}`, digest: '../../x', format: 'json' as const },
  ]) t.throws(() => store.pathOf(ref), /not a blob reference/)
})

t.test('registry import does not follow symbolic links out of the folder', async (t) => {
  const root = tempDir()
  const outside = tempDir()
  t.teardown(() => { rmSync(root, { recursive: true, force: true }); rmSync(outside, { recursive: true, force: true }) })
  writeFileSync(join(outside, 'secret.yaml'), 'openapi: 3.1.0\ninfo: {title: secret, version: "1"}\npaths: {}\n')
  mkdirSync(join(outside, 'dir'))
  writeFileSync(join(outside, 'dir', 'other.json'), JSON.stringify(petstore()))
  mkdirSync(join(root, 'apis'))
  writeFileSync(join(root, 'apis', 'pets.json'), JSON.stringify(petstore()))
  symlinkSync(join(outside, 'secret.yaml'), join(root, 'apis', 'linked.yaml'))
  symlinkSync(join(outside, 'dir'), join(root, 'linked-dir'))
  symlinkSync('/etc/passwd', join(root, 'passwd.yaml'))
  t.same((await listImportFiles(root)).map((f) => f.slice(root.length + 1)), ['apis/pets.json'],
    'only the regular file inside the folder; symbolic links to files and folders are skipped')
})

t.test('headers that fit an API on every kind of answer', async (t) => {
  const s = await startTestServer({ config: { bodyLimit: 64 * 1024 } })
  t.teardown(s.close)
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'pets', visibility: 'public' } })).data
  const v1 = json(await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore() } })).data
  const cases: [string, () => Promise<Response>, number][] = [
    ['list', () => s.call({ method: 'GET', url: '/v1/apis' }), 200],
    ['document', () => s.call({ method: 'GET', url: `/v1/apis/${api.id}/spec?format=yaml` }), 200],
    ['not modified', () => s.call({ method: 'GET', url: `/v1/apis/${api.id}/spec`, headers: { 'if-none-match': `"${v1.checksum}"` } }), 304],
    ['public', () => s.call({ method: 'GET', url: '/@acme/apis/pets/latest', key: null }), 200],
    ['created', () => s.call({ method: 'POST', url: '/v1/schemas', payload: { name: 'x' } }), 201],
    ['unauthorized', () => s.call({ method: 'GET', url: '/v1/apis', key: 'sk_nope' }), 401],
    ['not found', () => s.call({ method: 'GET', url: '/nothing/here' }), 404],
    ['bad request', () => s.call({ method: 'GET', url: '/v1/apis?limit=1000' }), 400],
    ['too large', () => s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'x', description: 'd'.repeat(100_000) } }), 413],
    ['media type', () => s.call({ method: 'POST', url: '/v1/apis', payload: 'x', headers: { 'content-type': 'text/plain' } }), 415],
    ['health', () => s.call({ method: 'GET', url: '/healthz', key: null }), 200],
    ['metrics', () => s.call({ method: 'GET', url: '/metrics', key: null }), 200],
    ['reference page', () => s.call({ method: 'GET', url: '/docs/', key: null }), 200],
  ]
  for (const [what, request, status] of cases) {
    const res = await request()
    t.equal(res.statusCode, status, what)
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${what}: nosniff`)
    t.equal(res.headers['x-powered-by'], undefined, `${what}: no x-powered-by`)
    t.equal(res.headers.server, undefined, `${what}: no server banner`)
    if (status >= 400) t.match(String(res.headers['content-type']), /^application\/problem\+json/, `${what}: problem+json`)
    else if (status !== 304) t.ok(res.headers['content-type'], `${what}: a content type`)
  }
})

t.test('bounded request and query sizes: every refusal is a clean 4xx', async (t) => {
  const s: TestServer = await startTestServer({ config: { bodyLimit: 64 * 1024 } })
  t.teardown(s.close)
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (s.app.server.address() as { port: number }).port
  const base = `http://127.0.0.1:${port}`
  const auth = { authorization: `Bearer ${s.key}` }

  // Request line and headers are limited by Node (16 KB): answered in problem+json, then closed.
  for (const request of [
    `GET /v1/apis?page=1&x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    `GET /v1/apis HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
  ]) {
    const answer = await rawRequest(port, request)
    t.match(answer, /^HTTP\/1\.1 431 /, 'headers over the limit: 431')
    t.match(answer, /content-type: application\/problem\+json/i)
    t.match(answer, /"code":"headers_too_large"/)
  }
  const manyHeaders = await rawRequest(port,
    `GET /v1/apis HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${Array.from({ length: 3000 }, (_, i) => `X-${i}: v`).join('\r\n')}\r\n\r\n`)
  t.match(manyHeaders, /^HTTP\/1\.1 4\d\d /, 'thousands of small headers: a clean 4xx (Node keeps the first 2000)')
  const garbage = await rawRequest(port, 'NOT HTTP AT ALL\r\n\r\n')
  t.match(garbage, /^HTTP\/1\.1 400 /, 'a request that is not HTTP: 400')
  t.match(garbage, /"code":"invalid_request"/)

  // Within the header limit: the query is parsed and checked like any other.
  const longQuery = await fetch(`${base}/v1/apis?${Array.from({ length: 1500 }, () => 'page=1').join('&')}`, { headers: auth })
  t.ok([200, 400].includes(longQuery.status), `1500 query parameters: ${longQuery.status}`)
  const longParam = await fetch(`${base}/v1/apis/${'A'.repeat(300)}`, { headers: auth })
  t.ok(longParam.status === 400 || longParam.status === 404, `a 300-character path parameter: ${longParam.status}`)
  t.match(longParam.headers.get('content-type'), /^application\/problem\+json/)
  const longSlug = await fetch(`${base}/@acme/apis/${'a'.repeat(5000)}/latest`)
  t.ok(longSlug.status >= 400 && longSlug.status < 500, `a 5000-character slug: ${longSlug.status}`)

  // Bodies: the limit holds for every route, with or without a length announced up front.
  const big = JSON.stringify({ name: 'x', description: 'd'.repeat(100_000) })
  const announced = await fetch(`${base}/v1/apis`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: big })
  t.equal(announced.status, 413)
  t.equal(((await announced.json()) as { code: string }).code, 'payload_too_large')
  const streamed = await fetch(`${base}/v1/apis`, {
    method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, duplex: 'half',
    body: new ReadableStream({ start(controller) { for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(8192))); controller.close() } }),
  } as RequestInit)
  t.equal(streamed.status, 413, 'a chunked body over the limit is cut off at the limit')
  const name = await fetch(`${base}/v1/apis`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'n'.repeat(10_000) }) })
  t.equal(name.status, 400, 'field lengths are bounded by the schemas')
  t.equal((await fetch(`${base}/healthz`)).status, 200, 'the server still serves')
})
