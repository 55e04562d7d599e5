import t from 'tap'
import { json, startTestServer, type TestServer } from '../helpers.js'
import { orderEventSchema, shopApi } from '../support/shop-api.js'

type Json = any

async function created(s: TestServer, url: string, payload: Json): Promise<Json> {
  const res = await s.call({ method: 'POST', url, payload })
  if (res.statusCode !== 201) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
  return json(res).data
}

/** An API with three versions: v2 adds a status value, v3 removes an operation and renames a property. */
async function apiWithHistory(s: TestServer): Promise<{ api: Json; versions: Json[] }> {
  const api = await created(s, '/v1/apis', { name: 'Shop' })
  const v1 = shopApi()
  const v2 = shopApi()
  v2.components.schemas.OrderStatus.enum.push('refunded')
  v2.info.version = '2.4.0'
  const v3 = structuredClone(v2)
  delete v3.paths['/orders/{orderId}'].patch
  v3.components.schemas.Customer.properties.full_name = v3.components.schemas.Customer.properties.name
  delete v3.components.schemas.Customer.properties.name
  const versions = []
  for (const document of [v1, v2, v3]) versions.push(await created(s, `/v1/apis/${api.id}/spec`, { document }))
  return { api, versions }
}

t.test('GET /v1/apis/{api}/diff: the current version against the one before, breaking changes first', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const { api, versions } = await apiWithHistory(s)
  const res = await s.call({ method: 'GET', url: `/v1/apis/${api.id}/diff` })
  t.equal(res.statusCode, 200)
  const body = json(res)
  t.match(body.data.from, { id: versions[1].id, number: 2, api_id: api.id })
  t.match(body.data.to, { id: versions[2].id, number: 3 })
  t.ok(body.data.summary.breaking > 0)
  t.equal(body.total, body.data.summary.breaking + body.data.summary.non_breaking + body.data.summary.annotation)
  const changes: Json[] = body.data.changes
  t.equal(changes.length, Math.min(20, body.total), 'a page of 20 by default')
  t.match(changes[0], {
    kind: 'removed', classification: 'breaking', check: String, message: String, pointer: String, component: null,
    operation: { method: String, path: String },
  })
  const all = json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/diff?limit=100` })).data.changes as Json[]
  t.ok(all.some((c) => c.check === 'operation-removed' && c.operation.method === 'patch' && c.operation.path === '/orders/{orderId}'
    && c.pointer === '/paths/~1orders~1{orderId}/patch'), 'the removed operation, with a pointer into the old document')
  t.ok(all.some((c) => c.check === 'property-removed' && c.operation.path === '/customers/{customerId}' && /Customer\.name/.test(c.message)))
  t.ok(all.some((c) => c.check === 'property-added' && c.operation.path === '/orders' && c.operation.method === 'get'), 'the renamed property at every operation that returns a customer')
  const kinds = all.map((c) => c.classification)
  t.same(kinds, [...kinds].sort((x, y) => ['breaking', 'non-breaking', 'annotation'].indexOf(x) - ['breaking', 'non-breaking', 'annotation'].indexOf(y)))
})

t.test('diff: from and to by number, a class, pages; versions that do not exist answer 404', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const { api } = await apiWithHistory(s)
  const oneToTwo = json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/diff?from=1&to=2&limit=100` }))
  t.match(oneToTwo.data, { from: { number: 1 }, to: { number: 2 } })
  t.ok(oneToTwo.data.changes.some((c: Json) => c.check === 'enum-value-added' && c.classification === 'breaking' && c.operation.path === '/orders/{orderId}'))
  t.ok(oneToTwo.data.changes.some((c: Json) => c.check === 'enum-value-added' && c.classification === 'non-breaking' && /query parameter `status`/.test(c.message)))

  const backwards = json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/diff?from=3&to=1&limit=100` }))
  t.ok(backwards.data.changes.some((c: Json) => c.check === 'operation-added' && c.operation.method === 'patch'), 'from a later version to an earlier one')

  const breaking = json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/diff?from=1&to=3&classification=breaking&limit=2&page=2` }))
  t.equal(breaking.total, breaking.data.summary.breaking)
  t.equal(breaking.data.changes.length, 2)
  t.ok(breaking.data.changes.every((c: Json) => c.classification === 'breaking'))

  const same = json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/diff?from=2&to=2` }))
  t.same(same.data.summary, { breaking: 0, non_breaking: 0, annotation: 0 })
  t.same(same.data.changes, [])

  const first = await s.call({ method: 'GET', url: `/v1/apis/${api.id}/diff?to=1` })
  t.equal(first.statusCode, 404)
  t.match(json(first), { code: 'not_found', detail: /before version 1/ })
  t.equal((await s.call({ method: 'GET', url: `/v1/apis/${api.id}/diff?from=9` })).statusCode, 404)
  for (const query of ['from=0', 'to=x', 'classification=major', 'limit=1000', 'page=0']) {
    const bad = await s.call({ method: 'GET', url: `/v1/apis/${api.id}/diff?${query}` })
    t.equal(bad.statusCode, 400, query)
    t.equal(json(bad).code, 'invalid_request')
  }
  const empty = await created(s, '/v1/apis', { name: 'Empty' })
  t.equal((await s.call({ method: 'GET', url: `/v1/apis/${empty.id}/diff` })).statusCode, 404, 'an API without versions')
})

t.test('diff is computed once per pair of documents (kept by their checksums)', async (t) => {
  let diffs = 0
  const s = await startTestServer({
    wrapDocuments: (inner) => ({ ...bind(inner), diff: (task) => { diffs += 1; return inner.diff(task) } }),
  })
  t.teardown(s.close)
  const { api } = await apiWithHistory(s)
  for (let i = 0; i < 3; i++) t.equal((await s.call({ method: 'GET', url: `/v1/apis/${api.id}/diff?from=1&to=3` })).statusCode, 200)
  t.equal(diffs, 1)
  // Another API with the same two documents reads the same result.
  const other = await created(s, '/v1/apis', { name: 'Copy' })
  const v1 = shopApi()
  const v3 = json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/spec` }))
  await created(s, `/v1/apis/${other.id}/spec`, { document: v1 })
  await created(s, `/v1/apis/${other.id}/spec`, { document: v3 })
  t.equal((await s.call({ method: 'GET', url: `/v1/apis/${other.id}/diff` })).statusCode, 200)
  t.equal(diffs, 1)
})

t.test('GET /v1/schemas/{schema}/diff: classified for backward compatibility; rulesets have none', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const schema = await created(s, '/v1/schemas', { name: 'Order event', document: orderEventSchema() })
  const next = orderEventSchema()
  next.required.push('occurred_at')
  next.properties.type.enum.push('order.refunded')
  await created(s, `/v1/schemas/${schema.id}/document`, { document: next })
  const body = json(await s.call({ method: 'GET', url: `/v1/schemas/${schema.id}/diff` }))
  t.match(body.data, { from: { number: 1, schema_id: schema.id }, to: { number: 2 }, summary: { breaking: 1, non_breaking: 1 } })
  t.match(body.data.changes, [
    { classification: 'breaking', check: 'property-became-required', operation: null, component: null, pointer: '/required' },
    { classification: 'non-breaking', check: 'enum-value-added', pointer: '/properties/type/enum/3' },
  ])
  const ruleset = await created(s, '/v1/rulesets', { name: 'Rules' })
  t.equal((await s.call({ method: 'GET', url: `/v1/rulesets/${ruleset.id}/diff` })).statusCode, 404)
})

t.test('the diff is described in /openapi.json', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const spec = json(await s.call({ method: 'GET', url: '/openapi.json', key: null }))
  for (const path of ['/v1/apis/{api}/diff', '/v1/schemas/{schema}/diff']) {
    const op = spec.paths[path]?.get
    t.ok(op, path)
    t.same(op.parameters.filter((p: Json) => p.in === 'query').map((p: Json) => p.name).sort(), ['classification', 'from', 'limit', 'page', 'to'])
    const changes = op.responses['200'].content['application/json'].schema.properties.data.properties.changes
    t.same(Object.keys(changes.items.properties).sort(), ['check', 'classification', 'component', 'kind', 'message', 'operation', 'pointer'])
  }
})

/** The pool's methods bound to it, to wrap one of them. */
function bind(inner: Json): Json {
  return {
    digest: (task: Json) => inner.digest(task), check: (task: Json) => inner.check(task), lint: (task: Json) => inner.lint(task),
    convert: (task: Json) => inner.convert(task), bundle: (task: Json) => inner.bundle(task), diff: (task: Json) => inner.diff(task),
    close: () => inner.close(),
  }
}
