/**
 * The changelog (issue 20, item 5): `GET …/changelog` newest first and paged with each version's
 * counts and messages, the public changelog and its Atom feed, and the "Changelog" page of a site.
 */
import t from 'tap'
import { json, startTestServer, type TestServer } from '../helpers.js'
import { orderEventSchema, shopApi } from '../support/shop-api.js'

type Json = any

async function created(s: TestServer, url: string, payload: Json): Promise<Json> {
  const res = await s.call({ method: 'POST', url, payload })
  if (res.statusCode !== 201) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
  return json(res).data
}

/** A public shop API with three versions: the first, one that removes the note of orders, one that adds an operation. */
async function threeVersions(s: TestServer): Promise<Json> {
  const api = await created(s, '/v1/apis', { name: 'Shop', visibility: 'public' })
  const v1 = shopApi()
  await created(s, `/v1/apis/${api.id}/spec`, { document: v1 })
  const v2 = shopApi()
  v2.info.version = '3.0.0'
  delete v2.components.schemas.Order.properties.note
  await created(s, `/v1/apis/${api.id}/spec`, { document: v2 })
  const v3 = structuredClone(v2)
  v3.info.version = '3.1.0'
  v3.paths['/orders/export'] = { get: { operationId: 'exportOrders', responses: { '200': { description: 'CSV <b>file</b>.', content: { 'text/csv': { schema: { type: 'string' } } } } } } }
  await created(s, `/v1/apis/${api.id}/spec`, { document: v3 })
  return api
}

t.test('GET /v1/apis/{api}/changelog lists versions newest first with counts and messages, paged', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = await threeVersions(s)
  const res = await s.call({ method: 'GET', url: `/v1/apis/${api.id}/changelog` })
  t.equal(res.statusCode, 200)
  const body = json(res)
  t.equal(body.total, 3)
  t.same(body.data.map((e: Json) => [e.version.number, e.previous]), [[3, 2], [2, 1], [1, null]])
  const [v3, v2, v1] = body.data
  t.match(v3, { version: { version: '3.1.0', source: 'upload', created_at: String }, summary: { breaking: 0, non_breaking: 1 }, breaking: [] })
  t.match(v3.non_breaking, [{ check: 'operation-added', operations: [{ method: 'get', path: '/orders/export' }] }])
  t.match(v2.summary, { breaking: 4, non_breaking: 0 })
  t.ok(v2.breaking.length < 4, 'a change reported at several operations is listed once with them')
  for (const change of v2.breaking) t.match(change, { check: 'property-removed', message: /property `Order.note` was removed/, component: null })
  t.equal(v2.breaking.reduce((n: number, c: Json) => n + c.operations.length, 0), 4, 'the four operations that return an order')
  t.same(v1, { ...v1, previous: null, summary: null, breaking: [], non_breaking: [] }, 'the first version has nothing to compare with')

  const page2 = json(await s.call({ method: 'GET', url: `/v1/apis/${api.slug}/changelog?page=2&limit=2` }))
  t.equal(page2.total, 3)
  t.same(page2.data.map((e: Json) => e.version.number), [1])

  const schema = await created(s, '/v1/schemas', { name: 'Order event', document: orderEventSchema() })
  const narrower = orderEventSchema()
  narrower.required.push('occurred_at')
  await created(s, `/v1/schemas/${schema.id}/document`, { document: narrower })
  const schemaLog = json(await s.call({ method: 'GET', url: `/v1/schemas/${schema.id}/changelog` }))
  t.match(schemaLog.data[0], { version: { number: 2, schema_id: schema.id }, summary: { breaking: 1 }, breaking: [{ check: 'property-became-required', operations: [] }] })

  const ruleset = await created(s, '/v1/rulesets', { name: 'Rules' })
  t.equal((await s.call({ method: 'GET', url: `/v1/rulesets/${ruleset.id}/changelog` })).statusCode, 404, 'rulesets have no changelog')
  const spec = json(await s.call({ method: 'GET', url: '/openapi.json', key: null }))
  t.ok(spec.paths['/v1/apis/{api}/changelog'].get, 'described in /openapi.json')
})

t.test('a public API has its changelog and an Atom feed on the public registry; a private one does not', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = await threeVersions(s)
  const pub = await s.call({ method: 'GET', url: `/@acme/apis/${api.slug}/changelog`, key: null })
  t.equal(pub.statusCode, 200)
  t.same(json(pub).data.map((e: Json) => e.version.number), [3, 2, 1])

  const feed = await s.call({ method: 'GET', url: `/@acme/apis/${api.slug}/changelog.atom`, key: null, headers: { host: 'registry.example' } })
  t.equal(feed.statusCode, 200)
  t.match(feed.headers['content-type'], /^application\/atom\+xml/)
  t.match(feed.body, /^<\?xml version="1.0" encoding="utf-8"\?>\n<feed xmlns="http:\/\/www.w3.org\/2005\/Atom">/)
  t.match(feed.body, `<link rel="self" type="application/atom+xml" href="http://registry.example/@acme/apis/${api.slug}/changelog.atom"/>`)
  const entries = [...feed.body.matchAll(/<entry>([\s\S]*?)<\/entry>/g)].map((m) => m[1])
  t.equal(entries.length, 3)
  t.match(entries[0], '<title>Version 3 (3.1.0): 0 breaking changes, 1 non-breaking change</title>')
  t.match(entries[0], `<id>http://registry.example/@acme/apis/${api.slug}/versions/3</id>`)
  t.match(entries[1], '<title>Version 2 (3.0.0): 4 breaking changes, 0 non-breaking changes</title>')
  t.match(entries[1], /<content type="html">&lt;h3&gt;Breaking changes&lt;\/h3&gt;/, 'the content is escaped HTML')
  t.match(entries[1], 'property `Order.note` was removed')
  t.match(entries[2], '<title>Version 1 (2.3.0): first version</title>')
  t.match(feed.body, /<updated>\d{4}-\d\d-\d\dT[^<]+<\/updated>/)

  await s.call({ method: 'PATCH', url: `/v1/apis/${api.id}`, payload: { visibility: 'private' } })
  t.equal((await s.call({ method: 'GET', url: `/@acme/apis/${api.slug}/changelog.atom`, key: null })).statusCode, 404)
  t.equal((await s.call({ method: 'GET', url: `/@acme/apis/${api.slug}/changelog`, key: null })).statusCode, 404)
})

t.test('every docs site that includes an API has its Changelog page', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = await threeVersions(s)
  await created(s, '/v1/sites', { name: 'Docs', slug: 'docs', visibility: 'public', api_ids: [api.id] })
  const base = '/@acme/sites/docs'
  const reference = await s.call({ method: 'GET', url: `${base}/apis/${api.slug}`, key: null })
  t.match(reference.body, `<a href="${base}/apis/${api.slug}/changelog">Changelog</a>`, 'the reference page links it')
  const page = await s.call({ method: 'GET', url: `${base}/apis/${api.slug}/changelog`, key: null })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.match(page.body, '<h1>Shop: changelog</h1>')
  t.match(page.body, '<a href="' + base + '/apis/' + api.slug + '/changelog" aria-current="page">Changelog</a>')
  const headings = [...page.body.matchAll(/<h2>(Version [^<]*)<\/h2>/g)].map((m) => m[1])
  t.same(headings, ['Version 3 (3.1.0): 0 breaking changes, 1 non-breaking change', 'Version 2 (3.0.0): 4 breaking changes, 0 non-breaking changes', 'Version 1 (2.3.0): first version'])
  t.match(page.body, /<li><code>(GET|POST|PATCH) \/orders[^<]*<\/code>: response \d+ \(application\/json\): property `Order.note` was removed<\/li>/)
  t.notMatch(page.body, '<script', 'the page runs no script')
  t.equal((await s.call({ method: 'GET', url: `${base}/apis/nope/changelog`, key: null })).statusCode, 404)
})
