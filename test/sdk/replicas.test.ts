/**
 * SDK builds across replicas (issue 16, item 8): two registries on one PostgreSQL database, each with
 * its own build runner, run every build exactly once (one claim, one push); a build left running by a
 * replica that died is left alone while its lease lasts and run again by a live replica once it ended.
 */
import { rmSync } from 'node:fs'
import t, { type Test } from 'tap'
import { Registry } from '../../src/domain/registry.js'
import type { Actor } from '../../src/domain/accounts/organizations.js'
import { OUTBOUND_LOOPBACK, json, petstore, startTestServer, tempDir, testRegistryOptions, testSecretKeys, type TestServer } from '../helpers.js'
import { startGitServerForTest } from '../support/git-server-for-test.js'
import { postgresForFile } from '../support/postgres.js'
import { seed, waitForBuild } from './support.js'

const server = await postgresForFile(t)

/** A bare repository with a first commit on main, on a git server whose requests the test reads. */
async function gitServer(t: Test) {
  const { git } = await startGitServerForTest(t, { prefix: 'sdk-git-' })
  git.createBare('pets')
  const url = `${git.url}/pets.git`
  await seed(url)
  const receivePacks = () => git.requests.filter((r) => r.method === 'POST' && r.url.endsWith('/git-receive-pack')).length
  const seeded = receivePacks()
  /** Pushes made since the seed's. */
  const pushes = () => receivePacks() - seeded
  return { url, pushes }
}

async function replica(t: Test, databaseUrl: string): Promise<TestServer> {
  const s = await startTestServer({ databaseUrl, outboundHosts: OUTBOUND_LOOPBACK })
  t.teardown(() => s.close())
  return s
}

const logOf = async (s: TestServer, key: string, id: string) => (await s.call({ method: 'GET', url: `/v1/builds/${id}/logs`, key })).body

if (server) {
  t.test('two replicas on one database: every build is claimed once, run once and pushed once', async (t) => {
    const databaseUrl = await server.createDatabase()
    const repo = await gitServer(t)
    const a = await replica(t, databaseUrl)
    const b = await replica(t, databaseUrl)
    const key = a.key
    const call = (s: TestServer, request: Parameters<TestServer['call']>[0]) => s.call({ ...request, key })
    const api = json(await call(a, { method: 'POST', url: '/v1/apis', payload: { name: 'Pets' } })).data
    t.equal((await call(b, { method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore() } })).statusCode, 201)
    const sdk = json(await call(a, { method: 'POST', url: '/v1/sdks', payload: { name: 'Pets', targets: ['php'], apis: [{ api_id: api.id }] } })).data
    t.equal((await call(b, { method: 'PUT', url: `/v1/sdks/${sdk.id}/targets/php/repository`, payload: { provider: 'git', url: repo.url } })).statusCode, 201)

    // Builds queued through both replicas at once: each replica's runner is nudged by its own, and
    // both look at the one queue in the database.
    const queued = await Promise.all(Array.from({ length: 6 }, (_, i) => call(i % 2 ? b : a, { method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })))
    const ids: string[] = queued.map((response) => json(response).data[0].id)
    t.equal(new Set(ids).size, 6)

    const holders = new Set([a.registry.builds.holder, b.registry.builds.holder])
    const ranBy = new Map<string, number>()
    for (const id of ids) {
      const build = await waitForBuild({ ...a, call: (request) => a.call({ ...request, key }) }, id)
      t.equal(build.status, 'succeeded', build.error ?? undefined)
      t.equal(build.attempts, 1, `build ${build.number}: one attempt`)
      t.equal(build.lease, undefined, 'the lease is not shown')
      const log = await logOf(b, key, id)
      const starts = [...log.matchAll(/started, attempt \d of 2, by (\S+)/g)]
      t.equal(starts.length, 1, `build ${build.number} started once: ${log}`)
      const holder = starts[0]?.[1] ?? ''
      t.ok(holders.has(holder), 'by one of the two replicas')
      ranBy.set(holder, (ranBy.get(holder) ?? 0) + 1)
    }
    t.equal(repo.pushes(), 6, 'one push per build, none twice')
    t.comment(`builds run per replica: ${[...ranBy.values()].join(' and ')}`)
  })

  t.test('a build running on a dead replica: left alone while its lease lasts, run again by a live replica after', async (t) => {
    const databaseUrl = await server.createDatabase()
    const repo = await gitServer(t)
    // A registry without the HTTP app has no running build runner: it stands for the replica that died.
    const storage = tempDir()
    t.teardown(() => rmSync(storage, { recursive: true, force: true }))
    const dead = await Registry.open({
      ...testRegistryOptions(storage), outboundHosts: OUTBOUND_LOOPBACK, databaseUrl, secretKeys: testSecretKeys(),
    })
    const { organization, secret: key } = await dead.organizations.create('acme', 'Acme')
    const actor: Actor = { organization, keyId: 'test', role: 'admin' }
    const { resource } = await dead.resources.create(actor, 'api', { name: 'Pets' })
    await dead.uploads.upload(resource, { document: petstore() })
    const sdk = await dead.sdks.create(actor, { name: 'Pets', targets: ['php'], apis: [{ api_id: resource.id }] })
    await dead.sdks.putRepository(actor, sdk.id, 'php', { provider: 'git', url: repo.url })
    const [ended] = await dead.sdks.queue(actor, sdk.id)
    const [live] = await dead.sdks.queue(actor, sdk.id)
    const liveUntil = new Date(Date.now() + 8_000).toISOString()
    // What the dead replica left: both running on its leases, one already ended, one not yet.
    await dead.storage.transaction(async ({ sdks }) => {
      await sdks.putBuild({ ...(await sdks.build(ended.id))!, status: 'running', attempts: 1, lease: { holder: 'dead-replica', until: '2000-01-01T00:00:00.000Z' } })
      await sdks.putBuild({ ...(await sdks.build(live.id))!, status: 'running', attempts: 1, lease: { holder: 'dead-replica', until: liveUntil } })
    })
    await dead.close()

    const s = await replica(t, databaseUrl)
    const keyed: TestServer = { ...s, call: (request) => s.call({ ...request, key }) }
    const retried = await waitForBuild(keyed, ended.id)
    t.equal(retried.status, 'succeeded', retried.error ?? undefined)
    t.equal(retried.attempts, 2, 'the ended lease: run again, one more attempt')
    t.match(await logOf(s, key, ended.id), /stopped while this build was running \(attempt 1 of 2\); queued again/)

    const stored = await s.registry.storage.read.sdks.build(live.id)
    t.ok(Date.now() < Date.parse(liveUntil), 'checked while the lease lasts')
    t.match(stored, { status: 'running', attempts: 1, lease: { holder: 'dead-replica', until: liveUntil } }, 'the live lease is left alone')

    const taken = await waitForBuild(keyed, live.id)
    t.ok(Date.now() >= Date.parse(liveUntil), 'only after its lease ended')
    t.equal(taken.status, 'succeeded', taken.error ?? undefined)
    t.equal(taken.attempts, 2)
    t.equal(repo.pushes(), 2, 'each pushed once by the live replica')
  })
}
