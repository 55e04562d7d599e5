import t from 'tap'
import { OUTBOUND_LOOPBACK, json, startTestServer } from '../helpers.js'
import { createApi, createSdk } from './support.js'

t.test('SDKs: create, read, list newest first, update, delete', async (t) => {
  const s = await startTestServer()
  t.teardown(() => s.close())
  const api = await createApi(s)

  const created = await s.call({
    method: 'POST', url: '/v1/sdks',
    payload: { name: 'Pets SDK', targets: ['typescript', 'php'], apis: [{ api_id: api }], config: { package_version: '1.2.3', php: { namespace: 'Acme\\Pets' } } },
  })
  t.equal(created.statusCode, 201, created.body)
  const sdk = json(created).data
  t.match(sdk, {
    name: 'Pets SDK', slug: 'pets-sdk', targets: ['typescript', 'php'], apis: [{ api_id: api, version_id: null }],
    config: { package_version: '1.2.3', php: { namespace: 'Acme\\Pets' } }, repositories: [], organization_id: s.orgId,
  })
  t.notOk('last_build_number' in sdk)
  t.same(json(await s.call({ method: 'GET', url: `/v1/sdks/${sdk.id}` })).data, sdk)

  const second = await createSdk(s, [api], ['php'])
  t.equal(second.slug, 'pets-sdk-2', 'a derived slug that is taken gets -2')
  const explicit = await s.call({ method: 'POST', url: '/v1/sdks', payload: { name: 'X', slug: 'pets-sdk', targets: ['php'], apis: [{ api_id: api }] } })
  t.equal(explicit.statusCode, 409)

  const list = json(await s.call({ method: 'GET', url: '/v1/sdks?limit=1' }))
  t.equal(list.total, 2)
  t.same(list.data.map((x: any) => x.id), [second.id], 'newest first')
  t.same(json(await s.call({ method: 'GET', url: '/v1/sdks?page=2&limit=1' })).data.map((x: any) => x.id), [sdk.id])
  t.same(json(await s.call({ method: 'GET', url: '/v1/sdks?page=3&limit=1' })), { data: [], total: 2 })

  const patched = await s.call({ method: 'PATCH', url: `/v1/sdks/${sdk.id}`, payload: { name: 'Renamed', targets: ['typescript'] } })
  t.equal(patched.statusCode, 200, patched.body)
  t.match(json(patched).data, { name: 'Renamed', slug: 'pets-sdk', targets: ['typescript'] })

  t.equal((await s.call({ method: 'DELETE', url: `/v1/sdks/${sdk.id}` })).statusCode, 204)
  t.equal((await s.call({ method: 'GET', url: `/v1/sdks/${sdk.id}` })).statusCode, 404)
  t.equal(json(await s.call({ method: 'GET', url: '/v1/sdks' })).total, 1)
})

t.test('SDK input is checked: 400 for bad shapes, 422 invalid_reference for unknown APIs', async (t) => {
  const s = await startTestServer()
  t.teardown(() => s.close())
  const api = await createApi(s)
  const post = (payload: unknown) => s.call({ method: 'POST', url: '/v1/sdks', payload: payload as object })

  for (const payload of [
    { name: 'x', targets: ['go'], apis: [{ api_id: api }] },
    { name: 'x', targets: [], apis: [{ api_id: api }] },
    { name: 'x', targets: ['php'], apis: [] },
    { name: 'x', targets: ['php', 'php'], apis: [{ api_id: api }] },
    { name: 'x', targets: ['php'], apis: [{ api_id: 'nope' }] },
    { name: 'x', targets: ['php'], apis: [{ api_id: api }], organization_id: s.orgId },
    { name: 'x', targets: ['php'], apis: [{ api_id: api }], config: { php: { namespace: 'Bad Namespace' } } },
    { name: 'x', targets: ['php'], apis: [{ api_id: api }], config: { unknown: 1 } },
  ]) {
    const response = await post(payload)
    t.equal(response.statusCode, 400, JSON.stringify(payload))
    t.equal(json(response).code, 'invalid_request')
  }
  const missing = await post({ name: 'x', targets: ['php'], apis: [{ api_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }] })
  t.equal(missing.statusCode, 422)
  t.match(json(missing), { code: 'invalid_reference', errors: [{ path: ['apis', 0, 'api_id'] }] })
  const badVersion = await post({ name: 'x', targets: ['php'], apis: [{ api_id: api, version_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }] })
  t.equal(json(badVersion).code, 'invalid_reference')
  t.equal(json(await s.call({ method: 'GET', url: '/v1/sdks' })).total, 0, 'nothing stored')

  // Another organization's API is unknown here.
  const other = await s.registry.organizations.create('other')
  const theirs = json(await s.call({ method: 'POST', url: '/v1/apis', key: other.secret, payload: { name: 'Theirs' } })).data.id
  t.equal(json(await post({ name: 'x', targets: ['php'], apis: [{ api_id: theirs }] })).code, 'invalid_reference')
  const mine = await createSdk(s, [api])
  t.equal((await s.call({ method: 'GET', url: `/v1/sdks/${mine.id}`, key: other.secret })).statusCode, 404)
})

t.test('output repositories: token write-only, per target, and builds need one', async (t) => {
  const s = await startTestServer()
  t.teardown(() => s.close())
  const api = await createApi(s)
  const sdk = await createSdk(s, [api])
  const url = `/v1/sdks/${sdk.id}/targets/php/repository`

  const none = await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })
  t.equal(none.statusCode, 422)
  t.equal(json(none).code, 'no_output_repository')

  t.equal((await s.call({ method: 'GET', url })).statusCode, 404)
  const put = await s.call({ method: 'PUT', url, payload: { provider: 'github', url: 'https://github.com/acme/pets-php.git', token: 'ghp_secret' } })
  t.equal(put.statusCode, 201, put.body)
  t.same(json(put).data, {
    sdk_id: sdk.id, target: 'php', provider: 'github', url: 'https://github.com/acme/pets-php.git', base_branch: 'main', api_url: null,
    has_token: true, token_status: 'stored', created_at: json(put).data.created_at, updated_at: json(put).data.updated_at,
  })
  t.notMatch(put.body, /ghp_secret/)
  const again = await s.call({ method: 'PUT', url, payload: { provider: 'github', url: 'https://github.com/acme/pets-php.git', base_branch: 'develop' } })
  t.equal(again.statusCode, 200)
  t.match(json(again).data, { base_branch: 'develop', has_token: true }, 'omitting the token keeps it')
  for (const r of [await s.call({ method: 'GET', url }), await s.call({ method: 'GET', url: `/v1/sdks/${sdk.id}` }), await s.call({ method: 'GET', url: '/v1/sdks' })]) {
    t.notMatch(r.body, /ghp_secret/, 'the token is never served')
  }
  t.match(json(await s.call({ method: 'GET', url: `/v1/sdks/${sdk.id}` })).data.repositories, [{ target: 'php', has_token: true }])

  t.equal((await s.call({ method: 'PUT', url, payload: { provider: 'gitlab', url: 'https://gitlab.com/acme/pets.git', token: null } })).statusCode, 400, 'gitlab without a token')
  t.equal((await s.call({ method: 'PUT', url, payload: { provider: 'git', url: 'https://user:pw@example.com/x.git' } })).statusCode, 400, 'credentials in the URL')
  t.equal((await s.call({ method: 'PUT', url, payload: { provider: 'git', url: 'file:///etc' } })).statusCode, 400)
  t.equal((await s.call({ method: 'PUT', url, payload: { provider: 'svn', url: 'https://example.com/x' } })).statusCode, 400)
  t.equal((await s.call({ method: 'PUT', url: `/v1/sdks/${sdk.id}/targets/go/repository`, payload: { provider: 'git', url: 'https://example.com/x.git' } })).statusCode, 400)

  const phpOnly = await createSdk(s, [api], ['php'])
  const notTarget = await s.call({ method: 'PUT', url: `/v1/sdks/${phpOnly.id}/targets/typescript/repository`, payload: { provider: 'git', url: 'https://example.com/x.git' } })
  t.equal(notTarget.statusCode, 400, 'not a target of this SDK')

  // Dropping the target drops its repository.
  await s.call({ method: 'PATCH', url: `/v1/sdks/${sdk.id}`, payload: { targets: ['typescript'] } })
  t.equal((await s.call({ method: 'GET', url })).statusCode, 404)
  await s.call({ method: 'PATCH', url: `/v1/sdks/${sdk.id}`, payload: { targets: ['typescript', 'php'] } })
  await s.call({ method: 'PUT', url, payload: { provider: 'git', url: 'https://example.com/x.git' } })
  t.equal((await s.call({ method: 'DELETE', url })).statusCode, 204)
  t.equal((await s.call({ method: 'DELETE', url })).statusCode, 404)
})

t.test('an API attached to an SDK cannot be deleted until it is detached', async (t) => {
  const s = await startTestServer()
  t.teardown(() => s.close())
  const api = await createApi(s)
  const other = await createApi(s, 'Other')
  const sdk = await createSdk(s, [api])
  const refused = await s.call({ method: 'DELETE', url: `/v1/apis/${api}` })
  t.equal(refused.statusCode, 409)
  t.match(json(refused).detail, /attached to 1 SDK/)
  await s.call({ method: 'PATCH', url: `/v1/sdks/${sdk.id}`, payload: { apis: [{ api_id: other }] } })
  t.equal((await s.call({ method: 'DELETE', url: `/v1/apis/${api}` })).statusCode, 204)
})

t.test('the service description documents the SDK and build routes', async (t) => {
  const s = await startTestServer()
  t.teardown(() => s.close())
  const doc = json(await s.app.inject({ url: '/openapi.json' }))
  for (const path of ['/v1/sdks', '/v1/sdks/{sdk}', '/v1/sdks/{sdk}/targets/{target}/repository', '/v1/sdks/{sdk}/builds', '/v1/builds', '/v1/builds/{build}', '/v1/builds/{build}/logs', '/v1/builds/{build}/artifact', '/v1/builds/{build}/cancel']) {
    t.ok(doc.paths[path], path)
  }
  const config = doc.paths['/v1/sdks'].post.requestBody.content['application/json'].schema.properties.config
  t.ok(config.properties.php.properties.namespace, 'SdkConfig is described')
})

t.test('queueing needs an uploaded version; deleting an SDK deletes its builds', async (t) => {
  const s = await startTestServer({ outboundHosts: OUTBOUND_LOOPBACK })
  t.teardown(() => s.close())
  const empty = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Empty' } })).data.id
  const sdk = await createSdk(s, [empty], ['php'])
  // Port 1 on loopback refuses connections: a build there fails quickly if it runs at all.
  await s.call({ method: 'PUT', url: `/v1/sdks/${sdk.id}/targets/php/repository`, payload: { provider: 'git', url: 'http://127.0.0.1:1/x.git' } })
  const refused = await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })
  t.equal(refused.statusCode, 422)
  t.match(json(refused), { code: 'invalid_reference', errors: [{ path: ['apis', 0, 'api_id'] }] })
  t.equal(json(await s.call({ method: 'GET', url: '/v1/builds' })).total, 0, 'nothing queued')

  const api = await createApi(s)
  await s.call({ method: 'PATCH', url: `/v1/sdks/${sdk.id}`, payload: { apis: [{ api_id: api }] } })
  const queued = await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })
  t.equal(queued.statusCode, 202)
  const [build] = json(queued).data
  t.equal(json(await s.call({ method: 'GET', url: '/v1/builds' })).total, 1)
  t.equal((await s.call({ method: 'DELETE', url: `/v1/sdks/${sdk.id}` })).statusCode, 204)
  t.equal((await s.call({ method: 'GET', url: `/v1/builds/${build.id}` })).statusCode, 404)
  t.equal((await s.call({ method: 'GET', url: `/v1/builds/${build.id}/logs` })).statusCode, 404)
  t.same(json(await s.call({ method: 'GET', url: '/v1/builds' })), { data: [], total: 0 })
  t.equal((await s.call({ method: 'GET', url: `/v1/sdks/${sdk.id}/builds` })).statusCode, 404)
  t.equal((await s.call({ method: 'DELETE', url: `/v1/apis/${api}` })).statusCode, 204, 'the API is free again')
})
