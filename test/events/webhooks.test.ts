/**
 * Outbound events (issue 20, items 6 to 8): webhook endpoints per organization, every event type
 * delivered after the change, signed per Standard Webhooks and verified here with its own library.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { json, OUTBOUND_LOOPBACK, petstore, startTestServer, type TestServer } from '../helpers.js'
import { createSdk, waitForBuild } from '../sdk/support.js'
import { eventually } from '../support/git-repos.js'
import { startReceiver, type Receiver } from './receiver.js'

async function endpointFor(s: TestServer, receiver: Receiver, payload: Record<string, unknown> = {}) {
  const created = await s.call({ method: 'POST', url: '/v1/webhooks', payload: { url: receiver.url, ...payload } })
  if (created.statusCode !== 201) throw new Error(created.body)
  const endpoint = json(created).data
  receiver.secret = endpoint.secret
  return endpoint
}

/** A document without the `/pets` operations of petstore(): removing them is breaking. */
function withoutPets(version: string): Record<string, unknown> {
  const document = petstore(version)
  document.paths = { '/health': { get: { operationId: 'health', responses: { '204': { description: 'up' } } } } }
  return document
}

/** petstore() with one more operation: an addition, not breaking. */
function withOwners(version: string): Record<string, unknown> {
  const document = petstore(version)
  document.paths = { ...(document.paths as object), '/owners': { get: { operationId: 'listOwners', responses: { '200': { description: 'the owners' } } } } }
  return document
}

t.test('endpoints: made with a secret shown once, listed without it, changed, checked, admin only', async (t) => {
  const s = await startTestServer({ outboundHosts: OUTBOUND_LOOPBACK })
  t.teardown(s.close)
  const created = await s.call({ method: 'POST', url: '/v1/webhooks', payload: { url: 'https://hooks.example.com/registry', event_types: ['version.created', 'version.created'] } })
  t.equal(created.statusCode, 201, created.body)
  t.equal(created.headers['cache-control'], 'no-store')
  const endpoint = json(created).data
  t.match(endpoint, { url: 'https://hooks.example.com/registry', event_types: ['version.created'], enabled: true, secret_status: 'stored', disabled_reason: null })
  t.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]{32}$/, 'a Standard Webhooks secret')
  const listed = json(await s.call({ method: 'GET', url: '/v1/webhooks' }))
  t.equal(listed.total, 1)
  t.notOk('secret' in listed.data[0], 'never listed again')
  t.notOk(JSON.stringify(json(await s.call({ method: 'GET', url: `/v1/webhooks/${endpoint.id}` }))).includes(endpoint.secret), 'nor shown')

  const changed = await s.call({ method: 'PATCH', url: `/v1/webhooks/${endpoint.id}`, payload: { event_types: [], description: 'CI', enabled: false } })
  t.match(json(changed).data, { event_types: [], description: 'CI', enabled: false })
  const again = json(await s.call({ method: 'POST', url: `/v1/webhooks/${endpoint.id}/secret` })).data
  t.match(again.secret, /^whsec_/)
  t.not(again.secret, endpoint.secret, 'a new secret')

  for (const [url, status, why] of [
    ['ftp://hooks.example.com/x', 400, /must be an http\(s\) URL/],
    ['https://user:pass@hooks.example.com/x', 400, /credentials/],
    ['https://hooks.example.com/x\r\nX-Injected: 1', 422, /control character/],
    ['not a url', 400, /absolute http\(s\) URL/],
  ] as const) {
    const refused = await s.call({ method: 'POST', url: '/v1/webhooks', payload: { url } })
    t.equal(refused.statusCode, status, `refused: ${JSON.stringify(url)}`)
    t.match(json(refused).detail, why)
  }
  t.equal((await s.call({ method: 'POST', url: '/v1/webhooks', payload: { url: 'https://x.example', event_types: ['version.exploded'] } })).statusCode, 400, 'unknown event types')

  const reader = await s.registry.organizations.issueKey(s.orgId, 'reader', 'write')
  t.equal((await s.call({ key: reader.secret, method: 'GET', url: '/v1/webhooks' })).statusCode, 403, 'a write key cannot see them')
  t.equal((await s.call({ method: 'DELETE', url: `/v1/webhooks/${endpoint.id}` })).statusCode, 204)
  t.equal((await s.call({ method: 'GET', url: `/v1/webhooks/${endpoint.id}` })).statusCode, 404)
  const other = await s.registry.organizations.create('globex', 'Globex')
  t.equal(json(await s.call({ key: other.secret, method: 'GET', url: '/v1/webhooks' })).total, 0, "another organization's list")
})

t.test('the outbound policy applies to endpoint URLs', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  for (const url of ['http://127.0.0.1:9/hooks', 'http://169.254.169.254/latest', 'http://[::1]/x', 'http://10.0.0.8/x']) {
    const refused = await s.call({ method: 'POST', url: '/v1/webhooks', payload: { url } })
    t.equal(refused.statusCode, 400, url)
    t.match(json(refused).detail, /^url: /)
  }
})

t.test('every event of an API, a restore and a refusal reaches the endpoint once, signed, after the change', async (t) => {
  const s = await startTestServer({ outboundHosts: OUTBOUND_LOOPBACK })
  const receiver = await startReceiver()
  t.teardown(async () => { await s.close(); await receiver.close() })
  await endpointFor(s, receiver)

  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Pets' } })).data
  const upload = (document: unknown) => s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document } })
  const first = json(await upload(petstore('1.0.0'))).data
  t.equal((await upload(petstore('1.0.0'))).statusCode, 200, 'an unchanged upload: no version, no event')
  await upload(withOwners('1.1.0'))
  t.equal((await s.call({ method: 'POST', url: `/v1/apis/${api.id}/versions/${first.id}/restore` })).statusCode, 201)
  await s.call({ method: 'PATCH', url: `/v1/apis/${api.id}`, payload: { compatibility: 'backward' } })
  const refused = await upload(withoutPets('2.0.0'))
  t.equal(refused.statusCode, 422)
  t.equal((await s.call({ method: 'DELETE', url: `/v1/apis/${api.id}` })).statusCode, 204)

  // Deliveries are sent side by side, so they may arrive in any order: webhook-ids are ULIDs, in event order.
  const received = [...await receiver.waitFor(7)].sort((a, b) => String(a.headers['webhook-id']).localeCompare(String(b.headers['webhook-id'])))
  t.ok(received.every((r) => r.verified !== undefined), 'every signature verifies with the standardwebhooks library')
  const events = received.map((r) => r.verified!)
  t.same(events.map((e) => e.type), [
    'resource.created', 'version.created', 'version.created', 'version.restored', 'resource.updated', 'upload.blocked', 'resource.deleted',
  ], 'in the order of the changes')
  t.equal(new Set(received.map((r) => r.headers['webhook-id'])).size, 7, 'one webhook-id per event')
  t.match(events[0].data, { resource: { id: api.id, kind: 'api', slug: 'pets', name: 'Pets' } })
  t.match(events[1].data, { resource: { id: api.id }, version: { number: 1, source: 'upload' }, changes: null })
  t.match(events[2].data, { version: { number: 2 }, changes: { from: 1, summary: { breaking: 0, non_breaking: 1 }, breaking: [] } })
  t.match(events[3].data, { version: { number: 3, source: 'restore', restored_from: first.id }, changes: { from: 2, summary: { breaking: 1 } } })
  t.match(events[3].data.changes.breaking, [{ message: String }], 'the breaking change is listed')
  t.match(events[4].data, { changed: ['compatibility'] })
  t.match(events[5].data, { code: 'incompatible', source: 'upload', detail: /break/, total_errors: 1, errors: [{ message: String }] })
  t.match(events[6].data, { resource: { id: api.id, slug: 'pets' } })
  t.match(received[0].headers, { 'content-type': 'application/json', 'webhook-timestamp': /^\d+$/, 'webhook-signature': /^v1,/ })

  const endpoints = json(await s.call({ method: 'GET', url: '/v1/webhooks' })).data
  // Recorded once the receiver's answer is back: the receiver may see the request a moment before.
  const log = await eventually(async () => {
    const page = json(await s.call({ method: 'GET', url: `/v1/webhooks/${endpoints[0].id}/deliveries` }))
    return page.data.every((d: { status: string }) => d.status === 'succeeded') ? page : undefined
  })
  t.equal(log.total, 7)
  t.match(log.data[0], { event_type: 'resource.deleted', status: 'succeeded', attempts: 1, next_attempt_at: null, log: [{ attempt: 1, status_code: 204 }] })
  await new Promise((resolve) => setTimeout(resolve, 1500))
  t.equal(receiver.received.length, 7, 'and nothing is sent twice')
})

t.test('an endpoint gets only the types it asked for; a failed sync and a build are events too', async (t) => {
  const s = await startTestServer({ outboundHosts: OUTBOUND_LOOPBACK })
  const receiver = await startReceiver()
  t.teardown(async () => { await s.close(); await receiver.close() })
  await endpointFor(s, receiver, { event_types: ['sync.failed', 'build.succeeded', 'build.failed'] })

  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Billing' } })).data
  await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore() } })
  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as AddressInfo).port
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  const url = `http://127.0.0.1:${port}/closed.git`
  await s.call({ method: 'PUT', url: `/v1/apis/${api.id}/repository`, payload: { provider: 'github', url, branch: 'main', path: 'openapi.yaml' } })
  t.equal((await s.call({ method: 'POST', url: `/v1/apis/${api.id}/sync` })).statusCode, 502)

  const sdk = await createSdk(s, [api.id], ['typescript'])
  const [built] = json(await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds`, payload: { archive_only: true } })).data
  t.equal((await waitForBuild(s, built.id)).status, 'succeeded')
  await s.call({ method: 'PUT', url: `/v1/sdks/${sdk.id}/targets/typescript/repository`, payload: { provider: 'git', url } })
  const [failing] = json(await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })).data
  t.equal((await waitForBuild(s, failing.id)).status, 'failed')

  const events = [...await receiver.waitFor(3)]
    .sort((a, b) => String(a.headers['webhook-id']).localeCompare(String(b.headers['webhook-id']))).map((r) => r.verified!)
  t.same(events.map((e) => e.type), ['sync.failed', 'build.succeeded', 'build.failed'], 'no resource or version events')
  t.match(events[0].data, { resource: { id: api.id }, status: 'failed', trigger: 'manual', error: { code: 'repository_unavailable' }, repository: { url } })
  t.match(events[1].data, { build: { id: built.id, status: 'succeeded', target: 'typescript' }, sdk: { id: sdk.id } })
  t.match(events[2].data, { build: { id: failing.id, status: 'failed', error: String } })
  t.notMatch(JSON.stringify(events), /"(token|secret)"/, 'no secret in any payload')
})
