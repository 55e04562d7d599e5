/**
 * Keyed routes take a resource's slug wherever they take its id, and a version's number wherever they
 * take its id (issue 15, item 5): a CI script needs no lookup first. ULID-shaped values are ids first;
 * no new slug may be ULID-shaped (26 digits).
 */
import t from 'tap'
import { json, petstore, startTestServer, type TestServer } from '../helpers.js'

async function call(s: TestServer, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: unknown, key?: string) {
  const res = await s.call({ method, url, ...(payload === undefined ? {} : { payload: payload as object }), ...(key ? { key } : {}) })
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined }
}

t.test('APIs, schemas and rulesets by slug, versions by number, within the key\'s organization', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = (await call(s, 'POST', '/v1/apis', { name: 'Stripe', slug: 'stripe-com' })).body.data
  t.equal((await call(s, 'POST', '/v1/apis/stripe-com/spec', { document: petstore('1') })).status, 201, 'upload by slug')
  t.equal((await call(s, 'POST', '/v1/apis/stripe-com/spec?dry_run=true', { document: petstore('9') })).status, 200, 'dry run by slug')
  t.equal((await call(s, 'POST', `/v1/apis/${api.id}/spec`, { document: petstore('2') })).status, 201, 'upload by id')

  const bySlug = await call(s, 'GET', '/v1/apis/stripe-com')
  t.equal(bySlug.status, 200)
  t.same(bySlug.body, (await call(s, 'GET', `/v1/apis/${api.id}`)).body, 'the slug names the same API as the id')
  t.equal((await call(s, 'GET', '/v1/apis/stripe-com/spec')).body.info.version, '2')
  t.equal((await call(s, 'GET', '/v1/apis/stripe-com/versions')).body.total, 2)

  const first = await call(s, 'GET', '/v1/apis/stripe-com/versions/1')
  t.equal(first.status, 200, 'a version by number')
  t.match(first.body.data, { number: 1, version: '1' })
  t.same((await call(s, 'GET', `/v1/apis/stripe-com/versions/${first.body.data.id}`)).body, first.body, 'and by id')
  t.equal((await call(s, 'GET', '/v1/apis/stripe-com/versions/1/document')).body.info.version, '1')
  t.equal((await call(s, 'GET', '/v1/apis/stripe-com/versions/2/findings')).status, 200)
  t.equal((await call(s, 'GET', '/v1/apis/stripe-com/versions/3')).status, 404, 'a number past the last version')
  const restored = await call(s, 'POST', '/v1/apis/stripe-com/versions/1/restore')
  t.equal(restored.status, 201, 'restore by number')
  t.match(restored.body.data, { number: 3, source: 'restore', restored_from: first.body.data.id })

  const patched = await call(s, 'PATCH', '/v1/apis/stripe-com', { slug: 'stripe', visibility: 'public' })
  t.equal(patched.status, 200, 'update by slug')
  t.equal((await call(s, 'GET', '/v1/apis/stripe-com')).status, 404, 'the old slug names nothing once changed')
  t.equal((await call(s, 'GET', '/v1/apis/stripe')).body.data.id, api.id)

  const schema = (await call(s, 'POST', '/v1/schemas', { name: 'Pet', document: { type: 'object' } })).body.data
  t.equal((await call(s, 'POST', '/v1/schemas/pet/document', { document: { type: 'string' } })).status, 201, 'schema upload by slug')
  t.equal((await call(s, 'GET', '/v1/schemas/pet/versions/2/document')).body.type, 'string')
  t.equal((await call(s, 'GET', '/v1/schemas/pet')).body.data.id, schema.id)
  const ruleset = (await call(s, 'POST', '/v1/rulesets', { name: 'House rules' })).body.data
  t.equal((await call(s, 'POST', '/v1/rulesets/house-rules/lint', { document: petstore() })).status, 200, 'lint by slug')
  t.equal((await call(s, 'PATCH', '/v1/apis/stripe', { ruleset_id: ruleset.id })).status, 200, 'body references stay ids')
  t.equal((await call(s, 'PATCH', '/v1/apis/stripe', { ruleset_id: 'house-rules' })).status, 400, 'a slug in ruleset_id is refused')

  // Another organization with the same slugs: each key reaches its own.
  const other = await s.registry.organizations.create('other', 'Other')
  const theirs = (await call(s, 'POST', '/v1/apis', { name: 'Stripe', slug: 'stripe' }, other.secret)).body.data
  t.equal((await call(s, 'GET', '/v1/apis/stripe', undefined, other.secret)).body.data.id, theirs.id)
  t.equal((await call(s, 'GET', '/v1/apis/stripe')).body.data.id, api.id)
  t.equal((await call(s, 'GET', '/v1/schemas/pet', undefined, other.secret)).status, 404, "another organization's slug is a 404")
  t.equal((await call(s, 'GET', `/v1/apis/${api.id}`, undefined, other.secret)).status, 404, "another organization's id is a 404")

  t.equal((await call(s, 'DELETE', '/v1/schemas/pet')).status, 204, 'delete by slug')
  t.equal((await call(s, 'GET', `/v1/schemas/${schema.id}`)).status, 404)
})

t.test('sites, SDKs and repository connections by slug', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = (await call(s, 'POST', '/v1/apis', { name: 'Pets' })).body.data
  await call(s, 'POST', '/v1/apis/pets/spec', { document: petstore() })

  const site = (await call(s, 'POST', '/v1/sites', { name: 'Developer docs', api_ids: [api.id] })).body.data
  t.equal((await call(s, 'GET', '/v1/sites/developer-docs')).body.data.id, site.id, 'a site by slug')
  t.equal((await call(s, 'PUT', '/v1/sites/developer-docs/guides/start', { title: 'Start', markdown: '# Hi' })).status, 201, 'a guide under a site slug')
  t.equal((await call(s, 'GET', `/v1/sites/${site.id}/guides`)).body.total, 1)
  t.equal((await call(s, 'PATCH', '/v1/sites/developer-docs', { title: 'Docs' })).body.data.title, 'Docs')

  const sdk = (await call(s, 'POST', '/v1/sdks', { name: 'Pets SDK', targets: ['typescript'], apis: [{ api_id: api.id }] })).body.data
  t.equal((await call(s, 'GET', '/v1/sdks/pets-sdk')).body.data.id, sdk.id, 'an SDK by slug')
  t.equal((await call(s, 'PATCH', '/v1/sdks/pets-sdk', { name: 'Pets client' })).body.data.name, 'Pets client')
  t.equal((await call(s, 'GET', '/v1/sdks/pets-sdk/builds')).body.total, 0)
  t.equal((await call(s, 'GET', '/v1/sdks/pets-sdk/targets/typescript/repository')).body.detail, 'output repository not found',
    'the SDK is found; it has no repository')

  t.match((await call(s, 'GET', '/v1/apis/pets/repository')).body, { status: 404, detail: 'the API is not connected to a repository' }, 'the API is found; it is not connected')
  t.match((await call(s, 'GET', '/v1/apis/nope/repository')).body, { status: 404, detail: 'api not found' })
  t.equal((await call(s, 'DELETE', '/v1/sdks/pets-sdk')).status, 204)
  t.equal((await call(s, 'DELETE', '/v1/sites/developer-docs')).status, 204)
})

t.test('ids and slugs cannot collide: ULID-shaped slugs are refused, and ULID-shaped values are ids first', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const digits = '01234567890123456789012345'
  for (const [url, body] of [['/v1/apis', { name: 'A', slug: digits }], ['/v1/schemas', { name: 'S', slug: digits }],
    ['/v1/rulesets', { name: 'R', slug: digits }], ['/v1/sites', { name: 'W', slug: digits }]] as const) {
    const res = await call(s, 'POST', url, body)
    t.equal(res.status, 400, `${url}: a 26-digit slug`)
    t.equal(res.body.detail, 'a slug of 26 digits would read as an id; add a letter or a hyphen')
  }
  const a = (await call(s, 'POST', '/v1/apis', { name: digits })).body.data
  t.equal(a.slug, `${digits}-api`, 'a name of 26 digits derives a slug that is not ULID-shaped')
  t.equal((await call(s, 'PATCH', `/v1/apis/${a.id}`, { slug: digits })).status, 400, 'nor on update')

  // A slug stored before the rule can still be ULID-shaped: it resolves, unless a resource has it as id.
  const b = (await call(s, 'POST', '/v1/apis', { name: 'B' })).body.data
  // Written through the storage port as an earlier release could have stored it.
  const stored = (await s.registry.storage.read.resources.get(b.id))!
  await s.registry.storage.transaction((tx) => tx.resources.update({ ...stored, slug: digits }))
  t.equal((await call(s, 'GET', `/v1/apis/${digits}`)).body.data.id, b.id, 'an old ULID-shaped slug still resolves')
  const record = (await s.registry.storage.read.resources.get(b.id))!
  await s.registry.storage.transaction((tx) => tx.resources.create({ ...record, id: digits, slug: 'c', name: 'C', last_number: 0 }))
  t.equal((await call(s, 'GET', `/v1/apis/${digits}`)).body.data.name, 'C', 'the id wins over the same slug')

  for (const url of ['/v1/apis/Stripe', '/v1/apis/stripe_com', `/v1/apis/${a.id}/versions/0`, `/v1/apis/${a.id}/versions/one`,
    '/v1/apis/-stripe', `/v1/sdks/${'x'.repeat(65)}`]) {
    const res = await call(s, 'GET', url)
    t.equal(res.status, 400, `${url}: neither an id nor a slug`)
    t.equal(res.body.code, 'invalid_request')
  }
})

t.test('/openapi.json describes the path parameters as id or slug, and versions as id or number', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const doc = JSON.parse((await s.call({ method: 'GET', url: '/openapi.json', key: null })).body)
  const param = (path: string, name: string) =>
    (doc.paths[path].get.parameters as { name: string; in: string; description?: string; schema: { pattern: string } }[])
      .find((p) => p.in === 'path' && p.name === name)!
  for (const [path, name] of [['/v1/apis/{api}', 'api'], ['/v1/schemas/{schema}', 'schema'], ['/v1/rulesets/{ruleset}', 'ruleset'],
    ['/v1/sites/{site}', 'site'], ['/v1/sdks/{sdk}', 'sdk'], ['/v1/apis/{api}/repository', 'api']]) {
    const p = param(path, name)
    t.ok(new RegExp(p.schema.pattern).test('stripe-com') && new RegExp(p.schema.pattern).test('01HZY3M4N5P6Q7R8S9T0V1W2X3'), `${path}: id or slug`)
  }
  const version = param('/v1/apis/{api}/versions/{version}', 'version')
  t.ok(new RegExp(version.schema.pattern).test('12'), 'a version number')
  t.notOk(new RegExp(version.schema.pattern).test('stripe'), 'a version is no slug')
  t.match(version.description, /id \(ULID\) or its number/)
  t.match(param('/v1/apis/{api}', 'api').description, /id \(ULID\) or the slug/)
})
