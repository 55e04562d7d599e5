/**
 * `kill -9` of replicas under a write load (issue 16, item 14): three built registry processes on one
 * PostgreSQL database behind the round-robin proxy (test/support/replicas.ts), clients writing through
 * the proxy all the while (new versions of several APIs, new APIs), and ten rounds of killing a replica
 * with SIGKILL and starting it again. Afterwards every write a client saw acknowledged is there, each
 * API's versions are 1..N with no gap and no duplicate, and `registry verify` passes on the database.
 * Then the replica holding the git mirror writer's election is killed: another takes over, and a clone
 * through a replica that never wrote shows the new commits on top of the old ones.
 *
 * A write whose replica died under it gets no answer (502 from the proxy, or its connection cut): the
 * client cannot know whether it committed, so it may or may not be there, and the test allows both; it
 * requires only that it is there at most once, and that nothing the clients never sent, or were
 * refused, is. Rounds are counted in acknowledged writes, not in seconds. An SDK build or a sync whose
 * replica died is covered by test/process/replicas-leases.test.ts (run again after its lease ends).
 * Needs `npm run build` first.
 */
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import t from 'tap'
import { WRITER_LOCK_KEY } from '../../src/storage/postgres/writer-election.js'
import { petstore } from '../helpers.js'
import { git, gitStatus } from '../mirror/helpers.js'
import { postgresForFile } from '../support/postgres.js'
import { replicaApplicationName, startReplicas, type Answer, type Replicas } from '../support/replicas.js'
import { tempDir } from '../temp.js'
import { cliAsync } from './spawn.js'

const ROUNDS = 10
const CLIENTS = 4
/** Writes acknowledged before each kill, and by the survivors before the killed replica starts again. */
const BEFORE_KILL = 5
const WHILE_DOWN = 3
/**
 * Writes started while the killed replica starts again; then the clients wait for it. Starting a
 * process takes seconds on two busy cores: an unbounded load meanwhile only slows it down and makes
 * the file longer, in writes and in time, without testing more.
 */
const WHILE_RESTARTING = 6

type Outcome = 'acknowledged' | 'refused' | 'cut'
interface Write {
  kind: 'upload' | 'create'
  /** The API uploaded to, or created (once acknowledged). */
  apiId?: string
  /** An upload's document's info.version, unique to it; a create's name. */
  sent: string
  outcome: Outcome
  /** The version number acknowledged. */
  number?: number
}

/** Every page of a listing (`limit` 100). */
async function all<T>(cluster: Replicas, path: string): Promise<T[]> {
  const items: T[] = []
  for (let page = 1; ; page++) {
    const answer = await cluster.request('GET', `${path}${path.includes('?') ? '&' : '?'}limit=100&page=${page}`)
    if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status} ${answer.text}`)
    const data = answer.json().data as T[]
    items.push(...data)
    if (data.length < 100) return items
  }
}

/** Polls `check` (up to `attempts` times, 100 ms apart) until it answers something other than undefined. */
async function eventually<T>(attempts: number, check: () => Promise<T | undefined>): Promise<T | undefined> {
  for (let i = 0; i < attempts; i++) {
    const value = await check()
    if (value !== undefined) return value
    await sleep(100)
  }
  return undefined
}

const postgres = await postgresForFile(t)

if (postgres) {
  const cluster = await startReplicas(t, postgres)
  const { request } = cluster

  // What a client has read back after the load: each API's slug and the versions stored, by info.version.
  const stored = new Map<string, { slug: string; versions: { number: number; version: string }[] }>()

  t.test(`kill -9 of a replica during a write load, ${ROUNDS} times: every acknowledged write is there`, async (t) => {
    const targets: string[] = []
    for (const name of ['Orders', 'Payments', 'Shipping']) {
      const created = await request('POST', '/v1/apis', { body: { name } })
      t.equal(created.status, 201, created.text)
      targets.push(created.json().data.id)
    }

    const writes: Write[] = []
    const unexpected: string[] = []
    // Kills per replica so far: an answer lost to a kill must come from a replica killed while it was asked.
    const kills = cluster.replicas.map(() => 0)
    let acknowledged = 0
    let stopping = false
    // How many more writes the clients may start (unbounded but while a replica restarts).
    let budget = Number.POSITIVE_INFINITY
    let reopen = () => {}
    let reopened = Promise.resolve()
    const mayWrite = async () => {
      while (budget <= 0 && !stopping) await reopened
      budget -= 1
    }

    const send = async (write: Write, method: string, path: string, body: unknown): Promise<Answer | undefined> => {
      const killsBefore = [...kills]
      const killedMeanwhile = (replica: number) => replica >= 0 ? kills[replica] > killsBefore[replica] : kills.some((n, i) => n > killsBefore[i])
      writes.push(write)
      let answer: Answer
      try {
        answer = await request(method, path, { body })
      } catch (error) {
        // The connection was cut after the answer's headers: no acknowledgement.
        if (killedMeanwhile(-1)) write.outcome = 'cut'
        else unexpected.push(`${method} ${path}: ${(error as Error).message} with no replica killed`)
        return undefined
      }
      if (answer.status === 502 && killedMeanwhile(answer.replica)) {
        write.outcome = 'cut'
        return undefined
      }
      if (answer.status === 409) return undefined // refused (a writer that lost its transaction too often): nothing stored
      if (answer.status !== 201) {
        unexpected.push(`${method} ${path} on replica ${answer.replica}: ${answer.status} ${answer.text}`)
        return undefined
      }
      write.outcome = 'acknowledged'
      acknowledged += 1
      return answer
    }

    const client = async (c: number) => {
      for (let seq = 0; ; seq++) {
        await mayWrite()
        if (stopping) return
        if (seq % 6 === 5) {
          const write: Write = { kind: 'create', sent: `Load ${c}-${seq}`, outcome: 'refused' }
          const answer = await send(write, 'POST', '/v1/apis', { name: write.sent })
          if (answer) {
            write.apiId = answer.json().data.id
            targets.push(write.apiId!)
          }
        } else {
          const apiId = targets[(c * 7 + seq) % targets.length]
          const write: Write = { kind: 'upload', apiId, sent: `${c}.${seq}.0`, outcome: 'refused' }
          const answer = await send(write, 'POST', `/v1/apis/${apiId}/spec`, { document: petstore(write.sent) })
          if (answer) {
            write.number = answer.json().data.number
            if (answer.json().data.version !== write.sent) unexpected.push(`upload of ${write.sent} acknowledged as ${answer.text}`)
          }
        }
      }
    }
    /** Waits until `more` writes were acknowledged (a bound of about 60 s keeps a stalled load from hanging the file). */
    const acknowledgedMore = async (more: number, what: string) => {
      const target = acknowledged + more
      await eventually(600, async () => acknowledged >= target ? true : undefined)
      t.ok(acknowledged >= target, `${what}: ${more} more writes acknowledged`)
    }

    const clients = Array.from({ length: CLIENTS }, (_, c) => client(c))
    for (let round = 0; round < ROUNDS; round++) {
      const victim = round % cluster.replicas.length
      await acknowledgedMore(BEFORE_KILL, `round ${round + 1}, before replica ${victim} is killed`)
      // Killed while it is answering a write (when one reaches it within a second), so that kills cut
      // writes: between two writes of a client the victim is often idle, and then nothing is cut.
      const waitUntil = Date.now() + 1000
      while (cluster.replicas[victim].inFlight === 0 && Date.now() < waitUntil) await new Promise((resolve) => setTimeout(resolve, 1))
      kills[victim] += 1
      await cluster.kill(victim)
      await acknowledgedMore(WHILE_DOWN, `round ${round + 1}, while replica ${victim} is down`)
      budget = WHILE_RESTARTING
      reopened = new Promise((resolve) => { reopen = resolve })
      await cluster.restart(victim)
      budget = Number.POSITIVE_INFINITY
      reopen()
    }
    stopping = true
    reopen()
    await Promise.all(clients)

    t.same(unexpected, [], 'every answer was a 201, a 409, or lost with the replica killed under it')
    const count = (kind: Write['kind'], outcome: Outcome) => writes.filter((w) => w.kind === kind && w.outcome === outcome).length
    t.comment(`uploads: ${count('upload', 'acknowledged')} acknowledged, ${count('upload', 'cut')} cut off, ${count('upload', 'refused')} refused (409); ` +
      `creates: ${count('create', 'acknowledged')} acknowledged, ${count('create', 'cut')} cut off, ${count('create', 'refused')} refused`)
    // Six clients with a request in flight each: a kill that cuts none, ten times over, would mean the
    // kills did not land during the load, and the test would not test what it says.
    t.ok(writes.some((w) => w.outcome === 'cut'), 'some writes were cut off by the kills')

    // Read back through the proxy (consecutive requests on different replicas).
    const apis = await all<{ id: string; slug: string; name: string }>(cluster, '/v1/apis')
    const byId = new Map(apis.map((api) => [api.id, api]))
    const creates = writes.filter((w) => w.kind === 'create')
    for (const write of creates.filter((w) => w.outcome === 'acknowledged')) {
      t.equal(byId.get(write.apiId!)?.name, write.sent, `the acknowledged API ${write.sent} is there`)
    }
    const namesSent = new Map(creates.map((w) => [w.sent, w.outcome]))
    for (const api of apis.filter((api) => !['Orders', 'Payments', 'Shipping'].includes(api.name))) {
      const outcome = namesSent.get(api.name)
      t.ok(outcome === 'acknowledged' || outcome === 'cut', `API ${api.name} (${api.slug}) was sent and not refused (${outcome})`)
    }
    t.equal(new Set(apis.map((api) => api.name)).size, apis.length, 'no API was created twice (a cut-off create is there once or not at all)')

    let versionCount = 0
    for (const api of apis) {
      const versions = await all<{ number: number; version: string }>(cluster, `/v1/apis/${api.id}/versions`)
      versions.sort((a, b) => a.number - b.number)
      stored.set(api.id, { slug: api.slug, versions })
      versionCount += versions.length
      t.same(versions.map((v) => v.number), versions.map((_, i) => i + 1), `${api.name}: versions 1..${versions.length}, no gap, no duplicate`)
      t.equal(new Set(versions.map((v) => v.version)).size, versions.length, `${api.name}: each document stored once`)
      const uploads = writes.filter((w) => w.kind === 'upload' && w.apiId === api.id)
      const byVersion = new Map(versions.map((v) => [v.version, v.number]))
      const lost = uploads.filter((w) => w.outcome === 'acknowledged' && byVersion.get(w.sent) !== w.number)
      t.same(lost.map((w) => `${w.sent} as ${w.number}`), [], `${api.name}: every acknowledged upload is there under the number it was acknowledged with`)
      const sent = new Map(uploads.map((w) => [w.sent, w.outcome]))
      const phantoms = versions.filter((v) => sent.get(v.version) !== 'acknowledged' && sent.get(v.version) !== 'cut')
      t.same(phantoms.map((v) => `${v.version} (${sent.get(v.version) ?? 'never sent'})`), [], `${api.name}: nothing refused or never sent is stored`)
    }

    const storage = tempDir('registry-verify-')
    t.teardown(() => rmSync(storage, { recursive: true, force: true }))
    const verify = await cliAsync(['--json', 'verify'], { ...cluster.env, REGISTRY_STORAGE: storage })
    t.equal(verify.code, 0, `registry verify on the database: ${verify.stdout}${verify.stderr}`)
    t.match(JSON.parse(verify.stdout), { ok: true, problems: [], versions: versionCount }, 'verify counts the versions read back, and finds no problem')
  })

  t.test('kill -9 of the replica holding the git mirror writer: another takes over, clones show the new commits', async (t) => {
    const db = new pg.Client({ connectionString: cluster.databaseUrl })
    await db.connect()
    t.teardown(() => db.end())
    /** The replica whose database session holds the writer's advisory lock (a bigint key: classid high, objid low). */
    const writer = async (): Promise<number | undefined> => {
      const { rows } = await db.query<{ name: string }>(
        `SELECT a.application_name AS name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND ((l.classid::bigint << 32) | l.objid::bigint) = $1::bigint`,
        [WRITER_LOCK_KEY])
      const index = cluster.replicas.findIndex((replica) => replicaApplicationName(replica.index) === rows[0]?.name)
      return index >= 0 ? index : undefined
    }
    const first = await eventually(100, writer)
    t.not(first, undefined, 'one replica holds the writer election')
    const headBefore = (await request('GET', '/v1/mirror')).json().data.head as string | null
    t.match(headBefore, /^[0-9a-f]{40}$/, 'the writer has committed the load')

    await cluster.kill(first!)
    const [api] = [...stored.keys()]
    const uploaded: number[] = []
    for (const n of [1, 2, 3]) {
      const answer = await request('POST', `/v1/apis/${api}/spec`, { body: { document: petstore(`9.${n}.0`) } })
      t.equal(answer.status, 201, answer.text)
      uploaded.push(answer.json().data.number)
    }
    const created = await request('POST', '/v1/apis', { body: { name: 'After Failover' } })
    t.equal(created.status, 201, created.text)

    const next = await eventually(300, async () => {
      const index = await writer()
      return index !== undefined && index !== first ? index : undefined
    })
    t.not(next, undefined, 'another replica took the writer election')
    const follower = cluster.replicas.find((replica) => replica.up && replica.index !== next)!
    t.ok(follower, 'a replica that is not the writer is up')

    const dir = tempDir('replicas-kill-git-')
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const remote = (index: number) => `http://x:${cluster.key}@${new URL(cluster.replicas[index].server.url).host}/git/default.git`
    const clone = join(dir, 'follower')
    // Before src/git/whole-file-fs.ts, a replica killed while writing an object kept it empty, and
    // answered this clone `upload-pack: not our ref` for good.
    const cloned = await gitStatus(['clone', '-q', remote(follower.index), clone])
    t.equal(cloned.code, 0, `git clone through replica ${follower.index}: ${cloned.stderr}`)
    if (cloned.code !== 0) return
    const log = async () => (await git(['log', '--format=%H %s', 'main'], { cwd: clone })).trim().split('\n')
    const caughtUp = await eventually(300, async () => {
      const lines = await log()
      if (lines[0]?.endsWith(' apis/after-failover: created')) return lines
      await git(['pull', '-q', '--ff-only'], { cwd: clone })
      return undefined
    })
    t.ok(caughtUp, `a clone through replica ${follower.index} (not the writer) shows the commits written after the kill`)
    const lines = caughtUp ?? await log()
    const slug = stored.get(api)!.slug
    t.same(lines.slice(0, 4).map((line) => line.slice(41)), [
      'apis/after-failover: created', ...uploaded.slice().reverse().map((n) => `apis/${slug}: version ${n} (upload)`),
    ], 'the new commits, newest first')
    await git(['merge-base', '--is-ancestor', headBefore!, 'main'], { cwd: clone })
    t.pass('on top of the head the killed writer recorded')

    // The whole history: one commit per API created and per version stored, through ten kills and a fail-over.
    const expected: string[] = ['apis/after-failover: created']
    for (const [id, { slug: apiSlug, versions }] of stored) {
      expected.push(`apis/${apiSlug}: created`)
      const count = versions.length + (id === api ? uploaded.length : 0)
      for (let n = 1; n <= count; n++) expected.push(`apis/${apiSlug}: version ${n} (upload)`)
    }
    t.same(lines.map((line) => line.slice(41)).sort(), expected.sort(), 'one commit per change stored, none lost, none twice')

    const fromWriter = join(dir, 'writer')
    await git(['clone', '-q', remote(next!), fromWriter])
    t.equal((await git(['rev-parse', 'main'], { cwd: fromWriter })).trim(), lines[0].slice(0, 40), 'the new writer serves the same head')
    // Through the proxy, a clone's requests (refs, then the pack) go to different replicas in turn.
    const throughProxy = join(dir, 'proxy')
    const proxied = await gitStatus(['clone', '-q', `http://x:${cluster.key}@${new URL(cluster.url).host}/git/default.git`, throughProxy])
    t.equal(proxied.code, 0, `git clone through the round-robin proxy: ${proxied.stderr}`)
    if (proxied.code === 0) t.equal((await git(['rev-parse', 'main'], { cwd: throughProxy })).trim(), lines[0].slice(0, 40), 'the same head through the proxy')
    await git(['fsck', '--strict'], { cwd: clone })
  })
}
