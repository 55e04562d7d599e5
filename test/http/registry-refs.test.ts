/**
 * Issue 15, item 13: an API's `$ref` to a JSON Schema of this registry (`/@org/schemas/slug/versions/n`
 * or `…/latest`) is resolved from storage, with the visibility rules of the public registry, and a
 * bundled form is served on request.
 */
import t from 'tap'
import { json, petstore, startTestServer, type TestServer } from '../helpers.js'

const PET = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string' }, tag: { $ref: '#/$defs/Tag' } },
  $defs: { Tag: { type: 'string', maxLength: 32 } },
}

/** A petstore whose Pet is the registry's schema: the whole one pinned, and a piece of the latest. */
function referencing(org = 'acme', pin = 'versions/1'): Record<string, unknown> {
  const doc = petstore('1.0.0') as any
  doc.components.schemas.Pet = { $ref: `/@${org}/schemas/pet/${pin}` }
  doc.components.schemas.Tag = { $ref: `/@${org}/schemas/pet/latest#/$defs/Tag` }
  return doc
}

async function createSchema(s: TestServer, key: string, visibility: 'private' | 'public', document: unknown = PET) {
  const created = await s.call({ method: 'POST', url: '/v1/schemas', key, payload: { name: 'Pet', slug: 'pet', visibility, document } })
  if (created.statusCode !== 201) throw new Error(created.body)
  return json(created).data
}

async function createApi(s: TestServer, key: string, visibility: 'private' | 'public' = 'private') {
  return json(await s.call({ method: 'POST', url: '/v1/apis', key, payload: { name: 'Pets', visibility } })).data
}

t.test('an upload that refers to a schema of its organization is validated as bundled and stored as written', async (t) => {
  const s = await startTestServer()
  t.teardown(() => s.close())
  await createSchema(s, s.key, 'private')
  const api = await createApi(s, s.key)
  const upload = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: referencing() } })
  t.equal(upload.statusCode, 201, upload.body)

  const stored = await s.call({ method: 'GET', url: `/v1/apis/${api.id}/spec` })
  t.same(json(stored).components.schemas.Pet, { $ref: '/@acme/schemas/pet/versions/1' }, 'the stored document keeps the $ref as written')

  const bundled = await s.call({ method: 'GET', url: `/v1/apis/${api.id}/spec?bundle=true` })
  t.equal(bundled.statusCode, 200, bundled.body)
  const doc = json(bundled)
  t.same(doc.components.schemas.Pet, { $ref: '#/components/schemas/acme.pet.v1' })
  t.same(doc.components.schemas.Tag, { $ref: '#/components/schemas/acme.pet.v1/$defs/Tag' })
  t.same(doc.components.schemas['acme.pet.v1'].properties.tag, { $ref: '#/components/schemas/acme.pet.v1/$defs/Tag' }, "the schema's own references move with it")
  t.not(bundled.headers.etag, stored.headers.etag, 'the bundle has its own ETag')
  const again = await s.call({ method: 'GET', url: `/v1/apis/${api.id}/spec?bundle=true`, headers: { 'if-none-match': String(bundled.headers.etag) } })
  t.equal(again.statusCode, 304)
  const yaml = await s.call({ method: 'GET', url: `/v1/apis/${api.id}/spec?bundle=true&format=yaml` })
  t.match(yaml.body, /acme\.pet\.v1:/)

  // `latest` follows the schema; a pinned version does not.
  const v2 = { ...PET, $defs: { Tag: { type: 'string', maxLength: 64 } } }
  const schemaId = json(await s.call({ method: 'GET', url: '/v1/schemas' })).data[0].id
  t.equal((await s.call({ method: 'POST', url: `/v1/schemas/${schemaId}/document`, payload: { document: v2 } })).statusCode, 201)
  const moved = json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/spec?bundle=true` }))
  t.same(moved.components.schemas.Pet, { $ref: '#/components/schemas/acme.pet.v1' })
  t.same(moved.components.schemas.Tag, { $ref: '#/components/schemas/acme.pet.v2/$defs/Tag' })
  t.equal(moved.components.schemas['acme.pet.v2'].$defs.Tag.maxLength, 64)

  const plain = await s.call({ method: 'GET', url: `/v1/schemas/${schemaId}/document?bundle=true` })
  t.equal(plain.headers.etag, (await s.call({ method: 'GET', url: `/v1/schemas/${schemaId}/document` })).headers.etag, 'a document without registry references is the stored one')
})

t.test('references that name nothing the API may use are refused, and nothing is fetched', async (t) => {
  const s = await startTestServer()
  t.teardown(() => s.close())
  const other = await s.registry.organizations.create('globex')
  await createSchema(s, other.secret, 'private')
  const api = await createApi(s, s.key)
  const upload = (document: unknown) => s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document } })

  for (const [what, document] of [
    ['a schema that does not exist', referencing('acme')],
    ["another organization's private schema", referencing('globex')],
    ['a version that does not exist', referencing('acme', 'versions/7')],
  ] as const) {
    const refused = await upload(document)
    t.equal(refused.statusCode, 422, what)
    t.equal(json(refused).code, 'invalid_document')
    t.match(json(refused).detail, /unresolved \$ref '\/@(acme|globex)\/schemas\/pet\//, what)
  }
  const url = await upload({ ...petstore('1.0.0'), components: { schemas: { Pet: { $ref: 'https://example.com/@acme/schemas/pet/latest' } } } })
  t.equal(url.statusCode, 422, 'a URL is still external: never fetched')
  t.match(json(url).detail, /external \$ref/)
  t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/versions` })).total, 0, 'nothing stored')

  const published = await s.call({ method: 'PATCH', url: '/v1/schemas/' + json(await s.call({ method: 'GET', url: '/v1/schemas', key: other.secret })).data[0].id, key: other.secret, payload: { visibility: 'public' } })
  t.equal(published.statusCode, 200)
  const publicRef = referencing('globex')
  delete (publicRef as any).components.schemas.Tag
  t.equal((await upload(publicRef)).statusCode, 201, "another organization's public schema may be used")
})

t.test('linting sees the bundled document; the public registry bundles public schemas only', async (t) => {
  const s = await startTestServer()
  t.teardown(() => s.close())
  const schema = await createSchema(s, s.key, 'private')
  const ruleset = json(await s.call({ method: 'POST', url: '/v1/rulesets', payload: { name: 'oas', document: { extends: ['spectral:oas'] } } })).data
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Pets', visibility: 'public', ruleset_id: ruleset.id, blocking_severity: 'off' } })).data
  const upload = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: referencing() } })
  t.equal(upload.statusCode, 201, upload.body)
  const findings = json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/versions/${json(upload).data.id}/findings` })).data
  t.notOk(findings.some((f: { code: string }) => f.code === 'invalid-ref'), 'no unresolved reference for Spectral')

  const anonymous = await s.call({ method: 'GET', url: '/@acme/apis/pets/latest?bundle=true', key: null })
  t.equal(anonymous.statusCode, 422, 'a private schema is not shown to the public')
  t.notMatch(anonymous.body, /maxLength/)
  const owner = await s.call({ method: 'GET', url: '/@acme/apis/pets/latest?bundle=true' })
  t.equal(owner.statusCode, 200, 'a key of the organization sees its own schemas')
  t.ok(json(owner).components.schemas['acme.pet.v1'])
  await s.call({ method: 'PATCH', url: `/v1/schemas/${schema.id}`, payload: { visibility: 'public' } })
  const nowPublic = await s.call({ method: 'GET', url: '/@acme/apis/pets/latest?bundle=true', key: null })
  t.equal(nowPublic.statusCode, 200)
  t.ok(json(nowPublic).components.schemas['acme.pet.v1'])
})
