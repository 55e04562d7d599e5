/**
 * Background work survives the death of the replica that claimed it (issue 16, items 8 and 14): three
 * built registry processes on one PostgreSQL database behind the round-robin proxy
 * (test/support/replicas.ts), with a short lease (REGISTRY_LEASE_SECONDS). A repository sync and an SDK
 * build are started through the proxy; the git server behind them holds the sync's pack request and
 * the build's push, so the replica running each is killed with SIGKILL in the middle of it. Another
 * replica takes the work over once the dead one's lease ended and completes it: the version appears,
 * the connection's last sync says succeeded; the build succeeds as its second attempt and its branch
 * is on the remote.
 *
 * Which replica claimed the work is read from what it left: the sync lease's holder in the database,
 * the build log's "started … by"; a holder names its process id. The held requests never reach the git
 * server, so what the remote has came from the replica that took over. Needs `npm run build` first.
 */
import { execFile } from 'node:child_process'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { promisify } from 'node:util'
import pg from 'pg'
import t, { type Test } from 'tap'
import { petstore } from '../helpers.js'
import { seed } from '../sdk/support.js'
import type { GitHttpServer } from '../support/git-http-server.js'
import { startGitServerForTest } from '../support/git-server-for-test.js'
import { createRepository, eventually } from '../support/git-repos.js'
import { postgresForFile } from '../support/postgres.js'
import { startReplicas, type Answer, type Replicas } from '../support/replicas.js'
import { OUTBOUND_LOOPBACK_ENV } from './spawn.js'

const LEASE_SECONDS = 5

/**
 * A git server behind a proxy that holds every request `holds` picks, unanswered and not passed on,
 * while holding is on: `held` resolves at the first one. `release` drops them (their client is dead by
 * then) and passes everything on from then.
 */
async function holdingGitServer(t: Test, holds: (request: IncomingMessage) => boolean) {
  const waiting: ServerResponse[] = []
  let holding = true
  let heard = () => {}
  const held = new Promise<void>((resolve) => { heard = resolve })
  const { git, url } = await startGitServerForTest(t, {
    prefix: 'replicas-leases-git-',
    proxy: (incoming, outgoing, passOn) => {
      if (!holding || !holds(incoming)) return passOn()
      waiting.push(outgoing)
      heard()
    },
  })
  return {
    git,
    url,
    held,
    release() {
      holding = false
      for (const response of waiting) response.destroy()
    },
  }
}

/** The requests of `git` that reached it: method and path. */
const reached = (git: GitHttpServer, method: string, suffix: string) => git.requests.filter((r) => r.method === method && r.url.split('?')[0].endsWith(suffix)).length

/** The replica whose process a holder (`host:pid:id`) names. */
function replicaOf(cluster: Replicas, holder: string): number {
  const pid = Number(holder.split(':').at(-2))
  const replica = cluster.replicas.find((r) => r.server.child.pid === pid)
  if (!replica) throw new Error(`no replica runs as process ${pid} (holder ${holder})`)
  return replica.index
}

function ok(t: Test, answer: Answer, status: number, what: string) {
  t.equal(answer.status, status, what, { answer: answer.text.slice(0, 1000) })
  return answer.json()
}

const postgres = await postgresForFile(t)

if (postgres) {
  const cluster = await startReplicas(t, postgres, { env: { ...OUTBOUND_LOOPBACK_ENV, REGISTRY_LEASE_SECONDS: String(LEASE_SECONDS) } })
  const { request } = cluster
  const database = new pg.Client({ connectionString: cluster.databaseUrl })
  await database.connect()
  t.teardown(() => database.end())

  t.test('a sync whose replica is killed mid-fetch completes on another replica after its lease ends', async (t) => {
    // Every fetch's pack request is held until the kill: the first one is the killed replica's.
    const remote = await holdingGitServer(t, (incoming) => incoming.method === 'POST' && incoming.url!.endsWith('/git-upload-pack'))
    const repo = await createRepository(remote.git, 'pets')
    t.teardown(() => repo.cleanup())
    const head = await repo.commit({ 'openapi.json': JSON.stringify(petstore('2.0.0')) })
    const api = ok(t, await request('POST', '/v1/apis', { body: { name: 'Pets' } }), 201, 'create').data.id
    ok(t, await request('PUT', `/v1/apis/${api}/repository`, { body: { provider: 'github', url: `${remote.url}/pets.git`, branch: 'main', path: 'openapi.json' } }), 201, 'connect')

    const asked = request('POST', `/v1/apis/${api}/sync`)
    await remote.held
    const { rows } = await database.query('SELECT record FROM repository_sync_leases WHERE api_id = $1', [api])
    const claimed = rows[0]?.record.running
    t.ok(claimed, 'the sync runs under a lease')
    const killed = replicaOf(cluster, claimed.holder)
    await cluster.kill(killed)
    const answer = await asked
    t.equal(answer.status, 502, 'the client whose replica was killed gets a 502 from the proxy')
    t.equal(answer.replica, killed)
    // The lease as the dead replica last renewed it: nobody renews it any more.
    const until = (await database.query('SELECT record FROM repository_sync_leases WHERE api_id = $1', [api])).rows[0]?.record.running.until as string
    t.ok(until, 'its lease is still in the database after the kill')
    remote.release()

    const lastSync = await eventually(async () => {
      const connection = await request('GET', `/v1/apis/${api}/repository`)
      return connection.status === 200 ? connection.json().data.last_sync ?? undefined : undefined
    }, 60_000)
    t.match(lastSync, { status: 'succeeded', trigger: 'manual', version_number: 1, commit: head }, 'the connection\'s last sync succeeded')
    t.ok(lastSync.started_at >= until, `it started after the dead replica's lease ended (${lastSync.started_at} ≥ ${until})`)
    const versions = ok(t, await request('GET', `/v1/apis/${api}/versions`), 200, 'versions')
    t.same(versions.data.map((v: { number: number; version: string; source: string }) => [v.number, v.version, v.source]), [[1, '2.0.0', 'github']], 'the version appears, once')
    t.ok(reached(remote.git, 'POST', '/git-upload-pack') >= 1, 'fetched again by a live replica')
    t.equal((await database.query('SELECT 1 FROM repository_sync_leases WHERE api_id = $1', [api])).rowCount, 0, 'and the lease released')
  })

  t.test('a build whose replica is killed mid-push succeeds on another replica after its lease ends', async (t) => {
    // The push is held until the kill: the killed replica's push never reaches the remote.
    const remote = await holdingGitServer(t, (incoming) => incoming.method === 'POST' && incoming.url!.endsWith('/git-receive-pack'))
    remote.git.createBare('pets-sdk')
    await seed(`${remote.git.url}/pets-sdk.git`)
    const seededPushes = reached(remote.git, 'POST', '/git-receive-pack')
    const api = ok(t, await request('POST', '/v1/apis', { body: { name: 'Shop' } }), 201, 'create').data.id
    ok(t, await request('POST', `/v1/apis/${api}/spec`, { body: { document: petstore() } }), 201, 'upload')
    const sdk = ok(t, await request('POST', '/v1/sdks', { body: { name: 'Shop', targets: ['php'], apis: [{ api_id: api }] } }), 201, 'sdk').data
    ok(t, await request('PUT', `/v1/sdks/${sdk.id}/targets/php/repository`, { body: { provider: 'git', url: `${remote.url}/pets-sdk.git` } }), 201, 'repository')
    const build = ok(t, await request('POST', `/v1/sdks/${sdk.id}/builds`), 202, 'queue').data[0]

    await remote.held
    const logBefore = (await request('GET', `/v1/builds/${build.id}/logs`)).text
    const holder = /started, attempt 1 of 2, by (\S+)/.exec(logBefore)?.[1]
    t.ok(holder, `the build log says who runs it: ${logBefore}`)
    const killed = replicaOf(cluster, holder!)
    t.ok(cluster.replicas[killed].up, 'a replica still in the rotation')
    await cluster.kill(killed)
    const until = (await database.query('SELECT record FROM builds WHERE id = $1', [build.id])).rows[0].record.lease.until as string
    remote.release()

    const done = await eventually(async () => {
      const current = await request('GET', `/v1/builds/${build.id}`)
      const status = current.status === 200 ? current.json().data.status : undefined
      return ['succeeded', 'failed', 'canceled'].includes(status) ? current.json().data : undefined
    }, 60_000)
    t.equal(done.status, 'succeeded', done.error ?? 'succeeded')
    t.equal(done.attempts, 2, 'as its second attempt')
    const log = (await request('GET', `/v1/builds/${build.id}/logs`)).text
    t.match(log, /stopped while this build was running \(attempt 1 of 2\); queued again/, 'the log says the first attempt was cut off')
    const retriedBy = /started, attempt 2 of 2, by (\S+)/.exec(log)?.[1]
    t.ok(retriedBy && replicaOf(cluster, retriedBy) !== killed, 'run again by another replica')
    const restarted = /(\S+) build \d+ \(php\) started, attempt 2 of 2/.exec(log)?.[1]
    t.ok(restarted && restarted >= until, `after the dead replica's lease ended (${restarted} ≥ ${until})`)

    t.equal(reached(remote.git, 'POST', '/git-receive-pack') - seededPushes, 1, 'one push reached the remote: the live replica\'s')
    const heads = (await promisify(execFile)('git', ['ls-remote', '--heads', `${remote.git.url}/pets-sdk.git`])).stdout
    t.ok(done.output?.branch, 'the build names its branch')
    t.match(heads, `${done.output.commit}\trefs/heads/${done.output.branch}`, 'the branch is on the remote at the build\'s commit')
  })
}
