/**
 * The /v1 additions the console uses (issue 17): list search and order (`q`, `sort`), the overview
 * (`GET /v1/overview`), and the frame that shows a version's reference.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { PAGE_CSP } from '../../src/http/html-reply.js'
import { waitForBuild } from '../sdk/support.js'
import { OUTBOUND_LOOPBACK, json, petstore, startTestServer, type TestServer } from '../helpers.js'

const names = (response: Parameters<typeof json>[0]) => json(response).data.map((r: { name: string }) => r.name)

async function createApis(s: TestServer, list: string[]) {
  const ids: string[] = []
  for (const name of list) ids.push(json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name } })).data.id)
  return ids
}

t.test('lists are searched by name (any case, anywhere in it) and ordered both ways, on the server', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  await createApis(s, ['Payments', 'Petstore', 'Pet adoption', 'Billing', 'Carpet cleaning', 'Search'])

  const all = await s.call({ method: 'GET', url: '/v1/apis' })
  t.same(names(all), ['Billing', 'Carpet cleaning', 'Payments', 'Pet adoption', 'Petstore', 'Search'])
  t.same(names(await s.call({ method: 'GET', url: '/v1/apis?sort=-name' })), ['Search', 'Petstore', 'Pet adoption', 'Payments', 'Carpet cleaning', 'Billing'])

  const pet = await s.call({ method: 'GET', url: '/v1/apis?q=PET' })
  t.same(names(pet), ['Carpet cleaning', 'Pet adoption', 'Petstore'], 'case-insensitive, anywhere in the name')
  t.equal(json(pet).total, 3, 'total counts the matches')
  const paged = await s.call({ method: 'GET', url: '/v1/apis?q=pet&limit=2&page=2' })
  t.same(names(paged), ['Petstore'], 'pages go over the matches')
  t.equal(json(paged).total, 3)
  t.same(names(await s.call({ method: 'GET', url: '/v1/apis?q=pet&sort=-name&limit=2' })), ['Petstore', 'Pet adoption'])
  const none = await s.call({ method: 'GET', url: '/v1/apis?q=nothing' })
  t.same(json(none), { data: [], total: 0 })
  t.same(names(await s.call({ method: 'GET', url: '/v1/apis?q=%20%20' })).length, 6, 'a blank search is no search')

  for (const query of ['sort=created', 'q=' + 'x'.repeat(201)]) {
    const refused = await s.call({ method: 'GET', url: `/v1/apis?${query}` })
    t.equal(refused.statusCode, 400, query)
  }
  await s.call({ method: 'POST', url: '/v1/schemas', payload: { name: 'Pet' } })
  t.same(names(await s.call({ method: 'GET', url: '/v1/schemas?q=pet' })), ['Pet'], 'schemas too')
  t.same(names(await s.call({ method: 'GET', url: '/v1/rulesets?q=pet' })), [], 'and rulesets')
})

t.test('the overview: counts, latest versions, failed syncs and builds', async (t) => {
  // The failing sync and build connect to a closed port on loopback, which the outbound policy
  // refuses unless the operator allows it.
  const s = await startTestServer({ outboundHosts: OUTBOUND_LOOPBACK })
  t.teardown(s.close)
  const [petstoreId, billingId] = await createApis(s, ['Petstore', 'Billing'])
  await s.call({ method: 'POST', url: `/v1/apis/${petstoreId}/spec`, payload: { document: petstore('1.0.0') } })
  await s.call({ method: 'POST', url: `/v1/apis/${petstoreId}/spec`, payload: { document: petstore('1.1.0') } })
  const schema = json(await s.call({ method: 'POST', url: '/v1/schemas', payload: { name: 'Pet', document: { type: 'object' } } })).data

  // A repository that nothing serves: the sync fails and says so.
  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as AddressInfo).port
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  const url = `http://127.0.0.1:${port}/closed.git`
  await s.call({ method: 'PUT', url: `/v1/apis/${billingId}/repository`, payload: { provider: 'github', url, branch: 'main', path: 'openapi.yaml' } })
  t.equal((await s.call({ method: 'POST', url: `/v1/apis/${billingId}/sync` })).statusCode, 502)

  // A build that delivers there fails too.
  const sdk = json(await s.call({ method: 'POST', url: '/v1/sdks', payload: { name: 'Pets', targets: ['typescript'], apis: [{ api_id: petstoreId }] } })).data
  await s.call({ method: 'PUT', url: `/v1/sdks/${sdk.id}/targets/typescript/repository`, payload: { provider: 'git', url } })
  const [build] = json(await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })).data
  t.equal((await waitForBuild(s, build.id)).status, 'failed')

  const response = await s.call({ method: 'GET', url: '/v1/overview' })
  t.equal(response.statusCode, 200)
  const overview = json(response).data
  t.same(overview.counts, { apis: 2, schemas: 1, rulesets: 0, sites: 0, sdks: 1, builds: 1 })
  t.same(overview.recent_versions.map((v: any) => [v.kind, v.resource.name, v.version.number]),
    [['schema', 'Pet', 1], ['api', 'Petstore', 2], ['api', 'Petstore', 1]], 'newest first, across kinds')
  t.equal(overview.recent_versions[1].version.title, 'Petstore')
  t.match(overview.failed_syncs, [{ api: { id: billingId, name: 'Billing' }, repository: { url, last_sync: { status: 'failed', error: { code: 'repository_unavailable' } } } }])
  t.notMatch(JSON.stringify(overview.failed_syncs), /"(token|webhook_secret)":/, 'no secret')
  t.match(overview.failed_builds, [{ id: build.id, status: 'failed', error: String }])

  await s.call({ method: 'DELETE', url: `/v1/schemas/${schema.id}` })
  const after = json(await s.call({ method: 'GET', url: '/v1/overview' })).data
  t.same(after.recent_versions.map((v: any) => v.resource.name), ['Petstore', 'Petstore'], "a deleted resource's versions leave the list")
  t.equal(after.counts.schemas, 0)

  const other = await s.registry.organizations.create('globex')
  const theirs = json(await s.call({ method: 'GET', url: '/v1/overview', key: other.secret })).data
  t.same(theirs, { counts: { apis: 0, schemas: 0, rulesets: 0, sites: 0, sdks: 0, builds: 0 }, recent_versions: [], failed_syncs: [], failed_builds: [] },
    "another organization sees only its own")
})

t.test("a version's reference frame: Scalar on the version's document, under the pages' CSP", async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const [id] = await createApis(s, ['Petstore'])
  const version = json(await s.call({ method: 'POST', url: `/v1/apis/${id}/spec`, payload: { document: petstore() } })).data
  const page = await s.call({ method: 'GET', url: `/console/_reference/apis/${id}/versions/${version.id}`, key: null })
  t.equal(page.statusCode, 200)
  t.equal(page.headers['content-security-policy'], PAGE_CSP)
  t.match(page.headers['content-security-policy'], /frame-ancestors 'self'/, 'only this origin may frame it')
  t.match(page.body, `"url":"/v1/apis/${id}/versions/${version.id}/document"`, 'Scalar reads the document through /v1, with the session')
  t.match(page.body, /<script src="\/docs\/_assets\/scalar\.[0-9a-f]+\.js"><\/script>/, "the sites' Scalar bundle, where /docs serves it")
  t.notMatch(page.body, /<script>|\son\w+=/, 'no inline script, no handler')
  t.equal((await s.call({ method: 'GET', url: `/console/_reference/apis/not-an-id/versions/${version.id}`, key: null })).statusCode, 400)
})
