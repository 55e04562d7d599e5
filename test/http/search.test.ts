/**
 * `GET /v1/search` (issue 17, item 11): the organization's APIs, schemas and rulesets, found by name,
 * slug, description and their current documents' title, paths, operation ids, summaries and tags;
 * ranked, paged, typo-tolerant, kept up to date with every write.
 */
import t from 'tap'
import { json, petstore, startTestServer, type TestServer } from '../helpers.js'

const ORDERS = {
  openapi: '3.1.0',
  info: { title: 'Shop orders', version: '1.0.0', description: 'Orders placed in the shop.' },
  tags: [{ name: 'fulfilment' }],
  paths: {
    '/orders/{id}/refunds': {
      post: { operationId: 'refundOrder', summary: 'Refund an order', tags: ['payments'], responses: { '201': { description: 'refunded' } } },
    },
  },
}

async function createApi(s: TestServer, fields: Record<string, string>, document: unknown): Promise<{ id: string; slug: string }> {
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: fields })).data
  const published = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document } })
  if (published.statusCode !== 201) throw new Error(published.body)
  return api
}

async function find(s: TestServer, query: string): Promise<{ names: string[]; body: any }> {
  const response = await s.call({ method: 'GET', url: `/v1/search?${query}` })
  if (response.statusCode !== 200) throw new Error(`${response.statusCode} ${response.body}`)
  const body = json(response)
  return { names: body.data.map((hit: { resource: { name: string } }) => hit.resource.name), body }
}

t.test('search finds resources by what they are called and by what their documents hold', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const orders = await createApi(s, { name: 'Orders' }, ORDERS)
  await createApi(s, { name: 'Petstore', description: 'Adopt a pet' }, petstore())
  await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Order history' } })
  await s.call({ method: 'POST', url: '/v1/schemas', payload: { name: 'Pet', document: { title: 'A pet of the store', type: 'object' } } })
  await s.call({ method: 'POST', url: '/v1/rulesets', payload: { name: 'House rules', description: 'what every petstore obeys' } })

  t.same((await find(s, 'q=refundOrder')).names, ['Orders'], 'an operation id')
  t.same((await find(s, 'q=refunds')).names, ['Orders'], 'a word of a path')
  t.same((await find(s, 'q=fulfilment')).names, ['Orders'], 'a tag')
  t.same((await find(s, 'q=shop%20orders')).names, ['Orders'], 'the title: every word must match')
  t.same((await find(s, 'q=listPets')).names, ['Petstore'], 'an operation id of another document')
  t.same((await find(s, 'q=list%20pets')).names, ['Petstore'], 'a summary')
  t.same((await find(s, 'q=refnd')).names, ['Orders'], 'a typo')
  t.same((await find(s, 'q=ord')).names.sort(), ['Order history', 'Orders'], 'a prefix')
  const pets = await find(s, 'q=pet')
  t.same(pets.names.slice(0, 2).sort(), ['Pet', 'Petstore'], 'names rank first')
  t.ok(pets.names.includes('House rules'), 'descriptions are searched too')
  t.same(pets.body.data[0].matched.includes('name'), true, 'a hit says where it matched')
  t.same((await find(s, 'q=pet&kind=schema')).names, ['Pet'], 'one kind')
  const paged = await find(s, 'q=pet&limit=1&page=2')
  t.equal(paged.body.total, pets.body.total, 'total counts every hit')
  t.same(paged.names, [pets.names[1]], 'pages go down the ranking')
  t.match(pets.body.data[0].resource, { id: String, slug: String, current: {} }, 'hits carry the resource as the lists show it')
  t.same((await find(s, 'q=zebra')).body, { data: [], total: 0 })

  // Kept up to date: a new version, a rename, a deletion, found at the next search.
  const v2 = { ...ORDERS, paths: { '/orders/{id}/cancellation': { post: { operationId: 'cancelOrder', responses: { '200': { description: 'ok' } } } } } }
  t.equal((await s.call({ method: 'POST', url: `/v1/apis/${orders.id}/spec`, payload: { document: v2 } })).statusCode, 201)
  t.same((await find(s, 'q=cancelOrder')).names, ['Orders'], 'the new current document')
  t.same((await find(s, 'q=refundOrder')).names, [], 'and no longer the old one')
  await s.call({ method: 'PATCH', url: `/v1/apis/${orders.id}`, payload: { name: 'Purchases' } })
  t.same((await find(s, 'q=purchases')).names, ['Purchases'], 'a new name')
  await s.call({ method: 'DELETE', url: `/v1/apis/${orders.id}` })
  t.same((await find(s, 'q=cancelOrder')).names, [], 'a deleted API is gone')

  for (const query of ['', 'q=', `q=${'x'.repeat(201)}`, 'q=pet&kind=site']) {
    t.equal((await s.call({ method: 'GET', url: `/v1/search?${query}` })).statusCode, 400, `refused: ${query || 'no q'}`)
  }
})

t.test("search sees only the caller's organization", async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Petstore' } })
  const other = (await s.registry.organizations.create('globex', 'Globex')).secret
  t.same(json(await s.call({ method: 'GET', url: '/v1/search?q=petstore', key: other })), { data: [], total: 0 })
  t.equal((await s.call({ method: 'GET', url: '/v1/search?q=petstore', key: null })).statusCode, 401)
})

t.test('the public registry searches public resources only: /@{org}/search, and the /@{org} page for browsers', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const hostile = '<script>alert(1)</script><img src=x onerror=alert(2)>"\'&'
  const orders = await createApi(s, { name: `Orders ${hostile}`, visibility: 'public', description: `Orders ${hostile}` }, ORDERS)
  await createApi(s, { name: 'Refund ledger', visibility: 'private' }, { ...ORDERS, info: { ...ORDERS.info, title: 'Ledger' } })
  await s.call({ method: 'POST', url: '/v1/schemas', payload: { name: 'Refund', visibility: 'public', document: { type: 'object' } } })
  const other = (await s.registry.organizations.create('globex', 'Globex')).secret
  await s.call({ method: 'POST', url: '/v1/apis', key: other, payload: { name: 'Refunds of Globex', visibility: 'public' } })

  const publicFind = async (query: string, key: string | null = null) => {
    const response = await s.call({ method: 'GET', url: `/@acme/search?${query}`, key })
    if (response.statusCode !== 200) throw new Error(`${response.statusCode} ${response.body}`)
    return json(response)
  }
  const names = (body: any) => body.data.map((hit: { resource: { name: string } }) => hit.resource.name).sort()
  t.same(names(await publicFind('q=refund')), ['Orders ' + hostile, 'Refund'], "without a key: the organization's public resources, by name and by document")
  t.same(names(await publicFind('q=refnd&kind=schema')), ['Refund'], 'typo-tolerant, one kind')
  t.same(names(await publicFind('q=refund', s.key)), ['Orders ' + hostile, 'Refund', 'Refund ledger'], 'a key of the organization finds its private ones too')
  t.same(names(await publicFind('q=refund', other)), ['Orders ' + hostile, 'Refund'], "another organization's key does not")
  t.match((await publicFind('q=refund&limit=1')), { total: 2, data: [{ kind: String, score: Number, matched: Array, resource: { slug: String } }] }, 'ranked and paged as /v1/search')
  t.equal((await s.call({ method: 'GET', url: '/@nobody/search?q=x', key: null })).statusCode, 404)
  t.equal((await s.call({ method: 'GET', url: '/@acme/search', key: null })).statusCode, 400, 'q is required')

  // A resource made private leaves the public search at once.
  await s.call({ method: 'PATCH', url: '/v1/schemas/refund', payload: { visibility: 'private' } })
  t.same(names(await publicFind('q=refund')), ['Orders ' + hostile], 'made private: gone')

  // A browser: the organization's page has a search form (a GET to itself, no script) and shows the hits.
  const visit = (url: string) => s.call({ method: 'GET', url, key: null, headers: { accept: 'text/html' } })
  const index = await visit('/@acme')
  t.match(index.body, /<form class="search" method="get" action="\/@acme" role="search">/)
  t.match(index.body, '<label for="q">')
  t.match(String(index.headers['content-security-policy']), "form-action 'self'")
  const page = await visit('/@acme?q=refund')
  t.equal(page.statusCode, 200)
  t.match(page.body, 'Results for “refund”')
  t.match(page.body, '1 result, best first.')
  t.match(page.body, `href="/@acme/apis/${orders.slug}/latest"`, 'links the document')
  t.notMatch(page.body, 'Refund ledger', 'no private resource, even for the organization')
  t.notMatch(page.body, /<img|<script|onerror=alert\(2\)>/, 'stored markup is never markup')
  t.match(page.body, 'Orders &lt;script&gt;alert(1)&lt;/script&gt;')
  const typed = await visit(`/@acme?q=${encodeURIComponent('"><script>alert(3)</script>')}`)
  t.match(typed.body, 'value="&quot;&gt;&lt;script&gt;alert(3)&lt;/script&gt;"', 'the words typed are escaped in the form')
  t.notMatch(typed.body, '<script>alert(3)')
  t.match(typed.body, 'Nothing public matches.')
  t.equal((await visit('/@nobody?q=x')).statusCode, 404)
  t.match(json(await s.call({ method: 'GET', url: '/@acme?q=refund', key: null })).data, { organization: { slug: 'acme' } }, 'JSON clients get the index (they search at /@{org}/search)')
})

t.test("the /@{org} page's results are paged with links", async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  for (let i = 1; i <= 23; i++) await s.call({ method: 'POST', url: '/v1/apis', payload: { name: `Billing ${i}`, visibility: 'public' } })
  const visit = (url: string) => s.call({ method: 'GET', url, key: null, headers: { accept: 'text/html' } })
  const first = await visit('/@acme?q=billing')
  t.match(first.body, '23 results, 1 to 20 shown, best first.')
  t.match(first.body, 'href="/@acme?q=billing&amp;page=2" rel="next"')
  t.notMatch(first.body, 'rel="prev"')
  const second = await visit('/@acme?q=billing&page=2')
  t.match(second.body, '23 results, 21 to 23 shown')
  t.match(second.body, 'href="/@acme?q=billing" rel="prev"')
  t.notMatch(second.body, 'rel="next"')
  t.equal((second.body.match(/<tr><td>API<\/td>/g) ?? []).length, 3, 'the last three')
  t.match((await visit('/@acme?q=billing&page=9')).body, 'none on this page')
})
