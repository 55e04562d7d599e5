/**
 * A large API's reference in parts on its documentation site: the API's page lists its sections, each
 * section's page runs Scalar on that section's document, and the part documents hold every operation
 * once, resolve every `$ref`, and are served gzipped with an ETag. A document under the threshold keeps
 * its one Scalar page.
 */
import { gunzipSync } from 'node:zlib'
import t from 'tap'
import { validateOpenApi } from '../../src/documents/openapi.js'
import { json, petstore, startTestServer, type TestServer } from '../helpers.js'
import { shopApi } from '../support/shop-api.js'

const BASE = '/@acme/sites/docs'
/** The shop document is about 9 KB: over this, it is split; the petstore (under 1 KB) is not. */
const SPLIT_ABOVE = 2000

type Json = Record<string, any>

async function publish(s: TestServer) {
  const shop = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Shop', visibility: 'public' } })).data
  await s.call({ method: 'POST', url: `/v1/apis/${shop.id}/spec`, payload: { document: shopApi() } })
  const pets = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Petstore', visibility: 'public' } })).data
  await s.call({ method: 'POST', url: `/v1/apis/${pets.id}/spec`, payload: { document: petstore() } })
  const site = json(await s.call({
    method: 'POST', url: '/v1/sites',
    payload: { name: 'Docs', slug: 'docs', visibility: 'public', api_ids: [shop.id, pets.id], domains: ['docs.acme.example'] },
  })).data
  return { shop, pets, site }
}

const get = (s: TestServer, url: string, headers: Record<string, string> = {}) => s.call({ method: 'GET', url, key: null, headers })
const configOf = (body: string) => JSON.parse(/<script type="application\/json" id="reference-config">(.*?)<\/script>/.exec(body)![1])
const partLinks = (body: string) => [...body.matchAll(/<a class="part-name" href="([^"]+)">([^<]+)<\/a>/g)].map((m) => ({ href: m[1], name: m[2] }))
const operationsOf = (doc: Json) => Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
  Object.keys(item as Json).filter((key) => ['get', 'put', 'post', 'delete', 'patch'].includes(key)).map((method) => `${method} ${path}`))

t.test("a large API's page lists its sections; each section is its own Scalar page on its own document", async (t) => {
  const s = await startTestServer({ referenceSplitBytes: SPLIT_ABOVE })
  t.teardown(s.close)
  await publish(s)

  const index = await get(s, `${BASE}/apis/shop`)
  t.equal(index.statusCode, 200)
  t.match(index.headers['content-type'], /^text\/html/)
  t.match(index.headers['content-security-policy'], /script-src 'self'/)
  t.match(index.body, '<h1>Shop</h1>')
  t.match(index.body, /Version 2\.3\.0 · \d+ operations in 3 sections/)
  t.match(index.body, `<a href="${BASE}/apis/shop/openapi.json">Download the whole document</a>`)
  t.notMatch(index.body, '<script', 'the overview runs no script: it is usable as soon as it arrives')
  const links = partLinks(index.body)
  t.same(links.map((l) => l.name), ['orders', 'customers', 'products'], "in the document's tag order")

  const whole = shopApi()
  const seen: string[] = []
  for (const link of links) {
    const page = await get(s, link.href)
    t.equal(page.statusCode, 200, link.href)
    t.match(page.body, `<title>${link.name} · Shop · Docs</title>`)
    t.match(page.body, `<a href="${BASE}/apis/shop">Shop: all sections</a>`, 'the way back to the overview')
    const config = configOf(page.body)
    t.equal(config.url, `${link.href}/openapi.json`)
    t.equal(config.hideModels, true)
    t.equal(config.documentDownloadType, 'none', 'no download of the part: the overview links the whole document')
    t.equal(config.withDefaultFonts, false, "the sites' Scalar configuration otherwise")

    const res = await get(s, config.url)
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^application\/json/)
    const part = json(res)
    t.same(validateOpenApi(part).problems, [], `${link.name}: a valid document, every $ref resolves`)
    t.same(part.info, whole.info)
    t.same(part.tags, whole.tags.filter((tag: Json) => tag.name === link.name))
    seen.push(...operationsOf(part))
  }
  t.same(seen.sort(), operationsOf(whole).sort(), 'the sections hold every operation once')

  const [first, second, third] = links
  const middle = (await get(s, second.href)).body
  t.match(middle, `<a href="${first.href}" rel="prev">← orders</a>`)
  t.match(middle, `<a href="${third.href}" rel="next">products →</a>`)

  const small = await get(s, `${BASE}/apis/petstore`)
  t.equal(configOf(small.body).url, `${BASE}/apis/petstore/openapi.json`, 'a small API keeps its one Scalar page')
  t.equal((await get(s, `${BASE}/apis/petstore/parts/pets`)).statusCode, 404, 'and has no parts')
  t.equal((await get(s, `${BASE}/apis/petstore/parts/pets/openapi.json`)).statusCode, 404)
})

t.test('part documents: gzip when accepted, ETag and 304, unknown parts 404', async (t) => {
  const s = await startTestServer({ referenceSplitBytes: SPLIT_ABOVE })
  t.teardown(s.close)
  const { shop } = await publish(s)
  const url = `${BASE}/apis/shop/parts/orders/openapi.json`

  const zipped = await get(s, url, { 'accept-encoding': 'gzip, deflate' })
  t.equal(zipped.statusCode, 200)
  t.equal(zipped.headers['content-encoding'], 'gzip')
  t.equal(zipped.headers.vary, 'accept-encoding')
  const plain = await get(s, url)
  t.equal(plain.headers['content-encoding'], undefined, 'unzipped for a client that does not accept gzip')
  t.same(JSON.parse(gunzipSync(zipped.rawPayload).toString('utf8')), json(plain), 'the same document either way')
  const etag = plain.headers.etag as string
  t.match(etag, /^"sha256:[0-9a-f]{64}\/orders"$/)
  t.equal(plain.headers['cache-control'], 'no-cache')
  t.equal((await get(s, url, { 'if-none-match': etag })).statusCode, 304)

  const unknownPage = await get(s, `${BASE}/apis/shop/parts/nope`)
  t.equal(unknownPage.statusCode, 404)
  t.match(unknownPage.body, 'Page not found', 'an unknown section is the HTML 404 page')
  const unknownDoc = await get(s, `${BASE}/apis/shop/parts/nope/openapi.json`)
  t.equal(unknownDoc.statusCode, 404)
  t.equal(json(unknownDoc).code, 'not_found')

  // A new version: its parts are its own (another checksum), the old ETag no longer matches.
  const next = shopApi()
  next.info.version = '2.4.0'
  next.paths['/orders'].get.summary = 'List the orders'
  await s.call({ method: 'POST', url: `/v1/apis/${shop.id}/spec`, payload: { document: next } })
  const changed = await get(s, url, { 'if-none-match': etag })
  t.equal(changed.statusCode, 200)
  t.equal(json(changed).paths['/orders'].get.summary, 'List the orders')
  t.match((await get(s, `${BASE}/apis/shop`)).body, 'Version 2.4.0')

  await s.call({ method: 'PATCH', url: `/v1/apis/${shop.id}`, payload: { visibility: 'private' } })
  for (const gone of [`${BASE}/apis/shop`, `${BASE}/apis/shop/parts/orders`, url]) {
    t.equal((await get(s, gone)).statusCode, 404, `a private API's parts are not served: ${gone}`)
  }
})

t.test("on the site's own domain, the parts are at its root", async (t) => {
  const s = await startTestServer({ referenceSplitBytes: SPLIT_ABOVE })
  t.teardown(s.close)
  await publish(s)
  const host = { host: 'docs.acme.example' }
  const index = await get(s, '/apis/shop', host)
  t.equal(index.statusCode, 200)
  t.same(partLinks(index.body).map((l) => l.href), ['/apis/shop/parts/orders', '/apis/shop/parts/customers', '/apis/shop/parts/products'])
  const part = await get(s, '/apis/shop/parts/customers', host)
  t.equal(configOf(part.body).url, '/apis/shop/parts/customers/openapi.json')
  t.ok(operationsOf(json(await get(s, '/apis/shop/parts/customers/openapi.json', host))).length > 0)
})

t.test('REGISTRY_REFERENCE_SPLIT=0 never splits', async (t) => {
  const s = await startTestServer({ referenceSplitBytes: 0 })
  t.teardown(s.close)
  await publish(s)
  t.equal(configOf((await get(s, `${BASE}/apis/shop`)).body).url, `${BASE}/apis/shop/openapi.json`)
  t.equal((await get(s, `${BASE}/apis/shop/parts/orders`)).statusCode, 404)
})

t.test("the console's reference of a large version: its sections through /v1, each shown alone in the frame", async (t) => {
  const s = await startTestServer({ referenceSplitBytes: SPLIT_ABOVE })
  t.teardown(s.close)
  const { shop, pets } = await publish(s)
  await s.call({ method: 'PATCH', url: `/v1/apis/${shop.id}`, payload: { visibility: 'private' } })
  const version = json(await s.call({ method: 'GET', url: `/v1/apis/${shop.id}/versions` })).data[0]
  const at = `/v1/apis/${shop.id}/versions/${version.id}/reference-parts`

  const listed = await s.call({ method: 'GET', url: at })
  t.equal(listed.statusCode, 200)
  const parts = json(listed).data as Json[]
  t.same(parts.map((p) => p.name), ['orders', 'customers', 'products'], 'the sections the site shows, in the same order')
  t.ok(parts.every((p) => typeof p.slug === 'string' && p.operations > 0))
  t.equal((await s.call({ method: 'GET', url: at, key: null })).statusCode, 401, 'a private API\'s sections need a key or a session')

  const last = parts[parts.length - 1]
  const res = await s.call({ method: 'GET', url: `${at}/${last.slug}` })
  t.equal(res.statusCode, 200)
  const doc = json(res)
  t.same(validateOpenApi(doc).problems, [], 'a complete document whose every $ref resolves')
  t.equal(operationsOf(doc).length, last.operations)
  t.equal((await s.call({ method: 'GET', url: `${at}/${last.slug}`, headers: { 'if-none-match': res.headers.etag as string } })).statusCode, 304)
  t.equal((await s.call({ method: 'GET', url: `${at}/no-such-part` })).statusCode, 404)
  t.equal((await s.call({ method: 'GET', url: `${at}/${last.slug}`, key: null })).statusCode, 401)

  const frame = await s.call({ method: 'GET', url: `/console/_reference/apis/${shop.id}/versions/${version.id}?part=${last.slug}`, key: null })
  t.equal(frame.statusCode, 200)
  const config = configOf(frame.body)
  t.equal(config.url, `${at}/${last.slug}`, 'Scalar reads the part through /v1 with the console\'s session')
  t.equal(config.hideModels, true)
  const whole = configOf((await s.call({ method: 'GET', url: `/console/_reference/apis/${shop.id}/versions/${version.id}`, key: null })).body)
  t.equal(whole.url, `/v1/apis/${shop.id}/versions/${version.id}/document`, 'without ?part= the whole document, as before')

  const small = json(await s.call({ method: 'GET', url: `/v1/apis/${pets.id}/versions` })).data[0]
  t.same(json(await s.call({ method: 'GET', url: `/v1/apis/${pets.id}/versions/${small.id}/reference-parts` })).data, [], 'a document under the threshold has no sections')
  t.equal((await s.call({ method: 'GET', url: `/v1/apis/${pets.id}/versions/${small.id}/reference-parts/anything` })).statusCode, 404)
})
