/**
 * Issue 20, items 8 and 10: the outbox survives a kill -9 of the registry. Events written before the
 * kill are delivered after a restart, and every event is answered 2xx by the receiver exactly once: an
 * attempt cut off by the kill (the receiver had it but had not answered) is sent again when its lease
 * ends, with the same webhook-id, which the specification allows since no 2xx was given for it.
 */
import { rmSync } from 'node:fs'
import type { ServerResponse } from 'node:http'
import t from 'tap'
import { tempDir } from '../temp.js'
import { api, OUTBOUND_LOOPBACK_ENV, startServer } from '../process/spawn.js'
import { startReceiver } from './receiver.js'

const KEY = 'sk_webhook-crash-test-00000000000000000000'
const ENV = { ...OUTBOUND_LOOPBACK_ENV, REGISTRY_BOOTSTRAP_KEY: KEY, REGISTRY_WEBHOOK_TIMEOUT_MS: '2000' }

t.test('kill -9 while deliveries are in flight: after a restart each event is answered exactly once', async (t) => {
  const storage = tempDir()
  const receiver = await startReceiver()
  t.teardown(async () => {
    await receiver.close()
    rmSync(storage, { recursive: true, force: true })
  })
  // Until the kill, the receiver holds every request without answering.
  const held: ServerResponse[] = []
  receiver.answer = (_request, response) => { held.push(response) }

  let server = await startServer(storage, ENV)
  t.teardown(() => server.stop('SIGKILL'))
  const endpoint = (await api(server.url, KEY, 'POST', '/v1/webhooks', { url: receiver.url, event_types: ['resource.created'] })).json().data
  receiver.secret = endpoint.secret
  for (const name of ['one', 'two', 'three', 'four', 'five']) {
    t.equal((await api(server.url, KEY, 'POST', '/v1/apis', { name })).status, 201)
  }
  await receiver.waitFor(2)
  await server.stop('SIGKILL')
  const cutOff = receiver.received.length
  t.ok(cutOff >= 2 && cutOff < 5, `${cutOff} attempts were in flight at the kill, the other events not yet sent`)

  receiver.answer = (_request, response) => { response.statusCode = 204; response.end() }
  server = await startServer(storage, ENV)
  // The events not yet sent go at once; the attempts cut off are due when their lease (2 s + 5 s) ends.
  await receiver.waitFor(5 + cutOff, 60_000)
  await new Promise((resolve) => setTimeout(resolve, 1000))

  const answered = receiver.received.filter((r) => r.answered)
  t.ok(receiver.received.every((r) => r.verified !== undefined), 'every attempt is signed')
  const ids = answered.map((r) => String(r.headers['webhook-id']))
  t.equal(new Set(ids).size, 5, 'the five events')
  t.equal(ids.length, 5, 'each answered 2xx exactly once')
  const names = answered.map((r) => r.verified!.data.resource.name).sort()
  t.same(names, ['five', 'four', 'one', 'three', 'two'])
  const repeated = receiver.received.slice(0, cutOff).map((r) => String(r.headers['webhook-id']))
  t.ok(repeated.every((id) => ids.includes(id)), 'the attempts cut off were sent again with their webhook-id')
  t.ok(receiver.received.slice(0, cutOff).every((r) => !r.answered), 'and had not been answered')

  const log = (await api(server.url, KEY, 'GET', `/v1/webhooks/${endpoint.id}/deliveries`)).json()
  t.equal(log.total, 5)
  t.ok(log.data.every((d: { status: string }) => d.status === 'succeeded'), 'every delivery succeeded')
  const cut = log.data.filter((d: { event_id: string }) => repeated.includes(d.event_id))
  t.ok(cut.every((d: { attempts: number }) => d.attempts === 2), 'the attempt cut off counts')
})
