/**
 * Repository syncs across replicas (issue 16, item 8): two registries on one PostgreSQL database sync
 * one API one at a time (manual syncs and webhooks through both at once, the branch moving meanwhile),
 * and never publish an older commit after a newer one; a sync left by a replica that died is run by a
 * live one once its lease ended, and a manual sync asked for meanwhile waits for that.
 */
import { createHmac, randomUUID } from 'node:crypto'
import { rmSync } from 'node:fs'
import t, { type Test } from 'tap'
import { Registry } from '../../src/domain/registry.js'
import type { Actor } from '../../src/domain/accounts/organizations.js'
import { OUTBOUND_LOOPBACK, json, petstore, startTestServer, tempDir, testRegistryOptions, testSecretKeys, type TestServer } from '../helpers.js'
import { startGitServerForTest } from '../support/git-server-for-test.js'
import { createRepository, eventually, type TestRepository } from '../support/git-repos.js'
import { postgresForFile } from '../support/postgres.js'

const server = await postgresForFile(t)
const SECRET = 'replica-hook-secret'

/** A git server behind a proxy that records when each request of a fetch started and ended. */
async function gitServer(t: Test): Promise<{ repo: TestRepository; url: string; fetches: { start: number; end: number; what: string }[] }> {
  const fetches: { start: number; end: number; what: string }[] = []
  const server = await startGitServerForTest(t, {
    prefix: 'sync-replicas-git-',
    proxy: (incoming, _outgoing, passOn) => {
      const fetch = { start: performance.now(), end: Infinity, what: `${incoming.method} ${incoming.url}` }
      fetches.push(fetch)
      passOn(() => { fetch.end = performance.now() })
    },
  })
  const repo = await createRepository(server.git, 'pets')
  t.teardown(() => repo.cleanup())
  return { repo, url: `${server.url}/pets.git`, fetches }
}

/** True once no replica holds the API's sync lease; undefined while one does (for `eventually`). */
async function leaseReleased(s: TestServer, apiId: string): Promise<true | undefined> {
  return (await s.registry.storage.read.repositories.syncLease(apiId)) ? undefined : true
}

async function replica(t: Test, databaseUrl: string): Promise<TestServer> {
  const s = await startTestServer({ databaseUrl, outboundHosts: OUTBOUND_LOOPBACK })
  t.teardown(() => s.close())
  return s
}

const document = (n: number) => JSON.stringify(petstore(`1.0.${n}`))

/** A signed GitHub push to `main` of the repository at `url`. */
function push(s: TestServer, url: string, after: string) {
  const body = JSON.stringify({
    ref: 'refs/heads/main', before: '0'.repeat(40), after, created: false, deleted: false,
    repository: { html_url: url.replace(/\.git$/, ''), clone_url: url },
  })
  return s.app.inject({
    method: 'POST', url: '/webhooks/github', payload: body,
    headers: {
      'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': randomUUID(),
      'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
    },
  })
}

if (server) {
  t.test('two replicas sync one API one at a time, and never publish an older commit after a newer one', async (t) => {
    const databaseUrl = await server.createDatabase()
    const git = await gitServer(t)
    const a = await replica(t, databaseUrl)
    const b = await replica(t, databaseUrl)
    const key = a.key
    const call = (s: TestServer, request: Parameters<TestServer['call']>[0]) => s.call({ ...request, key })
    const api = json(await call(a, { method: 'POST', url: '/v1/apis', payload: { name: 'Pets' } })).data.id
    const put = await call(b, { method: 'PUT', url: `/v1/apis/${api}/repository`, payload: { provider: 'github', url: git.url, branch: 'main', path: 'openapi.json', webhook_secret: SECRET } })
    t.equal(put.statusCode, 201, put.body)
    await git.repo.commit({ 'openapi.json': document(1) })

    // Three rounds: manual syncs through both replicas and a webhook through each, all at once, while
    // the branch moves on.
    const answers: number[] = []
    let last = 1
    for (let round = 0; round < 3; round++) {
      const asked = [
        call(a, { method: 'POST', url: `/v1/apis/${api}/sync` }), call(b, { method: 'POST', url: `/v1/apis/${api}/sync` }),
        push(a, git.url, 'f'.repeat(40)), push(b, git.url, 'e'.repeat(40)),
        git.repo.commit({ 'openapi.json': document(++last) }).then(() => undefined),
        call(b, { method: 'POST', url: `/v1/apis/${api}/sync` }),
      ]
      for (const answer of await Promise.all(asked)) if (answer) answers.push(answer.statusCode)
    }
    t.ok(answers.every((status) => [200, 201, 202].includes(status)), `every sync and webhook answered: ${answers.join(' ')}`)
    // Whatever is still waiting after the rounds (the webhooks' syncs) runs, on whichever replica holds the lease.
    await eventually(() => leaseReleased(a, api))
    const final = await call(a, { method: 'POST', url: `/v1/apis/${api}/sync` })
    t.equal(final.statusCode, 200, 'the last commit is already published')
    t.equal(json(final).data.version, `1.0.${last}`)

    const listed = json(await call(b, { method: 'GET', url: `/v1/apis/${api}/versions?limit=100` })).data as { number: number; version: string }[]
    const published = listed.sort((x, y) => x.number - y.number).map((v) => Number(v.version.split('.')[2]))
    t.same(published, [...published].sort((x, y) => x - y), `versions follow the commits, never an older one after a newer one: ${published.join(', ')}`)
    t.equal(new Set(published).size, published.length, 'no commit published twice')
    t.equal(published.at(-1), last)

    // One sync at a time: no request of one fetch overlaps another's, whichever replica made it.
    const sorted = [...git.fetches].sort((x, y) => x.start - y.start)
    const overlapping = sorted.filter((fetch, i) => i > 0 && fetch.start < sorted[i - 1].end)
    t.ok(sorted.length >= 4, `${sorted.length} requests fetched the branch`)
    t.same(overlapping.map((fetch) => fetch.what), [], 'no request of a sync while another sync fetched')
  })

  t.test('a sync left running by a dead replica: left alone while its lease lasts, run by a live replica after', async (t) => {
    const databaseUrl = await server.createDatabase()
    const git = await gitServer(t)
    await git.repo.commit({ 'openapi.json': document(1) })
    // A registry without the HTTP app takes over nothing: it stands for the replica that died.
    const storage = tempDir()
    t.teardown(() => rmSync(storage, { recursive: true, force: true }))
    const dead = await Registry.open({
      ...testRegistryOptions(storage), outboundHosts: OUTBOUND_LOOPBACK, databaseUrl, secretKeys: testSecretKeys(),
    })
    const { organization, secret: key } = await dead.organizations.create('acme', 'Acme')
    const actor: Actor = { organization, keyId: 'test', role: 'admin' }
    const left = (await dead.resources.create(actor, 'api', { name: 'Left' })).resource
    const asked = (await dead.resources.create(actor, 'api', { name: 'Asked' })).resource
    for (const api of [left, asked]) await dead.repositorySync.connect(actor, api.id, { provider: 'github', url: git.url, branch: 'main', path: 'openapi.json' })
    const until = new Date(Date.now() + 10_000).toISOString()
    // What the dead replica left: a webhook's sync running on its lease, which has not ended yet.
    await dead.storage.transaction(async ({ repositories }) => {
      for (const api of [left, asked]) {
        await repositories.putSyncLease({
          api_id: api.id, pending: null,
          running: { request: { id: randomUUID(), trigger: 'webhook', delivery: `dead-${api.name}`, requested_at: new Date().toISOString() }, holder: 'dead-replica', until },
        })
      }
    })
    await dead.close()

    const s = await replica(t, databaseUrl)
    const manual = s.call({ method: 'POST', url: `/v1/apis/${asked.id}/sync`, key }).then((response) => ({ response, at: Date.now() }))
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    t.ok(Date.now() < Date.parse(until), 'checked while the lease lasts')
    t.match(await s.registry.storage.read.repositories.syncLease(left.id), { running: { holder: 'dead-replica', until } }, 'the live lease is left alone')
    t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${left.id}/versions`, key })).total, 0, 'nothing published yet')

    const { response, at } = await manual
    t.ok(at >= Date.parse(until), 'the manual sync waited for the dead replica\'s lease to end')
    const connection = async (id: string) => json(await s.call({ method: 'GET', url: `/v1/apis/${id}/repository`, key })).data
    // When the lease ends, two syncs of that API are due: the dead replica's interrupted one (taken over
    // by the live replica's poller) and the manual one waiting. Either may run first; the other then
    // finds the branch's commit already published. What a user sees either way: one version, from the
    // pushed commit, published after the lease ended, and an honest answer to the manual sync.
    const versions = json(await s.call({ method: 'GET', url: `/v1/apis/${asked.id}/versions`, key }))
    t.equal(versions.total, 1, 'the commit is published once')
    const last = (await connection(asked.id)).last_sync
    if (response.statusCode === 201) {
      t.match(last, { status: 'succeeded', trigger: 'manual', version_number: 1 }, 'the manual sync published it')
    } else {
      t.equal(response.statusCode, 200, response.body)
      t.match(json(response), { data: { number: 1, source: 'github' } }, 'the manual sync answers the version the interrupted sync published first')
      t.match(last, { status: 'unchanged', trigger: 'manual' })
    }

    // Nobody asked for the other one again: the live replica's poller takes it over once its lease ended.
    const taken = await eventually(async () => {
      const last = (await connection(left.id)).last_sync
      return last?.status ? last : undefined
    })
    t.match(taken, { status: 'succeeded', trigger: 'webhook', delivery: 'dead-Left', version_number: 1 }, 'the interrupted sync ran again, as it was asked for')
    t.ok(Date.parse(taken.started_at) >= Date.parse(until), 'only after its lease ended')
    // The run records its outcome, then releases its lease in a transaction of its own.
    t.ok(await eventually(() => leaseReleased(s, left.id)), 'and released its lease')
    t.ok(await eventually(() => leaseReleased(s, asked.id)))
  })
}
