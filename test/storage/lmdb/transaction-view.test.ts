import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { open, type Database, type RootDatabase } from 'lmdb'
import t from 'tap'
import { RegistryError } from '../../../src/errors.js'
import { optimistic } from '../../../src/storage/lmdb/optimistic.js'
import { CommittedAccess, TransactionView, type Key } from '../../../src/storage/lmdb/transaction-view.js'
import { tempDir } from '../../temp.js'

type Env = { root: RootDatabase<any, Key>; db: Database<any, Key>; other: Database<any, Key> }

function openEnv(t: { teardown(fn: () => unknown): void }): Env {
  const dir = tempDir()
  const root = open<any, Key>({ path: join(dir, 'view.mdb'), maxDbs: 4 })
  const env = { root, db: root.openDB<any, Key>({ name: 'db', cache: false }), other: root.openDB<any, Key>({ name: 'other', cache: false }) }
  t.teardown(async () => {
    await root.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return env
}

/** A write committed by someone else (another request, another process) while a view is open. */
const concurrently = (env: Env, work: () => void): Promise<unknown> => env.root.transaction(work)

t.test('a view reads its own writes and removals; the committed state changes only at commit', async (t) => {
  const env = openEnv(t)
  await env.db.put('a', { n: 1 })
  const view = new TransactionView()
  t.same(view.get(env.db, 'a'), { n: 1 })
  view.put(env.db, 'a', { n: 2 })
  view.put(env.db, 'b', { n: 3 })
  view.remove(env.db, 'a')
  t.equal(view.get(env.db, 'a'), undefined, 'removed in the view')
  t.same(view.get(env.db, 'b'), { n: 3 })
  t.same(env.db.get('a'), { n: 1 }, 'nothing written before commit')
  t.equal(env.db.get('b'), undefined)
  t.equal(await view.commit(env.root), true)
  t.equal(env.db.get('a'), undefined)
  t.same(env.db.get('b'), { n: 3 })
})

t.test('range reads merge the view\'s writes in key order, both directions, paged after the merge', async (t) => {
  const env = openEnv(t)
  await env.root.transaction(() => {
    for (const [key, value] of [[['r', 1], 'one'], [['r', 2], 'two'], [['r', 4], 'four'], [['s', 1], 'outside']] as const) env.db.put([...key], value)
  })
  const view = new TransactionView()
  view.put(env.db, ['r', 3], 'three')
  view.put(env.db, ['r', 2], 'TWO')
  view.remove(env.db, ['r', 1])
  view.put(env.db, ['s', 0], 'outside too')
  const range = { start: ['r', 0], end: ['r', Number.MAX_SAFE_INTEGER] }
  const values = (entries: { value: unknown }[]) => entries.map(({ value }) => value)
  t.same(values(view.range(env.db, range)), ['TWO', 'three', 'four'])
  t.same(values(view.range(env.db, { start: range.end, end: range.start, reverse: true })), ['four', 'three', 'TWO'])
  t.same(values(view.range(env.db, { ...range, offset: 1, limit: 1 })), ['three'], 'offset and limit apply to the merged range')
  t.equal(view.count(env.db, range), 3)
  t.same(values(view.range(env.db, { start: ['s'], end: ['s', '\uffff'] })), ['outside too', 'outside'])
  t.equal(await view.commit(env.root), true)
  t.same(values([...env.db.getRange(range)]), ['TWO', 'three', 'four'])
})

t.test('a commit conflicts when a value it read changed, or a key it found absent appeared; it writes nothing then', async (t) => {
  const env = openEnv(t)
  await env.db.put('x', 1)
  const changed = new TransactionView()
  changed.get(env.db, 'x')
  changed.put(env.db, 'y', 'from the view')
  await concurrently(env, () => env.db.put('x', 2))
  t.equal(await changed.commit(env.root), false)
  t.equal(env.db.get('y'), undefined, 'nothing applied')

  const appeared = new TransactionView()
  t.equal(appeared.get(env.db, 'new'), undefined)
  appeared.put(env.db, 'y', 'from the view')
  await concurrently(env, () => env.db.put('new', 'taken'))
  t.equal(await appeared.commit(env.root), false)

  const rewritten = new TransactionView()
  rewritten.get(env.db, 'x')
  rewritten.put(env.db, 'y', 'from the view')
  await concurrently(env, () => env.db.put('x', 2))
  t.equal(await rewritten.commit(env.root), true, 'the same bytes written again are no change')
})

t.test('writes to keys the view did not read do not conflict', async (t) => {
  const env = openEnv(t)
  await env.db.put('x', 1)
  const view = new TransactionView()
  view.get(env.db, 'x')
  view.put(env.db, 'y', 'mine')
  await concurrently(env, () => {
    env.db.put('z', 'theirs')
    env.other.put('x', 'another database')
    env.db.put('y', 'blind write by another')
  })
  t.equal(await view.commit(env.root), true)
  t.equal(env.db.get('y'), 'mine', 'the last writer of a key it did not read wins')
})

t.test('a key inserted into a range the view read is a phantom: conflict; outside the range it is not', async (t) => {
  const env = openEnv(t)
  await env.db.put(['r', 1], 'one')
  const range = { start: ['r', 0], end: ['r', 10] }
  const phantom = new TransactionView()
  t.equal(phantom.range(env.db, range).length, 1)
  phantom.put(env.db, ['r', 9], 'mine')
  await concurrently(env, () => env.db.put(['r', 5], 'theirs'))
  t.equal(await phantom.commit(env.root), false)

  const outside = new TransactionView()
  outside.range(env.db, range)
  outside.put(env.db, ['r', 9], 'mine')
  await concurrently(env, () => env.db.put(['r', 10], 'just past the end'))
  t.equal(await outside.commit(env.root), true)

  const counted = new TransactionView()
  t.equal(counted.count(env.db, { start: ['r', 0], end: ['r', 9] }), 2)
  counted.put(env.db, 'y', 'mine')
  await concurrently(env, () => env.db.remove(['r', 5]))
  t.equal(await counted.commit(env.root), false, 'a count that changed conflicts')

  const paged = new TransactionView()
  t.same(paged.range(env.db, { ...range, limit: 1 }).map(({ value }) => value), ['one'])
  paged.put(env.db, 'y', 'mine')
  await concurrently(env, () => env.db.put(['r', 0], 'before the page'))
  t.equal(await paged.commit(env.root), false, 'a page whose window moved conflicts')
})

t.test('operations at commit are commutative: concurrent increments never conflict and all count', async (t) => {
  const env = openEnv(t)
  const increment = (view: TransactionView) => view.atCommit(() => env.db.put('count', (env.db.get('count') ?? 0) + 1))
  const views = Array.from({ length: 5 }, () => new TransactionView())
  for (const view of views) increment(view)
  t.same(await Promise.all(views.map((view) => view.commit(env.root))), [true, true, true, true, true])
  t.equal(env.db.get('count'), 5)
})

t.test('optimistic runs the work again after a conflict, and gives up with 409 conflict after the bound', async (t) => {
  const env = openEnv(t)
  await env.db.put('x', 0)
  let runs = 0
  const result = await optimistic(env.root, async (view) => {
    runs++
    const x: number = view.get(env.db, 'x')
    if (runs === 1) await concurrently(env, () => env.db.put('x', 100))
    view.put(env.db, 'x', x + 1)
    return x + 1
  })
  t.equal(runs, 2)
  t.equal(result, 101)
  t.equal(env.db.get('x'), 101, 'the concurrent write is not lost')

  let attempts = 0
  const error = await optimistic(env.root, async (view) => {
    attempts++
    view.get(env.db, 'x')
    await concurrently(env, () => env.db.put('x', attempts * 1000))
    view.put(env.db, 'never', true)
  }, 4).catch((e: unknown) => e)
  t.ok(error instanceof RegistryError)
  t.equal((error as RegistryError).code, 'conflict')
  t.equal(attempts, 4)
  t.equal(env.db.get('never'), undefined)
})

t.test('a refusal decided on a state that changed meanwhile runs again; one decided on the current state is the answer', async (t) => {
  const env = openEnv(t)
  let runs = 0
  const outcome = await optimistic(env.root, async (view) => {
    runs++
    const found = view.get(env.db, 'thing')
    if (runs === 1) await concurrently(env, () => env.db.put('thing', 'created'))
    if (found === undefined) throw new Error('not found')
    return found
  })
  t.equal(outcome, 'created')
  t.equal(runs, 2)

  runs = 0
  await t.rejects(optimistic(env.root, async (view) => {
    runs++
    if (view.get(env.db, 'missing') === undefined) throw new Error('not found')
  }), { message: 'not found' })
  t.equal(runs, 1)
})

t.test('concurrent optimistic transactions in one process serialize: read-modify-write loses no update', async (t) => {
  const env = openEnv(t)
  await env.db.put('n', 0)
  await Promise.all(Array.from({ length: 20 }, () => optimistic(env.root, async (view) => {
    const n: number = view.get(env.db, 'n')
    await new Promise((resolve) => setImmediate(resolve))
    view.put(env.db, 'n', n + 1)
  }, 100)))
  t.equal(env.db.get('n'), 20)
})

t.test('committed reads: a record is decoded again only when its stored bytes changed, whoever wrote them, and is frozen', async (t) => {
  const env = openEnv(t)
  const committed = new CommittedAccess()
  await env.db.put('key', { name: 'first', scopes: ['read'] })
  const first = committed.get(env.db, 'key')
  t.same(first, { name: 'first', scopes: ['read'] })
  t.equal(committed.get(env.db, 'key'), first, 'unchanged bytes: the same record')
  t.ok(Object.isFrozen(first) && Object.isFrozen(first.scopes), 'frozen, with what is in it')
  t.throws(() => { first.name = 'changed' }, TypeError, 'a caller cannot change what others are handed')

  // Written past this reader, as the CLI would: the next read sees it.
  await concurrently(env, () => env.db.put('key', { name: 'revoked', scopes: ['read'] }))
  t.same(committed.get(env.db, 'key'), { name: 'revoked', scopes: ['read'] })
  await concurrently(env, () => env.db.remove('key'))
  t.equal(committed.get(env.db, 'key'), undefined, 'removed: nothing')
  await env.db.put(['composite', 1], { n: 1 })
  await env.db.put('composite,1', { n: 2 })
  t.same(committed.get(env.db, ['composite', 1]), { n: 1 }, 'an array key and a string key do not share an entry')
  t.same(committed.get(env.db, 'composite,1'), { n: 2 })
  const large = { text: 'x'.repeat(40_000) }
  await env.db.put('large', large)
  t.same(committed.get(env.db, 'large'), large, 'a large value is read as it is')
  t.notOk(Object.isFrozen(committed.get(env.db, 'large')), 'and not kept')
})
