/**
 * Console sign-in and key roles (issue 17, items 3 and 4): a key exchanged for a session cookie, the
 * CSRF header on every change made with it, sign-out, expiry and revocation; read, write and admin
 * keys, and /v1/keys for admins.
 */
import t from 'tap'
import { hashKey } from '../../src/domain/accounts/keys.js'
import { json, petstore, startTestServer, type TestServer } from '../helpers.js'

const COOKIE = /^registry_session=([A-Za-z0-9_-]{43}); Path=\/v1; Max-Age=43200; HttpOnly; SameSite=Strict$/

async function signIn(s: TestServer, apiKey = s.key) {
  const response = await s.call({ method: 'POST', url: '/v1/session', key: null, payload: { api_key: apiKey } })
  const setCookie = String(response.headers['set-cookie'] ?? '')
  const id = COOKIE.exec(setCookie)?.[1]
  return { response, id, cookie: `registry_session=${id}`, body: response.statusCode === 201 ? json(response).data : undefined }
}

/** A request the way the console's page sends it: the cookie, and the CSRF header when given. */
function withSession(s: TestServer, cookie: string, csrf?: string) {
  return (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: unknown) => s.call({
    method, url, key: null, payload: payload as never,
    headers: { cookie, ...(csrf === undefined ? {} : { 'x-registry-csrf': csrf }) },
  })
}

async function createKey(s: TestServer, role: string, name = `${role} key`) {
  const response = await s.call({ method: 'POST', url: '/v1/keys', payload: { name, role } })
  return json(response).data
}

t.test('a key is exchanged for an HttpOnly, SameSite=Strict session cookie; Bearer keys work unchanged', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const { response, id, cookie, body } = await signIn(s)
  t.equal(response.statusCode, 201)
  t.ok(id, `Set-Cookie: ${response.headers['set-cookie']}`)
  t.equal(response.headers['cache-control'], 'no-store')
  t.match(body, { organization: { slug: 'acme', name: 'Acme' }, key: { name: 'first key', role: 'admin' }, csrf_token: /^[0-9a-f]{64}$/, expires_at: /Z$/ })
  t.notMatch(response.body, new RegExp(id!), 'the session id is only in the cookie')
  t.notMatch(response.body, /sk_/, 'and the key is not echoed')

  const session = withSession(s, cookie)
  const me = await session('GET', '/v1/session')
  t.equal(me.statusCode, 200)
  t.equal(json(me).data.csrf_token, body.csrf_token, 'a reloaded page gets the CSRF token again')
  t.equal((await session('GET', '/v1/apis')).statusCode, 200, 'reads need only the cookie')

  const bearer = await s.call({ method: 'GET', url: '/v1/session' })
  t.match(json(bearer).data, { key: { role: 'admin' }, csrf_token: null, expires_at: null }, 'GET /v1/session answers a Bearer key too')
  t.equal((await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Bearer needs no CSRF header' } })).statusCode, 201)

  const stored = await s.registry.storage.read.sessions.get(hashKey(id!))
  t.ok(stored, 'the session is stored under the hash of its id')
  t.equal(await s.registry.storage.read.sessions.get(id!), undefined, 'never under the id itself')
})

t.test('changes made with a session need its CSRF token in X-Registry-CSRF', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const { cookie, body } = await signIn(s)
  for (const [label, csrf] of [['no header', undefined], ['a wrong token', 'f'.repeat(64)], ['a short token', 'abc']] as const) {
    const refused = await withSession(s, cookie, csrf)('POST', '/v1/apis', { name: 'Forged' })
    t.equal(refused.statusCode, 403, label)
    t.equal(json(refused).code, 'forbidden')
    t.match(json(refused).detail, 'x-registry-csrf')
  }
  t.equal(json(await s.call({ method: 'GET', url: '/v1/apis' })).total, 0, 'nothing was created')
  const created = await withSession(s, cookie, body.csrf_token)('POST', '/v1/apis', { name: 'Petstore' })
  t.equal(created.statusCode, 201, 'with the token it goes through')
  const upload = await withSession(s, cookie, body.csrf_token)('POST', `/v1/apis/${json(created).data.id}/spec`, { document: petstore() })
  t.equal(upload.statusCode, 201)

  const other = await signIn(s)
  t.equal((await withSession(s, cookie, other.body.csrf_token)('POST', '/v1/apis', { name: 'Another session’s token' })).statusCode, 403,
    "one session's token does not work with another's cookie")
})

t.test('sign-in refuses bad keys with 401 and bad bodies with 400; a forged cookie is 401', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  for (const apiKey of ['sk_' + 'x'.repeat(43), 'not a key', `${s.key} trailing`]) {
    const { response } = await signIn(s, apiKey)
    t.equal(response.statusCode, 401, apiKey)
    t.equal(json(response).code, 'unauthorized')
    t.equal(response.headers['set-cookie'], undefined, 'no cookie')
  }
  t.equal((await s.call({ method: 'POST', url: '/v1/session', key: null, payload: { key: s.key } })).statusCode, 400)
  t.equal((await s.call({
    method: 'POST', url: '/v1/session', key: null, payload: `api_key=${s.key}`, headers: { 'content-type': 'application/x-www-form-urlencoded' },
  })).statusCode, 415, 'a cross-site form cannot sign anyone in')
  for (const forged of ['x'.repeat(43), 'short', '']) {
    const response = await s.call({ method: 'GET', url: '/v1/apis', key: null, headers: { cookie: `other=1; registry_session=${forged}` } })
    t.equal(response.statusCode, 401, `cookie ${JSON.stringify(forged)}`)
  }
  t.equal((await s.call({ method: 'GET', url: '/v1/apis', key: null })).statusCode, 401, 'no key and no cookie')
})

t.test('sign-out ends the session everywhere; expiry and a revoked key end it too', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const { id, cookie, body } = await signIn(s)
  const out = await withSession(s, cookie, body.csrf_token)('DELETE', '/v1/session')
  t.equal(out.statusCode, 204)
  t.match(String(out.headers['set-cookie']), /^registry_session=; Path=\/v1; Max-Age=0; HttpOnly; SameSite=Strict$/, 'the cookie is cleared')
  t.equal((await withSession(s, cookie)('GET', '/v1/apis')).statusCode, 401, 'the old cookie no longer works')
  t.equal(await s.registry.storage.read.sessions.get(hashKey(id!)), undefined, 'nothing of it is stored')

  const expiring = await signIn(s)
  const { storage } = s.registry
  const record = (await storage.read.sessions.get(hashKey(expiring.id!)))!
  await storage.transaction((tx) => tx.sessions.put(hashKey(expiring.id!), { ...record, expires_at: new Date(Date.now() - 1000).toISOString() }))
  const expired = await withSession(s, expiring.cookie)('GET', '/v1/apis')
  t.equal(expired.statusCode, 401, 'an expired session is refused')
  t.match(json(expired).detail, 'sign in again')
  await signIn(s)
  t.equal(await storage.read.sessions.get(hashKey(expiring.id!)), undefined, 'the next sign-in sweeps expired sessions away')

  const reader = await createKey(s, 'read')
  const readerSession = await signIn(s, reader.api_key)
  t.equal((await withSession(s, readerSession.cookie)('GET', '/v1/apis')).statusCode, 200)
  t.equal((await s.call({ method: 'DELETE', url: `/v1/keys/${reader.id}` })).statusCode, 204)
  t.equal((await withSession(s, readerSession.cookie)('GET', '/v1/apis')).statusCode, 401, "revoking the key ends its sessions")
})

t.test('roles: read keys only read, write keys do all but keys and organization settings, admin all', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Petstore' } })).data
  const reader = await createKey(s, 'read')
  const writer = await createKey(s, 'write')
  t.match(reader, { role: 'read', api_key: /^sk_/, name: 'read key', revoked_at: null })

  const as = (key: string) => (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
    s.call({ method, url, key, payload: payload as never })
  const read = as(reader.api_key)
  const write = as(writer.api_key)

  t.equal((await read('GET', '/v1/apis')).statusCode, 200)
  t.equal((await read('GET', `/v1/apis/${api.id}`)).statusCode, 200)
  t.equal((await read('GET', '/v1/mirror')).statusCode, 200)
  for (const [method, url, payload] of [
    ['POST', '/v1/apis', { name: 'No' }], ['PATCH', `/v1/apis/${api.id}`, { description: 'no' }],
    ['POST', `/v1/apis/${api.id}/spec`, { document: petstore() }], ['DELETE', `/v1/apis/${api.id}`],
    ['POST', '/v1/sites', { name: 'No' }], ['GET', '/v1/keys'],
  ] as const) {
    const response = await read(method, url, payload)
    t.equal(response.statusCode, 403, `read: ${method} ${url}`)
    t.equal(json(response).code, 'forbidden')
  }
  t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}` })).data.description, null, 'nothing changed')

  t.equal((await write('POST', `/v1/apis/${api.id}/spec`, { document: petstore() })).statusCode, 201, 'write: uploads')
  t.equal((await write('PATCH', `/v1/apis/${api.id}`, { description: 'by the write key' })).statusCode, 200)
  for (const [method, url, payload] of [
    ['GET', '/v1/keys'], ['POST', '/v1/keys', { role: 'admin' }], ['DELETE', `/v1/keys/${reader.id}`],
    ['PUT', '/v1/mirror', { url: 'https://git.example.com/acme.git' }], ['DELETE', '/v1/mirror'],
  ] as const) {
    const response = await write(method, url, payload)
    t.equal(response.statusCode, 403, `write: ${method} ${url}`)
    t.match(json(response).detail, 'admin key')
  }
  t.equal(json(await s.call({ method: 'GET', url: '/v1/keys' })).total, 3, 'the write key created no key')
})

t.test('/v1/keys: admins list, create (secret shown once) and revoke keys of their organization', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const created = await s.call({ method: 'POST', url: '/v1/keys', payload: { name: 'CI', role: 'write' } })
  t.equal(created.statusCode, 201)
  t.equal(created.headers['cache-control'], 'no-store')
  const issued = json(created).data
  t.match(issued, { id: /^[0-9A-Z]{26}$/, name: 'CI', role: 'write', api_key: /^sk_[A-Za-z0-9_-]{43}$/, last_used_at: null, revoked_at: null })
  t.equal((await s.call({ method: 'GET', url: '/v1/apis', key: issued.api_key })).statusCode, 200, 'the new key works')

  const list = await s.call({ method: 'GET', url: '/v1/keys' })
  t.equal(json(list).total, 2)
  t.same(json(list).data.map((k: { name: string; role: string }) => [k.name, k.role]), [['CI', 'write'], ['first key', 'admin']], 'newest first, with roles')
  t.notMatch(list.body, /sk_|hash/, 'never a secret or a hash')
  t.equal(json(await s.call({ method: 'GET', url: `/v1/keys/${issued.id}` })).data.name, 'CI')
  t.equal((await s.call({ method: 'POST', url: '/v1/keys', payload: { name: 'x', role: 'owner' } })).statusCode, 400)
  t.equal((await s.call({ method: 'POST', url: '/v1/keys', payload: { name: 'x' } })).statusCode, 400, 'the role is required')

  t.equal((await s.call({ method: 'DELETE', url: `/v1/keys/${issued.id}` })).statusCode, 204)
  t.equal((await s.call({ method: 'GET', url: '/v1/apis', key: issued.api_key })).statusCode, 401, 'revoked: 401 at once')
  t.match(json(await s.call({ method: 'GET', url: `/v1/keys/${issued.id}` })).data, { revoked_at: /Z$/ })

  const first = json(list).data[1]
  const last = await s.call({ method: 'DELETE', url: `/v1/keys/${first.id}` })
  t.equal(last.statusCode, 409, "the organization's last admin key cannot be revoked")
  t.match(json(last).detail, 'last admin key')
  const second = await createKey(s, 'admin')
  t.equal((await s.call({ method: 'DELETE', url: `/v1/keys/${first.id}`, key: second.api_key })).statusCode, 204, 'with another admin key it can')

  const other = await s.registry.organizations.create('globex')
  t.equal((await s.call({ method: 'GET', url: `/v1/keys/${other.key.id}`, key: second.api_key })).statusCode, 404, "another organization's key is not found")
  t.equal((await s.call({ method: 'DELETE', url: `/v1/keys/${other.key.id}`, key: second.api_key })).statusCode, 404)
  t.equal((await s.call({ method: 'GET', url: '/v1/apis', key: other.secret })).statusCode, 200, 'and stays valid')
})

t.test('the session and key routes are in /openapi.json', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const spec = json(await s.call({ method: 'GET', url: '/openapi.json', key: null }))
  t.ok(spec.paths['/v1/session'].post && spec.paths['/v1/session'].get && spec.paths['/v1/session'].delete)
  t.ok(spec.paths['/v1/keys'].get && spec.paths['/v1/keys'].post && spec.paths['/v1/keys/{key}'].delete)
  t.match(spec.components.securitySchemes.session, { type: 'apiKey', in: 'cookie', name: 'registry_session' })
  t.ok(spec.paths['/v1/keys'].post.responses['201'].content['application/json'].schema.properties.data.properties.api_key)
})
