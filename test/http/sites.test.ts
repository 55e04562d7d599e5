import t from 'tap'
import { json, petstore, startTestServer, tempDir, type TestServer } from '../helpers.js'

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/

async function createApi(s: TestServer, name: string, options: { key?: string; visibility?: string } = {}) {
  const res = await s.call({ method: 'POST', url: '/v1/apis', key: options.key, payload: { name, visibility: options.visibility ?? 'public' } })
  return json(res).data as { id: string; slug: string }
}

t.test('create, get, update, delete a site with its fields', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = await createApi(s, 'Petstore')

  const created = await s.call({ method: 'POST', url: '/v1/sites', payload: { name: 'Developer Docs', api_ids: [api.id] } })
  t.equal(created.statusCode, 201)
  const site = json(created).data
  t.same(Object.keys(site).sort(), ['api_ids', 'created_at', 'domains', 'id', 'name', 'organization_id', 'slug', 'title', 'updated_at', 'visibility'])
  t.match(site, { organization_id: s.orgId, name: 'Developer Docs', slug: 'developer-docs', title: null, api_ids: [api.id], visibility: 'private', domains: [] })
  t.match(site.id, ULID)
  t.match(site.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/)

  const again = json(await s.call({ method: 'POST', url: '/v1/sites', payload: { name: 'Developer Docs' } })).data
  t.equal(again.slug, 'developer-docs-2', 'a derived slug that is taken gets -2')
  const explicit = await s.call({ method: 'POST', url: '/v1/sites', payload: { name: 'X', slug: 'developer-docs' } })
  t.equal(explicit.statusCode, 409)
  t.equal(json(explicit).code, 'conflict')

  const got = await s.call({ method: 'GET', url: `/v1/sites/${site.id}` })
  t.same(json(got).data, site)

  const patched = await s.call({
    method: 'PATCH', url: `/v1/sites/${site.id}`,
    payload: { title: 'Acme Developers', visibility: 'public', slug: 'docs', domains: ['Docs.Acme.Example'], api_ids: [] },
  })
  t.equal(patched.statusCode, 200)
  t.match(json(patched).data, { title: 'Acme Developers', visibility: 'public', slug: 'docs', domains: ['docs.acme.example'], api_ids: [], name: 'Developer Docs' })
  t.not(json(patched).data.updated_at, site.updated_at)
  const cleared = json(await s.call({ method: 'PATCH', url: `/v1/sites/${site.id}`, payload: { title: null } })).data
  t.equal(cleared.title, null)
  t.equal(cleared.slug, 'docs', 'fields not sent stay')
  const taken = await s.call({ method: 'PATCH', url: `/v1/sites/${again.id}`, payload: { slug: 'docs' } })
  t.equal(taken.statusCode, 409)

  t.equal((await s.call({ method: 'DELETE', url: `/v1/sites/${site.id}` })).statusCode, 204)
  t.equal((await s.call({ method: 'GET', url: `/v1/sites/${site.id}` })).statusCode, 404)
  t.equal((await s.call({ method: 'DELETE', url: `/v1/sites/${site.id}` })).statusCode, 404)
  const reuse = await s.call({ method: 'POST', url: '/v1/sites', payload: { name: 'Docs again', slug: 'docs', domains: ['docs.acme.example'] } })
  t.equal(reuse.statusCode, 201, 'a deleted site frees its slug and its domains')
})

t.test('bad input answers 400 and stores nothing', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const bad = [
    {},
    { name: '' },
    { name: 'a', organization_id: s.orgId },
    { name: 'a', unknown: 1 },
    { name: 'a', slug: 'Not A Slug' },
    { name: 'a', visibility: 'secret' },
    { name: 'a', api_ids: ['nope'] },
    { name: 'a', api_ids: 'x' },
    { name: 'a', api_ids: ['01HZZZZZZZZZZZZZZZZZZZZZZZ', '01HZZZZZZZZZZZZZZZZZZZZZZZ'] },
    { name: 'a', title: '' },
    { name: 'a', domains: ['https://docs.example.com'] },
    { name: 'a', domains: ['docs.example.com:8443'] },
    { name: 'a', domains: ['docs.example.com/path'] },
    { name: 'a', domains: ['127.0.0.1'] },
    { name: 'a', domains: ['localhost'] },
    { name: 'a', domains: ['-bad.example.com'] },
    { name: 'a', domains: ['docs.example.com.'] },
    { name: 'a', domains: ['docs.example.com', 'docs.example.com'] },
    { name: 'a', domains: ['docs.example.com', 'DOCS.example.com'] },
  ]
  for (const payload of bad) {
    const res = await s.call({ method: 'POST', url: '/v1/sites', payload })
    t.equal(res.statusCode, 400, JSON.stringify(payload))
    t.equal(json(res).code, 'invalid_request')
  }
  t.same(json(await s.call({ method: 'GET', url: '/v1/sites' })), { data: [], total: 0 })
  t.equal((await s.call({ method: 'GET', url: '/v1/sites/Not_A_Slug' })).statusCode, 400, 'neither an id nor a slug')
  t.equal((await s.call({ method: 'GET', url: '/v1/sites/no-such-site' })).statusCode, 404, 'a slug that names nothing')
  t.equal((await s.call({ method: 'GET', url: '/v1/sites?limit=101' })).statusCode, 400)
  t.equal((await s.call({ method: 'GET', url: '/v1/sites', key: null })).statusCode, 401)
  t.equal((await s.call({ method: 'POST', url: '/v1/sites', key: 'sk_wrongwrongwrongwrongwrongwrongwrong', payload: { name: 'a' } })).statusCode, 401)
})

t.test('api_ids must name APIs of the same organization (422 invalid_reference)', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = await createApi(s, 'Mine')
  const schema = json(await s.call({ method: 'POST', url: '/v1/schemas', payload: { name: 'a schema' } })).data
  const other = await s.registry.organizations.create('globex')
  const theirs = await createApi(s, 'Theirs', { key: other.secret })

  for (const ids of [['01HZZZZZZZZZZZZZZZZZZZZZZZ'], [schema.id], [theirs.id], [api.id, theirs.id]]) {
    const res = await s.call({ method: 'POST', url: '/v1/sites', payload: { name: 'docs', api_ids: ids } })
    t.equal(res.statusCode, 422, ids.join(','))
    t.equal(json(res).code, 'invalid_reference')
    t.same(json(res).errors.map((e: { path: unknown[] }) => e.path), [['api_ids', ids.length - 1]], 'names the bad entry')
  }
  t.equal(json(await s.call({ method: 'GET', url: '/v1/sites' })).total, 0, 'nothing stored')

  const site = json(await s.call({ method: 'POST', url: '/v1/sites', payload: { name: 'docs', api_ids: [api.id] } })).data
  const patch = await s.call({ method: 'PATCH', url: `/v1/sites/${site.id}`, payload: { api_ids: [api.id, theirs.id] } })
  t.equal(patch.statusCode, 422)
  t.same(json(await s.call({ method: 'GET', url: `/v1/sites/${site.id}` })).data.api_ids, [api.id], 'unchanged')
})

t.test('organization scope: another organization sees 404', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const site = json(await s.call({ method: 'POST', url: '/v1/sites', payload: { name: 'docs' } })).data
  const other = await s.registry.organizations.create('globex')
  for (const request of [
    { method: 'GET', url: `/v1/sites/${site.id}` },
    { method: 'PATCH', url: `/v1/sites/${site.id}`, payload: { name: 'x' } },
    { method: 'DELETE', url: `/v1/sites/${site.id}` },
    { method: 'GET', url: `/v1/sites/${site.id}/guides` },
    { method: 'PUT', url: `/v1/sites/${site.id}/guides/intro`, payload: { title: 'x', markdown: 'y' } },
  ] as const) {
    const res = await s.call({ ...request, key: other.secret })
    t.equal(res.statusCode, 404, `${request.method} ${request.url}`)
  }
  t.same(json(await s.call({ method: 'GET', url: '/v1/sites', key: other.secret })), { data: [], total: 0 })
  t.equal(json(await s.call({ method: 'GET', url: `/v1/sites/${site.id}` })).data.name, 'docs', 'untouched')
})

t.test('sites are listed by name (ties by id), paginated with the true total', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const names = Array.from({ length: 25 }, (_, i) => `site ${String((i * 7) % 25).padStart(2, '0')}`)
  names.push('site 03')
  const ids: Record<string, string[]> = {}
  for (const name of names) {
    const site = json(await s.call({ method: 'POST', url: '/v1/sites', payload: { name } })).data
    ;(ids[name] ??= []).push(site.id)
  }
  const first = json(await s.call({ method: 'GET', url: '/v1/sites' }))
  t.equal(first.total, 26)
  t.equal(first.data.length, 20, 'default limit 20')
  const all = json(await s.call({ method: 'GET', url: '/v1/sites?limit=100' })).data
  t.same(all.map((x: { name: string }) => x.name), [...names].sort())
  const twins = all.filter((x: { name: string }) => x.name === 'site 03').map((x: { id: string }) => x.id)
  t.same(twins, [...ids['site 03']].sort(), 'ties by id')
  const page2 = json(await s.call({ method: 'GET', url: '/v1/sites?limit=10&page=3' }))
  t.same(page2.data.map((x: { name: string }) => x.name), [...names].sort().slice(20))
  t.same(json(await s.call({ method: 'GET', url: '/v1/sites?page=9' })), { data: [], total: 26 })

  const renamed = all[0]
  await s.call({ method: 'PATCH', url: `/v1/sites/${renamed.id}`, payload: { name: 'zzz last' } })
  const after = json(await s.call({ method: 'GET', url: '/v1/sites?limit=100' })).data
  t.equal(after.at(-1).id, renamed.id, 'a rename moves the site in the listing')
  t.equal(after.length, 26)
})

t.test('domains are unique across the whole registry (409), and freed by an update', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const a = json(await s.call({ method: 'POST', url: '/v1/sites', payload: { name: 'a', domains: ['docs.acme.example', 'api.acme.example'] } })).data
  t.same(a.domains, ['docs.acme.example', 'api.acme.example'])

  const other = await s.registry.organizations.create('globex')
  const clash = await s.call({ method: 'POST', url: '/v1/sites', key: other.secret, payload: { name: 'b', domains: ['Docs.Acme.Example'] } })
  t.equal(clash.statusCode, 409, 'another organization cannot take it either')
  t.equal(json(clash).code, 'conflict')
  t.same(json(clash).errors[0].path, ['domains', 0])
  t.equal(json(await s.call({ method: 'GET', url: '/v1/sites', key: other.secret })).total, 0, 'nothing stored')

  const partly = await s.call({ method: 'POST', url: '/v1/sites', key: other.secret, payload: { name: 'b', domains: ['docs.globex.example', 'api.acme.example'] } })
  t.equal(partly.statusCode, 409)
  t.same(json(partly).errors[0].path, ['domains', 1])
  const b = json(await s.call({ method: 'POST', url: '/v1/sites', key: other.secret, payload: { name: 'b', domains: ['docs.globex.example'] } })).data
  t.same(b.domains, ['docs.globex.example'], 'a refused create claimed none of its domains')
  const steal = await s.call({ method: 'PATCH', url: `/v1/sites/${b.id}`, key: other.secret, payload: { slug: 'renamed', domains: ['www.globex.example', 'api.acme.example'] } })
  t.equal(steal.statusCode, 409)
  t.same(json(await s.call({ method: 'GET', url: `/v1/sites/${b.id}`, key: other.secret })).data, b, 'a refused update changes nothing')
  const c = await s.call({ method: 'POST', url: '/v1/sites', key: other.secret, payload: { name: 'c', slug: 'renamed', domains: ['www.globex.example'] } })
  t.equal(c.statusCode, 201, 'neither the slug nor the domain of the refused update was taken')
  t.equal((await s.call({ method: 'GET', url: '/', key: null, headers: { host: 'docs.globex.example' } })).statusCode, 404, 'a private site is not served on its domain')

  const keep = await s.call({ method: 'PATCH', url: `/v1/sites/${a.id}`, payload: { domains: ['docs.acme.example'] } })
  t.equal(keep.statusCode, 200, 'a site may keep its own domains')
  const taken = await s.call({ method: 'PATCH', url: `/v1/sites/${b.id}`, key: other.secret, payload: { domains: ['api.acme.example'] } })
  t.equal(taken.statusCode, 200, 'a domain a site dropped is free')
  t.same(json(taken).data.domains, ['api.acme.example'])
})

t.test('deleting an API removes it from every site that lists it', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const one = await createApi(s, 'one')
  const two = await createApi(s, 'two')
  const x = json(await s.call({ method: 'POST', url: '/v1/sites', payload: { name: 'x', api_ids: [one.id, two.id] } })).data
  const y = json(await s.call({ method: 'POST', url: '/v1/sites', payload: { name: 'y', api_ids: [two.id] } })).data
  const z = json(await s.call({ method: 'POST', url: '/v1/sites', payload: { name: 'z', api_ids: [one.id] } })).data

  t.equal((await s.call({ method: 'DELETE', url: `/v1/apis/${two.id}` })).statusCode, 204)
  const get = async (id: string) => json(await s.call({ method: 'GET', url: `/v1/sites/${id}` })).data
  t.same((await get(x.id)).api_ids, [one.id])
  t.same((await get(y.id)).api_ids, [])
  t.same((await get(z.id)).api_ids, [one.id], 'a site without it is untouched')
  t.not((await get(y.id)).updated_at, y.updated_at)

  // A site no longer listing an API is not touched when that API goes.
  await s.call({ method: 'PATCH', url: `/v1/sites/${x.id}`, payload: { api_ids: [] } })
  const before = await get(x.id)
  t.equal((await s.call({ method: 'DELETE', url: `/v1/apis/${one.id}` })).statusCode, 204)
  t.same(await get(x.id), before)
  t.same((await get(z.id)).api_ids, [])
})

t.test("an API's delete that another feature refuses leaves the sites as they were", async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = await createApi(s, 'one')
  const site = json(await s.call({ method: 'POST', url: '/v1/sites', payload: { name: 'x', api_ids: [api.id] } })).data
  // An SDK that uses the API refuses its delete (409) inside the same transaction the site hook ran in.
  const sdk = await s.call({ method: 'POST', url: '/v1/sdks', payload: { name: 'Pets SDK', targets: ['typescript'], apis: [{ api_id: api.id }] } })
  t.equal(sdk.statusCode, 201)
  const refused = await s.call({ method: 'DELETE', url: `/v1/apis/${api.id}` })
  t.equal(refused.statusCode, 409)
  t.same(json(await s.call({ method: 'GET', url: `/v1/sites/${site.id}` })).data, site, 'the site still lists the API, unchanged')
  await s.call({ method: 'DELETE', url: `/v1/sdks/${json(sdk).data.id}` })
  t.equal((await s.call({ method: 'DELETE', url: `/v1/apis/${api.id}` })).statusCode, 204)
  t.same(json(await s.call({ method: 'GET', url: `/v1/sites/${site.id}` })).data.api_ids, [])
})

t.test('guides: create, replace, order by position then slug, list, delete', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const site = json(await s.call({ method: 'POST', url: '/v1/sites', payload: { name: 'docs' } })).data
  const put = (slug: string, payload: Record<string, unknown>) =>
    s.call({ method: 'PUT', url: `/v1/sites/${site.id}/guides/${slug}`, payload })

  const intro = await put('intro', { title: 'Introduction', markdown: '# Hi' })
  t.equal(intro.statusCode, 201)
  const guide = json(intro).data
  t.same(Object.keys(guide).sort(), ['created_at', 'id', 'markdown', 'organization_id', 'position', 'site_id', 'slug', 'title', 'updated_at'])
  t.match(guide, { organization_id: s.orgId, site_id: site.id, slug: 'intro', title: 'Introduction', markdown: '# Hi', position: 0 })
  t.match(guide.id, ULID)
  t.equal(json(await put('auth', { title: 'Auth', markdown: 'x' })).data.position, 1, 'a new guide goes last')
  t.equal(json(await put('errors', { title: 'Errors', markdown: 'x', position: 1 })).data.position, 1)
  t.equal(json(await put('zeta', { title: 'Zeta', markdown: 'x', position: 0 })).data.position, 0)

  const replaced = await put('intro', { title: 'Intro', markdown: '# Hello' })
  t.equal(replaced.statusCode, 200, 'a replace answers 200')
  t.match(json(replaced).data, { id: guide.id, created_at: guide.created_at, position: 0, title: 'Intro', markdown: '# Hello' })

  const order = async () => json(await s.call({ method: 'GET', url: `/v1/sites/${site.id}/guides` }))
  t.same((await order()).data.map((g: { slug: string }) => g.slug), ['intro', 'zeta', 'auth', 'errors'])
  t.equal((await order()).total, 4)
  await put('auth', { title: 'Auth', markdown: 'x', position: 7 })
  t.same((await order()).data.map((g: { slug: string }) => g.slug), ['intro', 'zeta', 'errors', 'auth'], 'moved')
  const page = json(await s.call({ method: 'GET', url: `/v1/sites/${site.id}/guides?limit=2&page=2` }))
  t.same(page.data.map((g: { slug: string }) => g.slug), ['errors', 'auth'])
  t.equal(page.total, 4)

  t.equal(json(await s.call({ method: 'GET', url: `/v1/sites/${site.id}/guides/zeta` })).data.title, 'Zeta')
  t.equal((await s.call({ method: 'GET', url: `/v1/sites/${site.id}/guides/nope` })).statusCode, 404)
  t.equal((await s.call({ method: 'DELETE', url: `/v1/sites/${site.id}/guides/zeta` })).statusCode, 204)
  t.equal((await s.call({ method: 'DELETE', url: `/v1/sites/${site.id}/guides/zeta` })).statusCode, 404)
  t.same((await order()).data.map((g: { slug: string }) => g.slug), ['intro', 'errors', 'auth'])

  for (const [slug, payload] of [
    ['Bad Slug', { title: 't', markdown: 'm' }],
    ['ok', { markdown: 'm' }],
    ['ok', { title: 't' }],
    ['ok', { title: 't', markdown: 'm', position: -1 }],
    ['ok', { title: 't', markdown: 'm', extra: true }],
    ['ok', { title: '', markdown: 'm' }],
  ] as const) {
    t.equal((await put(encodeURIComponent(slug), payload)).statusCode, 400, JSON.stringify(payload))
  }
  t.equal((await s.call({ method: 'PUT', url: '/v1/sites/01HZZZZZZZZZZZZZZZZZZZZZZZ/guides/x', payload: { title: 't', markdown: 'm' } })).statusCode, 404)

  // Deleting the site deletes its guides.
  await s.call({ method: 'DELETE', url: `/v1/sites/${site.id}` })
  const fresh = json(await s.call({ method: 'POST', url: '/v1/sites', payload: { name: 'docs' } })).data
  t.same(json(await s.call({ method: 'GET', url: `/v1/sites/${fresh.id}/guides` })), { data: [], total: 0 })
})

t.test('sites, guides and domains survive a restart', async (t) => {
  const storage = tempDir()
  t.teardown(() => import('node:fs').then((fs) => fs.rmSync(storage, { recursive: true, force: true })))
  const first = await startTestServer({ storage })
  const api = await createApi(first, 'Petstore')
  await first.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore() } })
  const site = json(await first.call({
    method: 'POST', url: '/v1/sites', payload: { name: 'docs', visibility: 'public', api_ids: [api.id], domains: ['docs.acme.example'] },
  })).data
  await first.call({ method: 'PUT', url: `/v1/sites/${site.id}/guides/intro`, payload: { title: 'Intro', markdown: 'x' } })
  const key = first.key
  await first.close()

  const second = await startTestServer({ storage })
  t.teardown(second.close)
  const got = await second.call({ method: 'GET', url: `/v1/sites/${site.id}`, key })
  t.same(json(got).data, site)
  t.equal(json(await second.call({ method: 'GET', url: `/v1/sites/${site.id}/guides`, key })).total, 1)
  const page = await second.call({ method: 'GET', url: '/guides/intro', key: null, headers: { host: 'docs.acme.example' } })
  t.equal(page.statusCode, 200, 'the domain map is rebuilt from storage')
  t.match(page.body, '<h1>Intro</h1>')
})

t.test('/openapi.json documents the site routes', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const doc = json(await s.call({ method: 'GET', url: '/openapi.json' }))
  for (const path of ['/v1/sites', '/v1/sites/{site}', '/v1/sites/{site}/guides', '/v1/sites/{site}/guides/{slug}',
    '/@{org}/sites/{site}', '/@{org}/sites/{site}/guides/{guide}', '/@{org}/sites/{site}/apis/{api}']) {
    t.ok(doc.paths[path], path)
  }
  t.ok(doc.paths['/v1/sites'].post.requestBody, 'the create body is described')
  t.notOk(Object.keys(doc.paths).some((p) => p.startsWith('/_site-host')), 'the internal host routes are not')
})
