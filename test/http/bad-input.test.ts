import { createServer, type Server } from 'node:net'
import t from 'tap'
import { json, petstore, startTestServer, type TestServer } from '../helpers.js'
import { allVersions } from '../support/stored.js'

type Setup = { s: TestServer; apiId: string }

async function setup(t: { teardown(fn: () => unknown): void }, config = {}): Promise<Setup> {
  const s = await startTestServer({ config })
  t.teardown(s.close)
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'target' } })).data
  return { s, apiId: api.id }
}

/** Nothing was stored and the server still answers the next request. */
async function assertNothingStoredAndServing(t: any, { s, apiId }: Setup, apis = 1) {
  const list = await s.call({ method: 'GET', url: '/v1/apis' })
  t.equal(list.statusCode, 200, 'the server still serves')
  t.equal(json(list).total, apis, 'no API was created')
  t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${apiId}/versions` })).total, 0, 'no version was stored')
  t.equal((await allVersions(s.registry.storage.read)).filter((v) => v.kind === 'api').length, 0, 'the index holds no API version')
}

function expectProblem(t: any, res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, code: string) {
  t.equal(res.statusCode, status, res.body.slice(0, 300))
  t.match(String(res.headers['content-type']), /^application\/problem\+json/)
  const body = JSON.parse(res.body)
  t.equal(body.code, code)
  t.equal(body.status, status)
  t.type(body.detail, 'string')
  return body
}

const upload = (x: Setup, payload: unknown, headers: Record<string, string> = {}) =>
  x.s.call({ method: 'POST', url: `/v1/apis/${x.apiId}/spec`, payload: payload as string, headers })

t.test('malformed JSON', async (t) => {
  const x = await setup(t)
  expectProblem(t, await x.s.call({ method: 'POST', url: '/v1/apis', payload: '{"name": "a",', headers: { 'content-type': 'application/json' } }), 400, 'invalid_request')
  expectProblem(t, await upload(x, '{"document": {', { 'content-type': 'application/json' }), 400, 'invalid_request')
  await assertNothingStoredAndServing(t, x)
})

t.test('unknown fields and wrong types', async (t) => {
  const x = await setup(t)
  const body = expectProblem(t, await x.s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'a', colour: 'red' } }), 400, 'invalid_request')
  t.match(body.detail, /colour/)
  expectProblem(t, await x.s.call({ method: 'POST', url: '/v1/apis', payload: { name: 42 } }), 400, 'invalid_request')
  expectProblem(t, await x.s.call({ method: 'PATCH', url: `/v1/apis/${x.apiId}`, payload: { visibility: 'secret' } }), 400, 'invalid_request')
  expectProblem(t, await upload(x, { document: petstore(), extra: 1 }), 400, 'invalid_request')
  expectProblem(t, await upload(x, {}), 422, 'invalid_document') // no `document` member: the (empty) document itself
  await assertNothingStoredAndServing(t, x)
  t.equal(json(await x.s.call({ method: 'GET', url: `/v1/apis/${x.apiId}` })).data.visibility, 'private')
})

t.test('organization_id in a body', async (t) => {
  const x = await setup(t)
  expectProblem(t, await x.s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'a', organization_id: x.s.orgId } }), 400, 'invalid_request')
  expectProblem(t, await x.s.call({ method: 'PATCH', url: `/v1/apis/${x.apiId}`, payload: { organization_id: x.s.orgId } }), 400, 'invalid_request')
  await assertNothingStoredAndServing(t, x)
})

t.test('a path value that is neither an id nor a slug', async (t) => {
  const x = await setup(t)
  for (const url of ['/v1/apis/Not_A_Slug', '/v1/apis/01ARZ3NDEKTSV4RRFFQ69G5FAU', `/v1/apis/${x.apiId}/versions/nope`, '/v1/schemas/12.3', '/v1/rulesets/ILOU0000000000000000000000']) {
    expectProblem(t, await x.s.call({ method: 'GET', url }), 400, 'invalid_request')
  }
  // Slugs (and version numbers) that name nothing are 404s, like unknown ids.
  for (const url of ['/v1/apis/not-a-ulid', '/v1/schemas/123', `/v1/apis/${x.apiId}/versions/99`]) {
    expectProblem(t, await x.s.call({ method: 'GET', url }), 404, 'not_found')
  }
  await assertNothingStoredAndServing(t, x)
})

t.test('limit 0 and 101, and other bad query values', async (t) => {
  const x = await setup(t)
  for (const query of ['limit=0', 'limit=101', 'page=0', 'page=-1', 'limit=abc', 'page=1.5']) {
    expectProblem(t, await x.s.call({ method: 'GET', url: `/v1/apis?${query}` }), 400, 'invalid_request')
  }
  expectProblem(t, await x.s.call({ method: 'GET', url: `/v1/apis/${x.apiId}/versions?limit=101` }), 400, 'invalid_request')
  expectProblem(t, await x.s.call({ method: 'GET', url: '/@acme/apis?limit=0', key: null }), 400, 'invalid_request')
  await assertNothingStoredAndServing(t, x)
})

t.test('a YAML alias bomb', async (t) => {
  const x = await setup(t)
  const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
  for (let i = 1; i < 10; i++) {
    const prev = String.fromCharCode(96 + i)
    const cur = String.fromCharCode(97 + i)
    levels.push(`${cur}: &${cur} [*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev}]`)
  }
  const bomb = `openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {}\n${levels.join('\n')}\n`
  expectProblem(t, await upload(x, bomb, { 'content-type': 'application/yaml' }), 422, 'invalid_document')
  expectProblem(t, await upload(x, { document: bomb }), 422, 'invalid_document')
  await assertNothingStoredAndServing(t, x)
})

t.test('10,000-deep nesting', async (t) => {
  const x = await setup(t)
  const deepJson = `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{},"x-deep":${'['.repeat(10_000)}${']'.repeat(10_000)}}`
  expectProblem(t, await upload(x, `{"document":${deepJson}}`, { 'content-type': 'application/json' }), 422, 'invalid_document')
  expectProblem(t, await upload(x, deepJson, { 'content-type': 'application/yaml' }), 422, 'invalid_document')
  const deepYaml = `openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {}\nx-deep: ${'{a: '.repeat(10_000)}1${'}'.repeat(10_000)}\n`
  expectProblem(t, await upload(x, deepYaml, { 'content-type': 'application/yaml' }), 422, 'invalid_document')
  const deepSchema = `{"name":"s","document":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}}`
  const schemaRes = await x.s.call({ method: 'POST', url: '/v1/schemas', payload: deepSchema, headers: { 'content-type': 'application/json' } })
  t.ok([400, 422].includes(schemaRes.statusCode), `a deep document in a create body is refused: ${schemaRes.statusCode}`)
  t.equal(json(await x.s.call({ method: 'GET', url: '/v1/schemas' })).total, 0)
  const deepBody = `{"name":"a","description":${'['.repeat(10_000)}${']'.repeat(10_000)}}`
  const res = await x.s.call({ method: 'POST', url: '/v1/apis', payload: deepBody, headers: { 'content-type': 'application/json' } })
  t.equal(res.statusCode, 400, 'a deep request body is a bad request')
  await assertNothingStoredAndServing(t, x)
})

t.test('a body over the limit', async (t) => {
  const x = await setup(t, { bodyLimit: 64 * 1024 })
  const big = { document: { ...petstore(), 'x-padding': 'p'.repeat(100 * 1024) } }
  expectProblem(t, await upload(x, big), 413, 'payload_too_large')
  expectProblem(t, await upload(x, 'a: ' + 'b'.repeat(100 * 1024), { 'content-type': 'application/yaml' }), 413, 'payload_too_large')
  await assertNothingStoredAndServing(t, x)
})

t.test('a document that is not an object', async (t) => {
  const x = await setup(t)
  for (const document of [[1, 2], 42, null, true, '- a\n- b\n', '"just a string"', '']) {
    expectProblem(t, await upload(x, { document }), 422, 'invalid_document')
  }
  expectProblem(t, await upload(x, '- a\n', { 'content-type': 'application/yaml' }), 422, 'invalid_document')
  await assertNothingStoredAndServing(t, x)
})

t.test('a Swagger 2.0 document that is not valid Swagger 2.0', async (t) => {
  // A valid one is converted to OpenAPI 3 (test/http/upload-import.test.ts); this one lacks info.version.
  const x = await setup(t)
  const body = expectProblem(t, await upload(x, { document: { swagger: '2.0', info: { title: 't' }, paths: {} } }), 422, 'invalid_document')
  t.match(JSON.stringify(body), /Swagger 2\.0/i)
  await assertNothingStoredAndServing(t, x)
})

t.test('external $refs are refused and never fetched or read', async (t) => {
  const x = await setup(t)
  let connections = 0
  const listener: Server = createServer((socket) => { connections += 1; socket.destroy() })
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => listener.close(() => resolve())))
  const port = (listener.address() as { port: number }).port
  const rs = json(await x.s.call({ method: 'POST', url: '/v1/rulesets', payload: { name: 'r' } })).data
  await x.s.call({ method: 'PATCH', url: `/v1/apis/${x.apiId}`, payload: { ruleset_id: rs.id } })
  for (const ref of ['file:///etc/passwd', `http://127.0.0.1:${port}/schema.json`, `http://127.0.0.1:${port}/x#/Pet`, '../../etc/passwd']) {
    const doc = petstore()
    ;(doc.components as { schemas: Record<string, unknown> }).schemas.Pet = { $ref: ref }
    const body = expectProblem(t, await upload(x, { document: doc }), 422, 'invalid_document')
    t.match(JSON.stringify(body), /external/i, `refused: ${ref}`)
    t.notMatch(JSON.stringify(body), /root:x:0/, 'no file content')
    const linted = await x.s.call({ method: 'POST', url: `/v1/rulesets/${rs.id}/lint`, payload: { document: doc } })
    t.notMatch(linted.body, /root:x:0/, 'no file content through lint either')
  }
  const schemaRes = await x.s.call({ method: 'POST', url: '/v1/schemas', payload: { name: 's', document: { $ref: `http://127.0.0.1:${port}/s.json` } } })
  expectProblem(t, schemaRes, 422, 'invalid_document')
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(connections, 0, 'no connection arrived at the listener')
  t.equal(json(await x.s.call({ method: 'GET', url: '/v1/schemas' })).total, 0)
  await assertNothingStoredAndServing(t, x)
})

t.test('__proto__ and constructor keys pollute nothing', async (t) => {
  const x = await setup(t)
  const raw = '{"name":"a","__proto__":{"polluted":"yes"}}'
  expectProblem(t, await x.s.call({ method: 'POST', url: '/v1/apis', payload: raw, headers: { 'content-type': 'application/json' } }), 400, 'invalid_request')
  const ctor = '{"name":"a","constructor":{"prototype":{"polluted":"yes"}}}'
  expectProblem(t, await x.s.call({ method: 'POST', url: '/v1/apis', payload: ctor, headers: { 'content-type': 'application/json' } }), 400, 'invalid_request')
  const docText = JSON.stringify(petstore()).replace('"paths":', '"x-a":{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}},"paths":')
  const res = await upload(x, `{"document":${docText}}`, { 'content-type': 'application/json' })
  t.ok([201, 422].includes(res.statusCode), `answered ${res.statusCode}`)
  const yamlDoc = 'openapi: 3.1.0\ninfo: {title: t, version: "1"}\npaths: {}\nx-b:\n  __proto__: {polluted: yes}\n'
  const yamlRes = await upload(x, yamlDoc, { 'content-type': 'application/yaml' })
  t.ok([200, 201, 422].includes(yamlRes.statusCode), `answered ${yamlRes.statusCode}`)
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is clean')
  if (res.statusCode === 201) {
    const back = await x.s.call({ method: 'GET', url: `/v1/apis/${x.apiId}/spec` })
    t.match(back.body, /__proto__/, 'the key is kept as data')
  }
  const list = await x.s.call({ method: 'GET', url: '/v1/apis' })
  t.equal(json(list).total, 1, 'no API was created from the polluting bodies')
})

t.test('invalid UTF-8', async (t) => {
  const x = await setup(t)
  const bad = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')])
  expectProblem(t, await x.s.call({ method: 'POST', url: '/v1/apis', payload: bad, headers: { 'content-type': 'application/json' } }), 400, 'invalid_request')
  const badYaml = Buffer.concat([Buffer.from('openapi: 3.1.0\ninfo: {title: "'), Buffer.from([0xc0, 0xaf]), Buffer.from('", version: "1"}\npaths: {}\n')])
  expectProblem(t, await upload(x, badYaml, { 'content-type': 'application/yaml' }), 400, 'invalid_request')
  await assertNothingStoredAndServing(t, x)
})

t.test('a wrong content type', async (t) => {
  const x = await setup(t)
  expectProblem(t, await x.s.call({ method: 'POST', url: '/v1/apis', payload: 'name=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'unsupported_media_type')
  expectProblem(t, await upload(x, '<xml/>', { 'content-type': 'application/xml' }), 415, 'unsupported_media_type')
  expectProblem(t, await x.s.call({ method: 'POST', url: '/v1/apis', payload: 'name: a', headers: { 'content-type': 'application/yaml' } }), 415, 'unsupported_media_type')
  await assertNothingStoredAndServing(t, x)
})

t.test('missing, malformed, unknown and revoked keys', async (t) => {
  const x = await setup(t)
  const issued = await x.s.registry.organizations.createKey('acme', 'ci')
  t.equal((await x.s.call({ method: 'GET', url: '/v1/apis', key: issued.secret })).statusCode, 200)
  await x.s.registry.organizations.revokeKey(issued.key.id)
  for (const auth of [undefined, 'Bearer', 'Basic abc', 'Bearer sk_short', `Bearer sk_${'x'.repeat(40)}`, `Bearer ${issued.secret}`]) {
    const res = await x.s.call({ method: 'POST', url: '/v1/apis', key: null, payload: { name: 'b' }, headers: auth ? { authorization: auth } : {} })
    expectProblem(t, res, 401, 'unauthorized')
    t.equal(res.headers['www-authenticate'], 'Bearer')
  }
  await assertNothingStoredAndServing(t, x)
})

t.test('a ruleset with a custom function', async (t) => {
  const x = await setup(t)
  const documents = [
    { functions: ['evil'], rules: { r: { given: '$', then: { function: 'evil' } } } },
    { rules: { r: { given: '$', then: { function: 'evil' } } } },
    { functionsDir: './functions', extends: ['spectral:oas'] },
    { extends: ['./local-ruleset.yaml'] },
    { extends: ['https://example.com/ruleset.yaml'] },
  ]
  for (const document of documents) {
    expectProblem(t, await x.s.call({ method: 'POST', url: '/v1/rulesets', payload: { name: 'evil', document } }), 422, 'invalid_document')
  }
  t.equal(json(await x.s.call({ method: 'GET', url: '/v1/rulesets' })).total, 0, 'no ruleset was created')
  await assertNothingStoredAndServing(t, x)
})

t.test('unknown routes and methods answer problem+json 404; bad URLs 400', async (t) => {
  const x = await setup(t)
  expectProblem(t, await x.s.call({ method: 'GET', url: '/v1/apis/%zz' }), 400, 'invalid_request')
  expectProblem(t, await x.s.call({ method: 'GET', url: '/@acme/apis/%zz', key: null }), 400, 'invalid_request')
  expectProblem(t, await x.s.call({ method: 'GET', url: '/v1/nothing' }), 404, 'not_found')
  expectProblem(t, await x.s.call({ method: 'PUT', url: '/v1/apis' }), 404, 'not_found')
  await assertNothingStoredAndServing(t, x)
})

t.test('too many requests for one key', async (t) => {
  const x = await setup(t, { rateLimitPerMinute: 5 })
  const other = await x.s.registry.organizations.create('other')
  let limited
  for (let i = 0; i < 10 && !limited; i++) {
    const res = await x.s.call({ method: 'GET', url: '/v1/apis' })
    if (res.statusCode === 429) limited = res
  }
  t.ok(limited, 'the key was limited')
  const body = expectProblem(t, limited!, 429, 'rate_limited')
  t.ok(limited!.headers['retry-after'], 'Retry-After is sent')
  t.type(body.detail, 'string')
  t.equal((await x.s.call({ method: 'GET', url: '/v1/apis', key: other.secret })).statusCode, 200, 'another key is not limited')
})
