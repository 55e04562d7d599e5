import t, { type Test } from 'tap'
import { json, petstore, startTestServer } from '../helpers.js'
import { postgresForFile } from '../support/postgres.js'

t.test('create, get, update, delete an API with CONTRACT §3 fields', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const created = await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Pet Store API', description: 'Pets' } })
  t.equal(created.statusCode, 201)
  const api = json(created).data
  t.match(api, {
    organization_id: s.orgId, name: 'Pet Store API', slug: 'pet-store-api', visibility: 'private', description: 'Pets',
    logo_url: null, ruleset_id: null, blocking_severity: null, effective_blocking_severity: 'off', current: null,
  })
  t.match(api.id, /^[0-9A-HJKMNP-TV-Z]{26}$/)
  t.match(api.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)

  const dup = await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Pet Store API' } })
  t.equal(json(dup).data.slug, 'pet-store-api-2', 'a derived slug that is taken gets -2')
  const explicit = await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'X', slug: 'pet-store-api' } })
  t.equal(explicit.statusCode, 409)
  t.equal(json(explicit).code, 'conflict')

  const patched = await s.call({ method: 'PATCH', url: `/v1/apis/${api.id}`, payload: { description: null, logo_url: 'https://example.com/l.png', visibility: 'public', slug: 'pets' } })
  t.equal(patched.statusCode, 200)
  t.match(json(patched).data, { description: null, logo_url: 'https://example.com/l.png', visibility: 'public', slug: 'pets' })
  const cleared = json(await s.call({ method: 'PATCH', url: `/v1/apis/${api.id}`, payload: { logo_url: null } })).data
  t.equal(cleared.logo_url, null)
  t.equal(cleared.slug, 'pets')

  const got = await s.call({ method: 'GET', url: `/v1/apis/${api.id}` })
  t.equal(json(got).data.slug, 'pets')
  const del = await s.call({ method: 'DELETE', url: `/v1/apis/${api.id}` })
  t.equal(del.statusCode, 204)
  t.equal(del.body, '')
  const gone = await s.call({ method: 'GET', url: `/v1/apis/${api.id}` })
  t.equal(gone.statusCode, 404)
  t.equal(json(gone).code, 'not_found')
  t.equal((await s.call({ method: 'DELETE', url: `/v1/apis/${api.id}` })).statusCode, 404)
  const free = await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Again', slug: 'pets' } })
  t.equal(free.statusCode, 201, 'a deleted API frees its slug')
})

t.test('pagination, ordering by name and total with more than 100 items', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const names = Array.from({ length: 130 }, (_, i) => `api ${String((i * 37) % 130).padStart(3, '0')}`)
  for (const name of names) {
    const res = await s.call({ method: 'POST', url: '/v1/apis', payload: { name } })
    t.equal(res.statusCode, 201)
  }
  const sorted = [...names].sort()
  const seen: string[] = []
  for (let page = 1; page <= 2; page++) {
    const res = json(await s.call({ method: 'GET', url: `/v1/apis?limit=100&page=${page}` }))
    t.equal(res.total, 130)
    seen.push(...res.data.map((a: { name: string }) => a.name))
  }
  t.same(seen, sorted, 'every API once, by name')
  const def = json(await s.call({ method: 'GET', url: '/v1/apis' }))
  t.equal(def.data.length, 20, 'default limit 20')
  t.same(def.data.map((a: { name: string }) => a.name), sorted.slice(0, 20))
  const page3 = json(await s.call({ method: 'GET', url: '/v1/apis?limit=50&page=3' }))
  t.same(page3.data.map((a: { name: string }) => a.name), sorted.slice(100, 130))
  const past = json(await s.call({ method: 'GET', url: '/v1/apis?limit=100&page=9' }))
  t.same(past, { data: [], total: 130 }, 'a page past the end is empty with the true total')
})

t.test('delete of a ruleset that APIs use answers 409; invalid references answer 422', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const rs = json(await s.call({ method: 'POST', url: '/v1/rulesets', payload: { name: 'rules' } })).data
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'a', ruleset_id: rs.id } })).data
  t.equal(api.ruleset_id, rs.id)
  t.equal(api.effective_blocking_severity, 'error')
  const blocked = await s.call({ method: 'DELETE', url: `/v1/rulesets/${rs.id}` })
  t.equal(blocked.statusCode, 409)
  t.equal(json(blocked).code, 'conflict')
  const missing = await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'b', ruleset_id: '01HZZZZZZZZZZZZZZZZZZZZZZZ' } })
  t.equal(missing.statusCode, 422)
  t.equal(json(missing).code, 'invalid_reference')
  const badPatch = await s.call({ method: 'PATCH', url: `/v1/apis/${api.id}`, payload: { ruleset_id: api.id } })
  t.equal(badPatch.statusCode, 422, 'an API id is not a ruleset')
  await s.call({ method: 'PATCH', url: `/v1/apis/${api.id}`, payload: { ruleset_id: null } })
  t.equal((await s.call({ method: 'DELETE', url: `/v1/rulesets/${rs.id}` })).statusCode, 204)
})

/**
 * On PostgreSQL a read names its resource in the key's own query (organization and kind in the join):
 * the same isolation must hold there, by id and by slug.
 */
async function organizationIsolation(t: Test, options: { databaseUrl?: string }) {
  const s = await startTestServer(options)
  t.teardown(s.close)
  const other = await s.registry.organizations.create('other', 'Other')
  const otherKey = other.secret
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'mine' } })).data
  const v1 = json(await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore() } })).data
  const schema = json(await s.call({ method: 'POST', url: '/v1/schemas', payload: { name: 'mine', document: { type: 'object' } } })).data
  const rs = json(await s.call({ method: 'POST', url: '/v1/rulesets', payload: { name: 'mine' } })).data
  await s.call({ method: 'POST', url: '/v1/apis', key: otherKey, payload: { name: 'theirs' } })

  const missingId = '01J00000000000000000000000'
  const routes = (id: string, versionId: string, kind: string, doc: string) => [
    ['GET', `/v1/${kind}/${id}`], ['PATCH', `/v1/${kind}/${id}`, { name: 'x' }], ['DELETE', `/v1/${kind}/${id}`],
    ['POST', `/v1/${kind}/${id}/${doc}`, { document: { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {} } }],
    ['GET', `/v1/${kind}/${id}/${doc}`], ['GET', `/v1/${kind}/${id}/versions`], ['GET', `/v1/${kind}/${id}/versions/${versionId}`],
    ['GET', `/v1/${kind}/${id}/versions/${versionId}/document`], ['POST', `/v1/${kind}/${id}/versions/${versionId}/restore`],
  ] as [string, string, unknown?][]
  const targets = [
    [api.id, v1.id, 'apis', 'spec'], [schema.id, schema.current.id, 'schemas', 'document'], [rs.id, rs.current.id, 'rulesets', 'document'],
  ]
  for (const [id, versionId, kind, doc] of targets) {
    const foreign = routes(id, versionId, kind, doc)
    const absent = routes(missingId, missingId, kind, doc)
    for (let i = 0; i < foreign.length; i++) {
      const [method, url, payload] = foreign[i]
      const res = await s.call({ method: method as 'GET', url, key: otherKey, payload: payload as object })
      const ref = await s.call({ method: method as 'GET', url: absent[i][1], key: otherKey, payload: payload as object })
      t.equal(res.statusCode, 404, `${method} ${url} from another organization`)
      t.same(JSON.parse(res.body), JSON.parse(ref.body), `${method} ${kind}: same body as a missing id`)
    }
  }
  t.equal((await s.call({ method: 'GET', url: `/v1/apis/${api.id}/versions/${v1.id}/findings`, key: otherKey })).statusCode, 404)
  t.equal((await s.call({ method: 'POST', url: `/v1/rulesets/${rs.id}/lint`, key: otherKey, payload: { document: petstore() } })).statusCode, 404)
  const foreignRef = await s.call({ method: 'POST', url: '/v1/apis', key: otherKey, payload: { name: 'x', ruleset_id: rs.id } })
  t.equal(foreignRef.statusCode, 422, "another organization's ruleset is no reference")

  const mine = json(await s.call({ method: 'GET', url: '/v1/apis' }))
  t.same(mine.data.map((a: { name: string }) => a.name), ['mine'])
  t.equal(mine.total, 1)
  const theirs = json(await s.call({ method: 'GET', url: '/v1/apis', key: otherKey }))
  t.same(theirs.data.map((a: { name: string }) => a.name), ['theirs'])
  t.equal(json(await s.call({ method: 'GET', url: '/v1/schemas', key: otherKey })).total, 0)
  t.equal(json(await s.call({ method: 'GET', url: '/v1/rulesets', key: otherKey })).total, 0)
  t.equal((await s.call({ method: 'GET', url: `/v1/apis/${api.id}` })).statusCode, 200, 'still there for its owner')

  // One slug in two organizations: each key reads its own, by slug, whatever it read before.
  const theirMine = json(await s.call({ method: 'POST', url: '/v1/apis', key: otherKey, payload: { name: 'mine' } })).data
  for (const round of [1, 2]) {
    t.equal(json(await s.call({ method: 'GET', url: '/v1/apis/mine' })).data.id, api.id, `round ${round}: the owner's slug is its API`)
    t.equal(json(await s.call({ method: 'GET', url: '/v1/apis/mine', key: otherKey })).data.id, theirMine.id, `round ${round}: the other's is theirs`)
    t.equal((await s.call({ method: 'HEAD', url: '/v1/apis/mine/spec', key: otherKey })).statusCode, 404, `round ${round}: theirs has no document`)
    t.equal((await s.call({ method: 'HEAD', url: '/v1/apis/mine/spec' })).statusCode, 200, `round ${round}: the owner's has`)
  }
  // A resource of another kind, by id or slug, is no API; nor is a name no slug can have.
  t.equal((await s.call({ method: 'GET', url: `/v1/apis/${schema.id}` })).statusCode, 404, "a schema's id under /v1/apis")
  t.equal((await s.call({ method: 'GET', url: `/v1/schemas/${api.id}/versions` })).statusCode, 404, "an API's id under /v1/schemas")
  t.equal((await s.call({ method: 'GET', url: '/v1/rulesets/mine' })).statusCode, 200, 'the ruleset of that slug')
  t.equal(json(await s.call({ method: 'GET', url: '/v1/schemas/mine' })).data.id, schema.id, 'the schema of that slug')
  t.equal((await s.call({ method: 'GET', url: `/v1/apis/${encodeURIComponent('mine\u0000')}` })).statusCode, 400, 'a NUL in the name is a 400')
  t.equal((await s.call({ method: 'GET', url: `/v1/apis/${'m'.repeat(65)}` })).statusCode, 400, 'a name longer than a slug is a 400')
  // Renamed and deleted: seen on the next read.
  t.equal((await s.call({ method: 'PATCH', url: `/v1/apis/${api.id}`, payload: { slug: 'renamed' } })).statusCode, 200)
  t.equal((await s.call({ method: 'GET', url: '/v1/apis/mine' })).statusCode, 404, 'the old slug names nothing')
  t.equal(json(await s.call({ method: 'GET', url: '/v1/apis/renamed' })).data.id, api.id)
  t.equal((await s.call({ method: 'DELETE', url: '/v1/apis/renamed' })).statusCode, 204)
  t.equal((await s.call({ method: 'GET', url: `/v1/apis/${api.id}` })).statusCode, 404, 'deleted: gone by id')
  t.equal((await s.call({ method: 'GET', url: '/v1/apis/renamed' })).statusCode, 404, 'and by slug')
}

t.test('organization isolation on every route', (t) => organizationIsolation(t, {}))

t.test('organization isolation on every route, on PostgreSQL', async (t) => {
  const server = await postgresForFile(t)
  if (server) await organizationIsolation(t, { databaseUrl: await server.createDatabase() })
})

t.test('public registry follows visibility at once', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Pets', slug: 'pets' } })).data
  await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('1') } })
  await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('2') } })
  const anon = (url: string) => s.call({ method: 'GET', url, key: null })

  for (const url of ['/@acme/apis/pets', '/@acme/apis/pets/latest', '/@acme/apis/pets/versions', '/@acme/apis/pets/versions/1']) {
    t.equal((await anon(url)).statusCode, 404, `private: ${url}`)
  }
  t.same(json(await anon('/@acme/apis')), { data: [], total: 0 })
  t.equal((await s.call({ method: 'GET', url: '/@acme/apis/pets' })).statusCode, 200, 'a key of the organization sees it')

  await s.call({ method: 'PATCH', url: `/v1/apis/${api.id}`, payload: { visibility: 'public' } })
  const listed = json(await anon('/@acme/apis'))
  t.equal(listed.total, 1)
  t.equal(listed.data[0].slug, 'pets')
  t.equal(json(await anon('/@acme/apis/pets')).data.id, api.id)
  const latest = await anon('/@acme/apis/pets/latest')
  t.equal(JSON.parse(latest.body).info.version, '2')
  t.ok(latest.headers.etag)
  t.match((await anon('/@acme/apis/pets/latest?format=yaml')).body, /version: "?2"?/)
  t.equal(json(await anon('/@acme/apis/pets/versions')).total, 2)
  t.equal(JSON.parse((await anon('/@acme/apis/pets/versions/1')).body).info.version, '1')
  t.equal((await anon('/@acme/apis/pets/versions/9')).statusCode, 404)
  t.equal((await anon('/@nobody/apis')).statusCode, 404)

  await s.call({ method: 'PATCH', url: `/v1/apis/${api.id}`, payload: { visibility: 'private' } })
  t.equal((await anon('/@acme/apis/pets/latest')).statusCode, 404, 'private again at once')
  t.same(json(await anon('/@acme/apis')), { data: [], total: 0 })

  const other = await s.registry.organizations.create('other')
  t.equal((await s.call({ method: 'GET', url: '/@acme/apis/pets', key: other.secret })).statusCode, 404, "another organization's key sees no private resource")
})

t.test('the public host serves only the public registry', async (t) => {
  const s = await startTestServer({ config: { publicHost: 'registry.example.com' } })
  t.teardown(s.close)
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Pets', visibility: 'public' } })).data
  await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore() } })
  const onPublic = await s.call({ method: 'GET', url: '/@acme/apis/pets/latest', key: null, headers: { host: 'registry.example.com' } })
  t.equal(onPublic.statusCode, 200)
  t.equal((await s.call({ method: 'GET', url: '/v1/apis', headers: { host: 'registry.example.com' } })).statusCode, 404)
  t.equal((await s.call({ method: 'GET', url: '/@acme/apis/pets', key: null, headers: { host: 'api.internal:8080' } })).statusCode, 404)
  t.equal((await s.call({ method: 'GET', url: '/healthz?probe=1', key: null, headers: { host: 'registry.example.com' } })).statusCode, 200, 'health on every host')
})

t.test('creating an API while its ruleset is deleted never leaves a dangling ruleset_id', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  for (let i = 0; i < 10; i++) {
    const rs = json(await s.call({ method: 'POST', url: '/v1/rulesets', payload: { name: `rules ${i}` } })).data
    const [deleted, created] = await Promise.all([
      s.call({ method: 'DELETE', url: `/v1/rulesets/${rs.id}` }),
      s.call({ method: 'POST', url: '/v1/apis', payload: { name: `api ${i}`, ruleset_id: rs.id } }),
    ])
    const both = `${deleted.statusCode}/${created.statusCode}`
    t.ok(both === '204/422' || both === '409/201', `delete/create answered ${both}`)
  }
})

t.test('GET of an API shows every change to what its object is made of at once', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const rs = json(await s.call({ method: 'POST', url: '/v1/rulesets', payload: { name: 'rules', blocking_severity: 'off' } })).data
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'a', ruleset_id: rs.id } })).data
  const get = async () => json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}` })).data
  t.match(await get(), { name: 'a', current: null, effective_blocking_severity: 'off' })
  t.match(await get(), { name: 'a', current: null }, 'a repeated GET answers the same')
  const up = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('1') } })
  t.equal(up.statusCode, 201, up.body.slice(0, 200))
  t.match(await get(), { current: { number: 1 } }, 'a new version')
  await s.call({ method: 'PATCH', url: `/v1/apis/${api.id}`, payload: { name: 'renamed' } })
  t.match(await get(), { name: 'renamed', current: { number: 1 } }, 'a rename')
  await s.call({ method: 'PATCH', url: `/v1/rulesets/${rs.id}`, payload: { blocking_severity: 'info' } })
  t.equal((await get()).effective_blocking_severity, 'info', "the ruleset's default")
  await s.call({ method: 'PATCH', url: `/v1/apis/${api.id}`, payload: { ruleset_id: null } })
  t.match(await get(), { ruleset_id: null, effective_blocking_severity: 'off' }, 'a detached ruleset')
  const res = await s.call({ method: 'GET', url: `/v1/apis/${api.id}` })
  t.match(res.headers['content-type'], /^application\/json/)
})
