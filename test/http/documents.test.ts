import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { stringify } from 'yaml'
import { countingDocuments, json, petstore, startTestServer } from '../helpers.js'
import { allVersions } from '../support/stored.js'

function blobFiles(storage: string): string[] {
  const base = join(storage, 'blobs', 'sha256')
  try {
    return readdirSync(base).flatMap((shard) => readdirSync(join(base, shard)).map((f) => `${shard}/${f}`)).sort()
  } catch {
    return []
  }
}

async function createApi(s: Awaited<ReturnType<typeof startTestServer>>, body: Record<string, unknown> = { name: 'Petstore' }) {
  const res = await s.call({ method: 'POST', url: '/v1/apis', payload: body })
  if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode} ${res.body}`)
  return json(res).data
}

t.test('one checksum for the same document as JSON, as YAML and with keys reordered', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = await createApi(s)
  const doc = petstore()
  const first = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: doc } })
  t.equal(first.statusCode, 201)
  const v1 = json(first).data
  t.match(v1, { number: 1, source: 'upload', format: 'json', openapi: '3.1.0', title: 'Petstore', version: '1.0.0', api_id: api.id, restored_from: null })
  t.match(v1.checksum, /^sha256:[0-9a-f]{64}$/)

  const asYaml = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, headers: { 'content-type': 'application/yaml' }, payload: stringify(doc) })
  t.equal(asYaml.statusCode, 200, 'YAML of the same document is unchanged')
  t.equal(json(asYaml).data.checksum, v1.checksum)
  t.equal(json(asYaml).data.id, v1.id)

  const reordered = Object.fromEntries(Object.entries(doc).reverse())
  const asString = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: JSON.stringify(reordered, null, 4) } })
  t.equal(asString.statusCode, 200, 'reordered keys in a JSON string are unchanged')
  t.equal(json(asString).data.checksum, v1.checksum)
})

t.test('an unchanged upload writes nothing and runs no validation', async (t) => {
  const counts = { lint: 0, check: 0, digest: 0 }
  const s = await startTestServer({ wrapDocuments: countingDocuments(counts) })
  t.teardown(s.close)
  const api = await createApi(s)
  await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore() } })
  const blobsBefore = blobFiles(s.storage)
  const versionsBefore = await allVersions(s.registry.storage.read)
  const resourceBefore = await s.registry.storage.read.resources.get(api.id)
  const checksBefore = counts.check
  const again = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore() } })
  t.equal(again.statusCode, 200)
  t.same(blobFiles(s.storage), blobsBefore, 'no blob written')
  t.same(await allVersions(s.registry.storage.read), versionsBefore, 'no version written')
  t.same(await s.registry.storage.read.resources.get(api.id), resourceBefore, 'resource untouched')
  t.equal(counts.check, checksBefore, 'no validation or lint ran')
  t.equal(blobsBefore.length, 1)
})

t.test('the same body again is unchanged; after the current version moves, it is a new version again', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = await createApi(s)
  const yamlText = stringify(petstore())
  const upload = (payload: string) => s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, headers: { 'content-type': 'application/yaml' }, payload })
  const v1 = json(await upload(yamlText)).data
  const again = await upload(yamlText)
  t.equal(again.statusCode, 200, 'identical body: unchanged')
  t.equal(json(again).data.id, v1.id)
  const v2 = json(await upload(stringify({ ...petstore(), info: { title: 'Petstore', version: '2.0.0' } }))).data
  t.equal(v2.number, 2)
  const back = await upload(yamlText)
  t.equal(back.statusCode, 201, 'the first body, no longer current, makes a version')
  t.equal(json(back).data.checksum, v1.checksum)
  const restored = json(await s.call({ method: 'POST', url: `/v1/apis/${api.id}/versions/${v2.id}/restore` })).data
  t.equal(restored.checksum, v2.checksum)
  t.equal((await upload(yamlText)).statusCode, 201, 'after a restore moved the current version, the first body is a version again')
  t.equal((await upload(yamlText)).statusCode, 200)
})

t.test('stored bytes keep the upload form; the other format is converted; ETag and 304', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = await createApi(s)
  const yamlText = `# a comment that YAML keeps\nopenapi: 3.0.3\ninfo:\n  version: '2.0'\n  title: Zoo\npaths: {}\n`
  const up = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, headers: { 'content-type': 'text/yaml' }, payload: yamlText })
  t.equal(up.statusCode, 201, up.body)
  const version = json(up).data
  t.equal(version.format, 'yaml')
  t.equal(version.size, Buffer.byteLength(yamlText))

  const asYaml = await s.call({ method: 'GET', url: `/v1/apis/${api.id}/spec?format=yaml` })
  t.equal(asYaml.statusCode, 200)
  t.equal(asYaml.body, yamlText, 'the YAML text exactly as uploaded')
  t.match(asYaml.headers['content-type'], /application\/yaml/)
  t.equal(asYaml.headers.etag, `"${version.checksum}"`)

  const byAccept = await s.call({ method: 'GET', url: `/v1/apis/${api.id}/spec`, headers: { accept: 'application/yaml' } })
  t.equal(byAccept.body, yamlText)

  const asJson = await s.call({ method: 'GET', url: `/v1/apis/${api.id}/spec` })
  t.match(asJson.headers['content-type'], /application\/json/)
  t.same(JSON.parse(asJson.body), { openapi: '3.0.3', info: { version: '2.0', title: 'Zoo' }, paths: {} })
  t.same(Object.keys(JSON.parse(asJson.body).info), ['version', 'title'], 'key order kept')

  const notModified = await s.call({ method: 'GET', url: `/v1/apis/${api.id}/spec`, headers: { 'if-none-match': `"${version.checksum}"` } })
  t.equal(notModified.statusCode, 304)
  t.equal(notModified.body, '')

  const jsonApi = await createApi(s, { name: 'Json' })
  const ordered = { openapi: '3.1.0', paths: {}, info: { version: '1', title: 'Ordered' } }
  await s.call({ method: 'POST', url: `/v1/apis/${jsonApi.id}/spec`, payload: { document: ordered } })
  const back = await s.call({ method: 'GET', url: `/v1/apis/${jsonApi.id}/spec` })
  t.equal(back.body, JSON.stringify(ordered), 'a JSON object comes back with its own key order')
})

t.test('20 concurrent uploads to one API give versions 1..20 with no gap', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = await createApi(s)
  const responses = await Promise.all(Array.from({ length: 20 }, (_, i) =>
    s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore(`1.0.${i}`) } })))
  t.same(responses.map((r) => r.statusCode), Array(20).fill(201))
  const numbers = responses.map((r) => json(r).data.number).sort((a: number, b: number) => a - b)
  t.same(numbers, Array.from({ length: 20 }, (_, i) => i + 1))
  const list = json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/versions?limit=100` }))
  t.equal(list.total, 20)
  t.same(list.data.map((v: { number: number }) => v.number), Array.from({ length: 20 }, (_, i) => 20 - i), 'newest first')
})

t.test('restore makes an old version current again, reusing its blob; restoring the current one is a no-op', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = await createApi(s)
  const v1 = json(await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('1') } })).data
  const v2 = json(await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('2') } })).data
  const blobs = blobFiles(s.storage)
  const restored = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/versions/${v1.id}/restore` })
  t.equal(restored.statusCode, 201)
  const v3 = json(restored).data
  t.match(v3, { number: 3, source: 'restore', restored_from: v1.id, checksum: v1.checksum, format: v1.format, size: v1.size })
  t.same(blobFiles(s.storage), blobs, 'nothing copied')
  const current = json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}` })).data.current
  t.equal(current.id, v3.id)
  const doc = await s.call({ method: 'GET', url: `/v1/apis/${api.id}/spec` })
  t.equal(JSON.parse(doc.body).info.version, '1')

  const again = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/versions/${v1.id}/restore` })
  t.equal(again.statusCode, 200, 'that content is already current')
  t.equal(json(again).data.id, v3.id)
  t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/versions` })).total, 3)

  const old = await s.call({ method: 'GET', url: `/v1/apis/${api.id}/versions/${v2.id}/document` })
  t.equal(JSON.parse(old.body).info.version, '2', 'old versions stay readable')
  const one = json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/versions/${v2.id}` })).data
  t.equal(one.number, 2)
})

t.test('schemas and rulesets: create with a document, upload, versions, restore', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const schemaDoc = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { id: { type: 'integer' } } }
  const created = await s.call({ method: 'POST', url: '/v1/schemas', payload: { name: 'Pet', document: schemaDoc } })
  t.equal(created.statusCode, 201, created.body)
  const schema = json(created).data
  t.match(schema, { name: 'Pet', slug: 'pet', visibility: 'private', description: null, current: { number: 1, schema_id: schema.id } })
  const up = await s.call({ method: 'POST', url: `/v1/schemas/${schema.id}/document`, payload: { document: { ...schemaDoc, required: ['id'] } } })
  t.equal(up.statusCode, 201)
  t.equal(json(up).data.number, 2)
  const same = await s.call({ method: 'POST', url: `/v1/schemas/${schema.id}/document`, headers: { 'content-type': 'application/x-yaml' }, payload: stringify({ ...schemaDoc, required: ['id'] }) })
  t.equal(same.statusCode, 200)
  const got = await s.call({ method: 'GET', url: `/v1/schemas/${schema.id}/document` })
  t.same(JSON.parse(got.body).required, ['id'])

  const rs = json(await s.call({ method: 'POST', url: '/v1/rulesets', payload: { name: 'Default rules' } })).data
  t.match(rs, { slug: 'default-rules', blocking_severity: 'error', visibility: 'private', current: { number: 1, ruleset_id: rs.id } })
  const rsDoc = await s.call({ method: 'GET', url: `/v1/rulesets/${rs.id}/document` })
  t.match(JSON.parse(rsDoc.body), { extends: [] }, 'the default ruleset extends the OpenAPI ruleset')
  t.match(rsDoc.body, /spectral:oas/)
  const rsUp = await s.call({ method: 'POST', url: `/v1/rulesets/${rs.id}/document`, headers: { 'content-type': 'application/yaml' }, payload: 'extends: [[spectral:oas, all]]\n' })
  t.equal(rsUp.statusCode, 201, rsUp.body)
  const rsVersions = json(await s.call({ method: 'GET', url: `/v1/rulesets/${rs.id}/versions` }))
  t.equal(rsVersions.total, 2)
  const back = await s.call({ method: 'POST', url: `/v1/rulesets/${rs.id}/versions/${rsVersions.data[1].id}/restore` })
  t.equal(back.statusCode, 201)
  t.equal(json(back).data.source, 'restore')
  const schemaVersions = json(await s.call({ method: 'GET', url: `/v1/schemas/${schema.id}/versions` }))
  const restoredSchema = await s.call({ method: 'POST', url: `/v1/schemas/${schema.id}/versions/${schemaVersions.data[1].id}/restore` })
  t.equal(restoredSchema.statusCode, 201)
})

t.test('the same content from another organization keeps its own text, never the first uploader\'s', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const beta = await s.registry.organizations.create('beta')
  const mine = await createApi(s)
  const theirs = json(await s.call({ method: 'POST', url: '/v1/apis', key: beta.secret, payload: { name: 'Theirs' } })).data
  const secretYaml = '# INTERNAL: staging is secret-staging.acme.internal\nopenapi: 3.1.0\ninfo: {title: T, version: "1"}\npaths: {}\n'
  const plainYaml = 'info: {version: "1", title: T}\npaths: {}\nopenapi: 3.1.0\n'
  const a = json(await s.call({ method: 'POST', url: `/v1/apis/${mine.id}/spec`, headers: { 'content-type': 'application/yaml' }, payload: secretYaml })).data
  const b = json(await s.call({ method: 'POST', url: `/v1/apis/${theirs.id}/spec`, key: beta.secret, headers: { 'content-type': 'application/yaml' }, payload: plainYaml })).data
  t.equal(a.checksum, b.checksum, 'one canonical checksum')
  t.equal(b.size, Buffer.byteLength(plainYaml))
  const back = await s.call({ method: 'GET', url: `/v1/apis/${theirs.id}/spec?format=yaml`, key: beta.secret })
  t.equal(back.body, plainYaml, 'their own text')
  t.notMatch(back.body, /INTERNAL/)
  t.equal((await s.call({ method: 'GET', url: `/v1/apis/${mine.id}/spec?format=yaml` })).body, secretYaml)
  const again = await s.call({ method: 'POST', url: `/v1/apis/${theirs.id}/spec`, key: beta.secret, headers: { 'content-type': 'application/yaml' }, payload: secretYaml })
  t.equal(again.statusCode, 200, 'the same content in another text is still unchanged')
})

t.test('dry runs store nothing for schemas and rulesets either', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const schema = json(await s.call({ method: 'POST', url: '/v1/schemas', payload: { name: 'S', document: { type: 'object' } } })).data
  const dry = await s.call({ method: 'POST', url: `/v1/schemas/${schema.id}/document?dry_run=true`, payload: { document: { type: 'string' } } })
  t.equal(dry.statusCode, 200)
  t.same(json(dry).data.unchanged, false)
  t.equal(json(await s.call({ method: 'GET', url: `/v1/schemas/${schema.id}/versions` })).total, 1)
  const invalid = await s.call({ method: 'POST', url: `/v1/schemas/${schema.id}/document?dry_run=true`, payload: { document: { type: 12 } } })
  t.equal(invalid.statusCode, 422)
})
