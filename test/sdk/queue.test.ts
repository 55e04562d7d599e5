/**
 * The persistent build queue: builds queued before a restart run after it, a build interrupted by a
 * crash is retried once and then failed, and cancel works while queued and while running.
 */
import type { IncomingMessage } from 'node:http'
import t from 'tap'
import { Registry } from '../../src/domain/registry.js'
import type { Actor } from '../../src/domain/accounts/organizations.js'
import { OUTBOUND_LOOPBACK, json, petstore, startTestServer, testRegistryOptions } from '../helpers.js'
import { buildFixture, waitForBuild } from './support.js'

const openRegistry = (storage: string) =>
  Registry.open({ ...testRegistryOptions(storage), outboundHosts: OUTBOUND_LOOPBACK })

/** A registry (no HTTP app, so no build runner) with an SDK whose php target pushes to `repoUrl`. */
async function prepare(storage: string, repoUrl: string) {
  const registry = await openRegistry(storage)
  const { organization } = await registry.organizations.create('acme')
  const actor: Actor = { organization, keyId: 'test', role: 'admin' }
  const { resource } = await registry.resources.create(actor, 'api', { name: 'Petstore' })
  await registry.uploads.upload(resource, { document: petstore() })
  const sdk = await registry.sdks.create(actor, { name: 'Pets', targets: ['php'], apis: [{ api_id: resource.id }] })
  await registry.sdks.putRepository(actor, sdk.id, 'php', { provider: 'git', url: repoUrl })
  return { registry, actor, sdk }
}

/** Restarts on the same storage with the HTTP app (which starts the runner) and a key for `acme`. */
async function restart(storage: string) {
  const s = await startTestServer({ storage, outboundHosts: OUTBOUND_LOOPBACK })
  const { secret } = await s.registry.organizations.createKey('acme')
  const call = (options: Parameters<typeof s.call>[0]) => s.call({ ...options, key: secret })
  return { s: { ...s, call }, close: () => s.close() }
}

t.test('queued builds survive a restart and run after it; a build running at a crash is retried once, then failed', async (t) => {
  const { petsUrl, storage } = await buildFixture(t)

  const { registry, actor, sdk } = await prepare(storage, petsUrl)
  const [queued] = await registry.sdks.queue(actor, sdk.id)
  const [crashed] = await registry.sdks.queue(actor, sdk.id)
  const [crashedTwice] = await registry.sdks.queue(actor, sdk.id)
  // What a crash leaves: builds marked running (the process died before writing their outcome).
  await registry.storage.transaction(async ({ sdks }) => {
    await sdks.putBuild({ ...(await sdks.build(crashed.id))!, status: 'running', attempts: 1 })
    await sdks.putBuild({ ...(await sdks.build(crashedTwice.id))!, status: 'running', attempts: 2 })
  })
  await registry.close()

  const { s, close } = await restart(storage)
  t.teardown(close)
  const first = await waitForBuild(s as never, queued.id)
  t.equal(first.status, 'succeeded', first.error)
  t.equal(first.attempts, 1)
  t.equal(first.output.branch, 'registry/pets-php-1')

  const retried = await waitForBuild(s as never, crashed.id)
  t.equal(retried.status, 'succeeded', retried.error)
  t.equal(retried.attempts, 2, 'retried once')
  t.match((await s.call({ method: 'GET', url: `/v1/builds/${crashed.id}/logs` })).body, /stopped while this build was running \(attempt 1 of 2\); queued again/)

  const failed = await waitForBuild(s as never, crashedTwice.id)
  t.equal(failed.status, 'failed')
  t.match(failed.error, /the registry stopped while this build was running, 2 times; it is not retried again/)
  t.ok(failed.finished_at)

  const list = json(await s.call({ method: 'GET', url: `/v1/sdks/${sdk.id}/builds` }))
  t.equal(list.total, 3)
  t.same(list.data.map((b: any) => b.number), [3, 2, 1], 'newest first')
  const all = json(await s.call({ method: 'GET', url: '/v1/builds?limit=2' }))
  t.equal(all.total, 3)
  t.same(all.data.map((b: any) => b.id), [crashedTwice.id, crashed.id])
})

t.test('cancel: a queued build never runs; a running build is aborted and the queue moves on', async (t) => {
  // A build delivering to the stuck server stays running until canceled.
  const hanging: IncomingMessage[] = []
  let closed = 0
  const { petsUrl, stuckUrl, storage } = await buildFixture(t, (request: IncomingMessage) => {
    hanging.push(request)
    request.socket.on('close', () => { closed += 1 })
  })

  const { registry, actor, sdk } = await prepare(storage, petsUrl)
  const [never] = await registry.sdks.queue(actor, sdk.id)
  const canceled = await registry.sdks.cancel(actor, never.id)
  t.equal(canceled.status, 'canceled')
  await registry.close()

  const { s, close } = await restart(storage)
  t.teardown(close)
  const again = await s.call({ method: 'POST', url: `/v1/builds/${never.id}/cancel` })
  t.equal(again.statusCode, 409, 'a finished build cannot be canceled')

  // Point the target at the server that never answers, and build.
  await s.call({ method: 'PUT', url: `/v1/sdks/${sdk.id}/targets/php/repository`, payload: { provider: 'git', url: stuckUrl } })
  const [slow] = json(await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })).data
  await waitForBuild(s as never, slow.id, (b) => b.status === 'running')
  for (let i = 0; i < 400 && hanging.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50))
  t.ok(hanging.length > 0, 'the build reached its delivery')
  const cancel = await s.call({ method: 'POST', url: `/v1/builds/${slow.id}/cancel` })
  t.equal(cancel.statusCode, 200)
  t.equal(json(cancel).data.status, 'canceled')
  for (let i = 0; i < 200 && closed === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50))
  t.ok(closed > 0, 'the delivery was aborted (its connection closed)')

  // The queue moves on; the canceled builds stay canceled.
  await s.call({ method: 'PUT', url: `/v1/sdks/${sdk.id}/targets/php/repository`, payload: { provider: 'git', url: petsUrl } })
  const [next] = json(await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })).data
  const done = await waitForBuild(s as never, next.id)
  t.equal(done.status, 'succeeded', done.error)
  const neverRan = json(await s.call({ method: 'GET', url: `/v1/builds/${never.id}` })).data
  t.match(neverRan, { status: 'canceled', attempts: 0, started_at: null, output: null })
  t.equal((await s.call({ method: 'GET', url: `/v1/builds/${never.id}/artifact` })).statusCode, 404)
  t.match(json(await s.call({ method: 'GET', url: `/v1/builds/${slow.id}` })).data, { status: 'canceled', attempts: 1, output: null })
  t.match((await s.call({ method: 'GET', url: `/v1/builds/${slow.id}/logs` })).body, /canceled/)
})

t.test('a build running when the server shuts down cleanly runs again after the restart, without counting the attempt', async (t) => {
  const hanging: IncomingMessage[] = []
  const { petsUrl, stuckUrl, storage } = await buildFixture(t, (request: IncomingMessage) => { hanging.push(request) })
  const { registry, actor, sdk } = await prepare(storage, stuckUrl)
  const [build] = await registry.sdks.queue(actor, sdk.id)
  await registry.close()

  // It runs, and hangs in its delivery; the server shuts down meanwhile.
  const first = await restart(storage)
  await waitForBuild(first.s as never, build.id, (b) => b.status === 'running')
  for (let i = 0; i < 400 && hanging.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50))
  t.ok(hanging.length > 0, 'the build reached its delivery')
  await first.close()

  const reopened = await openRegistry(storage)
  const stored = (await reopened.storage.read.sdks.build(build.id))!
  t.match(stored, { status: 'queued', attempts: 0, started_at: null }, 'queued again, the attempt not counted')
  t.match(await reopened.storage.read.sdks.log(build.id), /interrupted by a shutdown; queued again/)
  // The repository is read when the build runs: point it at the working server.
  await reopened.sdks.putRepository(actor, sdk.id, 'php', { provider: 'git', url: petsUrl })
  await reopened.close()

  const second = await restart(storage)
  t.teardown(second.close)
  const done = await waitForBuild(second.s as never, build.id)
  t.equal(done.status, 'succeeded', done.error)
  t.equal(done.attempts, 1)
})
