/**
 * The compatibility gate (issue 20, item 4): the setting, uploads refused with 422 incompatible and
 * nothing stored, forward, full and transitive policies, dry runs, restores, and the decision taken
 * again at the commit point when the policy or the current version changes meanwhile.
 */
import t from 'tap'
import { Ajv2020 } from '../../src/documents/ajv.js'
import { holdNextTask, json, startTestServer, type TestServer } from '../helpers.js'
import { orderEventSchema, shopApi } from '../support/shop-api.js'

type Json = any

async function created(s: TestServer, url: string, payload: Json): Promise<Json> {
  const res = await s.call({ method: 'POST', url, payload })
  if (res.statusCode !== 201) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
  return json(res).data
}

const upload = (s: TestServer, api: Json, document: Json, query = '') =>
  s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec${query}`, payload: { document } })
const versionCount = async (s: TestServer, api: Json) => json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/versions` })).total
const setPolicy = (s: TestServer, api: Json, compatibility: string | null) =>
  s.call({ method: 'PATCH', url: `/v1/apis/${api.id}`, payload: { compatibility } })
/** The schema /openapi.json describes every problem+json answer with. */
const describedProblem = async (s: TestServer): Promise<Json> =>
  json(await s.call({ method: 'GET', url: '/openapi.json', key: null })).components.schemas.Problem

/** The shop API without the note of orders (a response property clients read). */
function withoutNote(): Json {
  const d = shopApi()
  delete d.components.schemas.Order.properties.note
  return d
}

/** The shop API with one more operation (backward compatible, not forward). */
function withExport(): Json {
  const d = shopApi()
  d.paths['/orders/export'] = { get: { operationId: 'exportOrders', responses: { '200': { description: 'CSV.', content: { 'text/csv': { schema: { type: 'string' } } } } } } }
  return d
}

t.test('compatibility is a setting of APIs and schemas: none by default, shown, writable, null is none', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const plain = await created(s, '/v1/apis', { name: 'Plain' })
  t.equal(plain.compatibility, 'none')
  const api = await created(s, '/v1/apis', { name: 'Gated', compatibility: 'backward' })
  t.equal(api.compatibility, 'backward')
  t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}` })).data.compatibility, 'backward')
  t.equal(json(await setPolicy(s, api, 'full_transitive')).data.compatibility, 'full_transitive')
  t.equal(json(await setPolicy(s, api, null)).data.compatibility, 'none')
  const bad = await setPolicy(s, api, 'major')
  t.equal(bad.statusCode, 400)
  t.equal(json(bad).code, 'invalid_request')
  const schema = await created(s, '/v1/schemas', { name: 'Event', compatibility: 'forward_transitive', document: orderEventSchema() })
  t.equal(schema.compatibility, 'forward_transitive')
  const ruleset = await s.call({ method: 'POST', url: '/v1/rulesets', payload: { name: 'Rules', compatibility: 'backward' } })
  t.equal(ruleset.statusCode, 400, 'rulesets have no compatibility')

  const spec = json(await s.call({ method: 'GET', url: '/openapi.json', key: null }))
  const schemaOf = (op: Json) => op.requestBody.content['application/json'].schema
  const policies = ['none', 'backward', 'forward', 'full', 'backward_transitive', 'forward_transitive', 'full_transitive']
  t.match(schemaOf(spec.paths['/v1/apis'].post).properties.compatibility, { anyOf: [{ enum: policies }, { type: 'null' }] })
  t.ok(schemaOf(spec.paths['/v1/schemas/{schema}'].patch).properties.compatibility)
  t.same(spec.paths['/v1/apis/{api}'].get.responses['200'].content['application/json'].schema.properties.data.properties.compatibility.enum, policies)
})

t.test('backward: a breaking upload is refused with 422 incompatible listing the breaking changes; nothing is stored', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = await created(s, '/v1/apis', { name: 'Shop', compatibility: 'backward' })
  await created(s, `/v1/apis/${api.id}/spec`, { document: shopApi() })
  const refused = await upload(s, api, withoutNote())
  t.equal(refused.statusCode, 422)
  t.match(refused.headers['content-type'], /^application\/problem\+json/)
  const problem = json(refused)
  t.match(problem, { code: 'incompatible', status: 422, detail: /^4 breaking changes from version 1 to this document break the API's 'backward' compatibility; nothing was stored$/ })
  t.equal(problem.errors.length, 4, 'one per operation that returns an order')
  t.match(problem.errors[0], {
    code: 'property-removed', message: /^GET \/orders: response 200 \(application\/json\): property `Order.note` was removed$/,
    pointer: '/components/schemas/Order/properties/note', path: ['components', 'schemas', 'Order', 'properties', 'note'],
    operation: { method: 'get', path: '/orders' }, component: null, version: 1, direction: 'backward',
  })
  // What a client generated from the description reads: every field of the answer is described there.
  const described = await describedProblem(s)
  const fields = new Set<string>(problem.errors.flatMap((error: Json) => Object.keys(error)))
  t.same([...fields].filter((field) => !(field in described.properties.errors.items.properties)), [], "every field of the errors is described in /openapi.json's Problem")
  const matchesDescription = new (Ajv2020())({ strict: false }).compile(described)
  t.ok(matchesDescription(problem), 'the answer is valid against the description', { errors: matchesDescription.errors })
  t.equal(await versionCount(s, api), 1, 'nothing stored')

  const compatible = shopApi()
  compatible.components.schemas.Order.properties.discount = { $ref: '#/components/schemas/Money' }
  t.equal((await upload(s, api, compatible)).statusCode, 201, 'a compatible upload is stored')
  t.equal(await versionCount(s, api), 2)
})

t.test('forward and full: the same checks with the versions swapped, and both ways', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const forward = await created(s, '/v1/apis', { name: 'Forward', compatibility: 'forward' })
  await created(s, `/v1/apis/${forward.id}/spec`, { document: shopApi() })
  const added = await upload(s, forward, withExport())
  t.equal(added.statusCode, 422, 'a new operation is not forward compatible: clients of the new version call it on the old one')
  t.match(json(added), { code: 'incompatible', detail: /from this document back to version 1 \(forward compatibility\)/, errors: [{ code: 'operation-removed', direction: 'forward' }] })
  t.equal((await upload(s, forward, withoutNote())).statusCode, 201, 'a response property removed is forward compatible')

  const full = await created(s, '/v1/apis', { name: 'Full', compatibility: 'full' })
  await created(s, `/v1/apis/${full.id}/spec`, { document: shopApi() })
  t.equal((await upload(s, full, withExport())).statusCode, 422)
  t.equal((await upload(s, full, withoutNote())).statusCode, 422)
  const annotated = shopApi()
  annotated.info.description = 'Orders, customers, products and more.'
  t.equal((await upload(s, full, annotated)).statusCode, 201, 'annotations pass every policy')
})

t.test('transitive: checked against every earlier version, not only the current one', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = await created(s, '/v1/apis', { name: 'History' })
  await created(s, `/v1/apis/${api.id}/spec`, { document: shopApi() })
  await created(s, `/v1/apis/${api.id}/spec`, { document: withoutNote() })
  const next = withoutNote()
  next.components.schemas.Order.properties.discount = { $ref: '#/components/schemas/Money' }
  await setPolicy(s, api, 'backward_transitive')
  const refused = await upload(s, api, next)
  t.equal(refused.statusCode, 422)
  t.match(json(refused), { detail: /from version 1 to this document break the API's 'backward_transitive' compatibility/, errors: [{ version: 1 }] })
  await setPolicy(s, api, 'backward')
  t.equal((await upload(s, api, next)).statusCode, 201, 'backward only looks at the current version')
})

t.test('dry runs answer the diff against the current version, and the same 422 when the gate refuses', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = await created(s, '/v1/apis', { name: 'Dry', compatibility: 'backward' })
  const v1 = await created(s, `/v1/apis/${api.id}/spec`, { document: shopApi() })
  const compatible = shopApi()
  compatible.components.schemas.OrderStatus.enum.pop()
  delete compatible.components.schemas.Customer.properties.tier
  const refused = await upload(s, api, compatible, '?dry_run=true')
  t.equal(refused.statusCode, 422, 'an enum value removed from a request parameter breaks')
  t.equal(json(refused).code, 'incompatible')
  t.ok(json(refused).errors.some((e: Json) => e.code === 'enum-value-removed' && e.operation.path === '/orders'))

  await setPolicy(s, api, null)
  const dry = await upload(s, api, compatible, '?dry_run=true')
  t.equal(dry.statusCode, 200)
  const data = json(dry).data
  t.match(data, { checksum: /^sha256:/, unchanged: false, findings: [], diff: { from: { id: v1.id, number: 1 }, summary: { breaking: Number, non_breaking: Number }, total: Number } })
  t.ok(data.diff.summary.breaking > 0)
  t.equal(data.diff.changes[0].classification, 'breaking')
  t.equal(await versionCount(s, api), 1, 'a dry run stores nothing')

  const same = json(await upload(s, api, shopApi(), '?dry_run=true')).data
  t.same(same, { checksum: v1.checksum, unchanged: true, findings: [], converted_from: null }, 'no diff for the current document')
  const fresh = await created(s, '/v1/apis', { name: 'Fresh', compatibility: 'full' })
  t.same(Object.keys(json(await upload(s, fresh, shopApi(), '?dry_run=true')).data).sort(), ['checksum', 'converted_from', 'findings', 'unchanged'], 'nor without a current version')

  const schema = await created(s, '/v1/schemas', { name: 'Event', compatibility: 'backward', document: orderEventSchema() })
  const narrower = orderEventSchema()
  narrower.required.push('occurred_at')
  const schemaDry = await s.call({ method: 'POST', url: `/v1/schemas/${schema.id}/document?dry_run=true`, payload: { document: narrower } })
  t.equal(schemaDry.statusCode, 422)
  t.match(json(schemaDry), { code: 'incompatible', detail: /the schema's 'backward' compatibility/, errors: [{ code: 'property-became-required', operation: null }] })
})

t.test('restores are checked like uploads: clients of the current version must not break', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = await created(s, '/v1/apis', { name: 'Restore' })
  const v1 = await created(s, `/v1/apis/${api.id}/spec`, { document: shopApi() })
  await created(s, `/v1/apis/${api.id}/spec`, { document: withExport() })
  await setPolicy(s, api, 'backward')
  const refused = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/versions/${v1.id}/restore` })
  t.equal(refused.statusCode, 422, 'going back to version 1 removes an operation')
  t.match(json(refused), { code: 'incompatible', errors: [{ code: 'operation-removed', operation: { path: '/orders/export' }, version: 2 }] })
  t.equal(await versionCount(s, api), 2)
  await setPolicy(s, api, 'none')
  const restored = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/versions/${v1.id}/restore` })
  t.equal(restored.statusCode, 201, 'with the gate off, a rollback goes through')
  await setPolicy(s, api, 'backward')
  const again = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/versions/${v1.id}/restore` })
  t.equal(again.statusCode, 200, 'restoring the current content changes nothing and needs no check')
})

t.test('the gate is decided against the current version at the commit point', async (t) => {
  await t.test('a version committed meanwhile', async (t) => {
    const hold = holdNextTask('diff')
    const s = await startTestServer({ wrapDocuments: hold.wrap })
    t.teardown(s.close)
    const api = await created(s, '/v1/apis', { name: 'Race', compatibility: 'backward' })
    await created(s, `/v1/apis/${api.id}/spec`, { document: shopApi() })
    hold.arm()
    const withX = shopApi()
    withX.components.schemas.Order.properties.x = { type: 'string' }
    const withY = shopApi()
    withY.components.schemas.Order.properties.y = { type: 'string' }
    const slow = upload(s, api, withY)
    await hold.inFlight
    t.equal((await upload(s, api, withX)).statusCode, 201, 'another upload commits while the first is checked')
    hold.release()
    const late = await slow
    t.equal(late.statusCode, 422, 'the first upload, compatible with version 1, removes x of version 2')
    t.match(json(late), { code: 'incompatible', errors: [{ code: 'property-removed', version: 2 }] })
    t.equal(await versionCount(s, api), 2)
  })

  await t.test('a policy changed meanwhile', async (t) => {
    const hold = holdNextTask('diff')
    const s = await startTestServer({ wrapDocuments: hold.wrap })
    t.teardown(s.close)
    const api = await created(s, '/v1/apis', { name: 'Policy', compatibility: 'forward' })
    await created(s, `/v1/apis/${api.id}/spec`, { document: shopApi() })
    hold.arm()
    const slow = upload(s, api, withoutNote())
    await hold.inFlight
    t.equal((await setPolicy(s, api, 'backward')).statusCode, 200)
    hold.release()
    const late = await slow
    t.equal(late.statusCode, 422, 'forward compatible, but the policy became backward before the commit')
    t.equal(await versionCount(s, api), 1)
  })
})
