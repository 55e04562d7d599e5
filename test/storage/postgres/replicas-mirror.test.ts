/**
 * The git mirror's journal and writer election across replicas on one PostgreSQL database (issue 16,
 * item 8): two PostgresStorage instances are two replicas (each its own pool and commit lanes).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import t, { type Test } from 'tap'
import { now } from '../../../src/domain/resources/ids.js'
import { PostgresStorage } from '../../../src/storage/postgres/storage.js'
import type { JournalChange, OrganizationRecord } from '../../../src/storage/records.js'
import { organization, resource } from '../contract/contract.js'
import { postgresForFile } from '../../support/postgres.js'

const server = await postgresForFile(t)

async function replicas(t: Test, count: number): Promise<{ url: string; storages: PostgresStorage[]; org: OrganizationRecord }> {
  const url = await server!.createDatabase()
  const storages: PostgresStorage[] = []
  for (let i = 0; i < count; i++) {
    const storage = await PostgresStorage.open(url)
    t.teardown(() => storage.close())
    storages.push(storage)
  }
  const org = organization('acme')
  await storages[0].transaction((tx) => tx.organizations.put(org))
  return { url, storages, org }
}

const create = (org: OrganizationRecord, name: string): JournalChange => ({ change: 'create', resource: resource(org.id, name) })

if (server) {
  t.test('journal entries are numbered in commit order, not in the order they were appended', async (t) => {
    const { storages: [a, b], org } = await replicas(t, 2)
    let release!: () => void
    const gate = new Promise<void>((resolve) => { release = resolve })
    let appended!: () => void
    const aAppended = new Promise<void>((resolve) => { appended = resolve })
    // Replica A appends first and commits last.
    const first = a.transaction(async (tx) => {
      await tx.mirror.append(org.id, now(), create(org, 'First'))
      appended()
      await gate
    })
    await aAppended
    await b.transaction((tx) => tx.mirror.append(org.id, now(), create(org, 'Second')))
    const whileOpen = await a.read.mirror.pending(100)
    t.same(whileOpen.map((entry) => entry.change === 'create' && entry.resource.name), ['Second'], 'the committed entry is visible, the open one is not')
    release()
    await first
    const pending = await b.read.mirror.pending(100)
    t.same(pending.map((entry) => entry.change === 'create' && entry.resource.name), ['Second', 'First'], 'numbered in commit order')
    t.ok(pending[0].seq < pending[1].seq)
    const history = await b.read.mirror.history(org.id)
    t.same(history.map((entry) => [entry.seq, entry.change === 'create' && entry.resource.name]), pending.map((entry) => [entry.seq, entry.change === 'create' && entry.resource.name]),
      'the history has the same numbers')
    t.same(Object.keys(pending[1]).sort(), ['at', 'change', 'organization_id', 'resource', 'seq'], 'an entry is the change, numbered, with its organization and time')
  })

  t.test('under concurrent appends from two replicas, what a reader sees only ever grows at its end', async (t) => {
    const { storages: [a, b], org } = await replicas(t, 2)
    let done = false
    const seen: number[][] = []
    const reader = (async () => {
      while (!done) {
        seen.push((await a.read.mirror.pending(1000)).map((entry) => entry.seq))
        await sleep(1)
      }
    })()
    const writes = Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).transaction(async (tx) => {
      await tx.mirror.append(org.id, now(), create(org, `R${i}`))
      await sleep(Math.random() * 20) // the append is early, the commit a while after
      if (i % 3 === 0) await tx.mirror.append(org.id, now(), create(org, `R${i}b`))
    }))
    await Promise.all(writes)
    done = true
    await reader
    const final = (await a.read.mirror.pending(1000)).map((entry) => entry.seq)
    t.equal(final.length, 40 + 14, 'every entry is there')
    t.same(final, [...final].sort((x, y) => x - y))
    t.ok(seen.length > 5, `the reader looked ${seen.length} times during the writes`)
    const notPrefix = seen.filter((snapshot) => snapshot.some((seq, i) => final[i] !== seq))
    t.same(notPrefix, [], 'every list a reader saw is a beginning of the final one: no entry appeared before one numbered lower')
    const history = (await a.read.mirror.history(org.id)).map((entry) => entry.seq)
    t.same(history, final, 'the history holds the same numbers')
  })

  t.test('one mirror writer among replicas; it fails over when the holder\'s session dies', async (t) => {
    const { url, storages: [a, b] } = await replicas(t, 2)
    const first = a.writerElection()
    const second = b.writerElection()
    t.teardown(() => Promise.all([first.release(), second.release()]))
    t.equal(await first.acquire(), true, 'the first to ask is elected')
    t.equal(await second.acquire(), false, 'the other is not')
    t.equal(await first.acquire(), true, 'asking again keeps it')
    t.equal(await second.acquire(), false)
    t.equal(second.held, false)

    // The holder's session dies (its replica killed, or cut off and the connection terminated).
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    t.teardown(() => admin.end())
    const { rows } = await admin.query<{ pid: number }>("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted")
    t.equal(rows.length, 1, 'one session holds the lock')
    await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid])
    for (let i = 0; i < 100 && first.held; i++) await sleep(20)
    t.equal(first.held, false, 'the old holder knows it lost the election')
    t.equal(await second.acquire(), true, 'the other replica takes over')
    t.equal(await first.acquire(), false, 'the old holder, reconnected, is not elected again')
    await second.release()
    t.equal(await first.acquire(), true, 'a released election is taken by the next to ask')
  })
}
