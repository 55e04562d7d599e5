/**
 * Deliveries that fail (issue 20, item 8): retried on Standard Webhooks' schedule for about a day, then
 * given up; an endpoint that fails for 5 days is disabled and says why; a delivery is sent again on
 * request; redirects are not followed; an attempt has a time limit; the log keeps a redacted excerpt.
 * The registry's own deliverer is stopped: these tests send with a deliverer whose clock they move.
 */
import t, { type Test } from 'tap'
import { WebhookDeliverer } from '../../src/domain/events/deliverer.js'
import { RETRY_DELAYS_SECONDS } from '../../src/domain/events/schedule.js'
import { json, OUTBOUND_LOOPBACK, petstore, startTestServer, type TestServer } from '../helpers.js'
import { startReceiver, type Receiver } from './receiver.js'

async function setUp(t: Test, timeoutMs?: number) {
  const s = await startTestServer({ outboundHosts: OUTBOUND_LOOPBACK })
  const receiver = await startReceiver()
  await s.app.ready() // the app starts its deliverer when it is ready, on its first request otherwise
  await s.registry.deliverer.stop()
  const clock = { at: new Date() }
  const deliverer = new WebhookDeliverer(s.registry.storage, {
    outbound: s.registry.outbound, secrets: s.registry.secrets, log: s.registry.log, clock: () => clock.at, timeoutMs,
  })
  t.teardown(async () => { await deliverer.stop(); await s.close(); await receiver.close() })
  const endpoint = json(await s.call({ method: 'POST', url: '/v1/webhooks', payload: { url: receiver.url } })).data
  receiver.secret = endpoint.secret
  return { s, receiver, deliverer, clock, endpoint }
}

const deliveries = async (s: TestServer, endpointId: string) =>
  json(await s.call({ method: 'GET', url: `/v1/webhooks/${endpointId}/deliveries` }))

const later = (clock: { at: Date }, seconds: number) => { clock.at = new Date(clock.at.getTime() + seconds * 1000) }
/** The deliverer's time a second past now: every delivery written so far is due. */
const caughtUp = (clock: { at: Date }) => { clock.at = new Date(Date.now() + 1000) }

async function apiCreated(s: TestServer, name = 'Pets'): Promise<string> {
  return json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name } })).data.id
}

t.test('a failing endpoint is retried on the schedule, given up, disabled after 5 days, and redelivered once enabled', async (t) => {
  const { s, receiver, deliverer, clock, endpoint } = await setUp(t)
  receiver.answer = (_request, response) => { response.statusCode = 500; response.end(`boom: ${receiver.secret}`) }
  const api = await apiCreated(s)
  caughtUp(clock)
  const started = clock.at.getTime()

  t.equal(await deliverer.deliverDue(), 1, 'the first attempt')
  let [delivery] = (await deliveries(s, endpoint.id)).data
  t.match(delivery, { status: 'pending', attempts: 1, log: [{ attempt: 1, status_code: 500, response: 'boom: [redacted]' }] }, 'the secret echoed back is redacted')
  t.equal(Date.parse(delivery.next_attempt_at) - clock.at.getTime(), 5_000, 'the next attempt in 5 s')
  t.equal(await deliverer.deliverDue(), 0, 'not due before then')
  t.match(json(await s.call({ method: 'GET', url: `/v1/webhooks/${endpoint.id}` })).data, { enabled: true, failing_since: clock.at.toISOString() })

  for (const [i, delay] of RETRY_DELAYS_SECONDS.entries()) {
    later(clock, delay - 1)
    t.equal(await deliverer.deliverDue(), 0, `attempt ${i + 2} is not due a second early`)
    later(clock, 1)
    t.equal(await deliverer.deliverDue(), 1, `attempt ${i + 2}, ${delay} s after the one before`)
  }
  ;[delivery] = (await deliveries(s, endpoint.id)).data
  t.match(delivery, { status: 'failed', attempts: 8, next_attempt_at: null })
  t.equal(delivery.log.length, 8, 'every attempt is in the log')
  t.ok(clock.at.getTime() - started > 24 * 3600_000, `retried for more than a day (${Math.round((clock.at.getTime() - started) / 3600_000)} h)`)
  t.equal(receiver.received.length, 8)
  later(clock, 10 * 24 * 3600)
  t.equal(await deliverer.deliverDue(), 0, 'and never again')

  // Failing since the first attempt, 5 days ago and more: the next failure disables the endpoint.
  await s.call({ method: 'PATCH', url: `/v1/apis/${api}`, payload: { name: 'Pets 2' } })
  t.equal(await deliverer.deliverDue(), 1)
  const disabled = json(await s.call({ method: 'GET', url: `/v1/webhooks/${endpoint.id}` })).data
  t.match(disabled, { enabled: false, disabled_reason: /^disabled by the registry at .*: every delivery failed since / })
  await s.call({ method: 'PATCH', url: `/v1/apis/${api}`, payload: { name: 'Pets 3' } })
  t.equal((await deliveries(s, endpoint.id)).total, 2, 'a disabled endpoint gets no new deliveries')
  const first = (await deliveries(s, endpoint.id)).data[1]
  const refused = await s.call({ method: 'POST', url: `/v1/webhooks/${endpoint.id}/deliveries/${first.id}/redeliver` })
  t.equal(refused.statusCode, 409, 'nor redeliveries')

  const enabled = json(await s.call({ method: 'PATCH', url: `/v1/webhooks/${endpoint.id}`, payload: { enabled: true } })).data
  t.match(enabled, { enabled: true, disabled_reason: null, failing_since: null })
  receiver.answer = (_request, response) => { response.statusCode = 200; response.end('ok') }
  const again = await s.call({ method: 'POST', url: `/v1/webhooks/${endpoint.id}/deliveries/${first.id}/redeliver` })
  t.equal(again.statusCode, 202)
  t.match(json(again).data, { id: first.id, status: 'pending', attempts: 8 })
  t.equal(await deliverer.deliverDue(), 1)
  const redelivered = (await deliveries(s, endpoint.id)).data[1]
  t.match(redelivered, { id: first.id, status: 'succeeded', attempts: 9, next_attempt_at: null })
  t.match(redelivered.log.at(-1), { attempt: 9, status_code: 200, response: 'ok' }, 'the log goes on, counting on')
  t.equal(redelivered.log.length, 9)
  const last = receiver.received.at(-1)!
  t.equal(last.headers['webhook-id'], receiver.received[0].headers['webhook-id'], 'the same webhook-id as the first attempt')
  t.equal(JSON.parse(last.body).type, 'resource.created')
})

t.test('a redirect is not followed, and an attempt has a time limit', async (t) => {
  const { s, receiver, deliverer, clock, endpoint } = await setUp(t, 300)
  // The Location is the receiver itself: a followed redirect would arrive as a second request.
  receiver.answer = (_request, response) => { response.writeHead(302, { location: `${receiver.url}?followed=1` }).end() }
  await apiCreated(s)
  caughtUp(clock)
  t.equal(await deliverer.deliverDue(), 1)
  const [redirected] = (await deliveries(s, endpoint.id)).data
  t.match(redirected, { status: 'pending', log: [{ status_code: 302, response: /^redirects are not followed/ }] })
  t.equal(receiver.received.length, 1, 'the Location was not requested')

  receiver.answer = () => {} // never answers
  await apiCreated(s, 'Slow')
  caughtUp(clock)
  const before = Date.now()
  t.equal(await deliverer.deliverDue(), 1)
  t.ok(Date.now() - before < 5_000, 'the attempt ended at its limit')
  const [slow] = (await deliveries(s, endpoint.id)).data
  t.match(slow, { status: 'pending', log: [{ status_code: null, response: 'no answer within 300 ms' }] })
})

t.test('an endpoint nothing listens on: unreachable, and nothing more is said', async (t) => {
  const { s, receiver, deliverer, clock, endpoint } = await setUp(t)
  await receiver.close()
  await s.call({ method: 'POST', url: `/v1/apis/${await apiCreated(s)}/spec`, payload: { document: petstore() } })
  caughtUp(clock)
  t.equal(await deliverer.deliverDue(), 2)
  const logged = (await deliveries(s, endpoint.id)).data.map((d: { log: { status_code: number | null; response: string }[] }) => d.log[0])
  t.same(logged.map((l: { status_code: number | null; response: string }) => [l.status_code, l.response]),
    [[null, "unreachable (the server's log says why)"], [null, "unreachable (the server's log says why)"]])
  t.match(s.serverLog.at(-1), { endpoint_id: endpoint.id, message: 'webhooks: a delivery got no answer', reason: /ECONNREFUSED/ }, "the operator's log says why")
})

t.test('a redelivery that fails is retried on the schedule from its own start', async (t) => {
  const { s, receiver, deliverer, clock, endpoint } = await setUp(t)
  receiver.answer = (_request, response) => { response.statusCode = 503; response.end() }
  await apiCreated(s)
  caughtUp(clock)
  await deliverer.deliverDue()
  later(clock, RETRY_DELAYS_SECONDS[0])
  await deliverer.deliverDue()
  const [twice] = (await deliveries(s, endpoint.id)).data
  t.match(twice, { attempts: 2, status: 'pending' })
  t.equal(Date.parse(twice.next_attempt_at) - clock.at.getTime(), RETRY_DELAYS_SECONDS[1] * 1000, 'the third attempt on the schedule')
  await s.call({ method: 'POST', url: `/v1/webhooks/${endpoint.id}/deliveries/${twice.id}/redeliver` })
  caughtUp(clock)
  t.equal(await deliverer.deliverDue(), 1, 'redelivered at once')
  const [again] = (await deliveries(s, endpoint.id)).data
  t.match(again, { attempts: 3, status: 'pending', log: [{ attempt: 1 }, { attempt: 2 }, { attempt: 3, status_code: 503 }] })
  t.equal(Date.parse(again.next_attempt_at) - clock.at.getTime(), RETRY_DELAYS_SECONDS[0] * 1000, 'its first retry 5 s later, as a new round')
})
