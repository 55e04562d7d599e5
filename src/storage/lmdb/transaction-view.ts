/**
 * Optimistic transactions over LMDB. lmdb-js runs a write transaction's callback synchronously, so an
 * async piece of work cannot hold one open across its awaits. Instead the work runs against a view:
 * reads go to the committed state overlaid with the view's own buffered writes, and are recorded (a
 * point read with the bytes or the absence it saw, a range with every key and value it saw, a count
 * with the number); writes and commutative operations are buffered. `commit` then runs one LMDB write
 * transaction that re-checks every recorded read against the state as it is now and, only if all still
 * hold, applies the writes and operations. The LMDB write lock covers the check and the apply, so the
 * outcome is serializable across every process that opens the environment (the server, the CLI).
 */
import { compareKeys, type Database, type RootDatabase } from 'lmdb'
import { deepFreeze } from '../frozen.js'

/** Keys of the index: lmdb's ordered-binary encoding of strings, numbers and arrays of them. */
export type Key = string | number | (string | number)[]

export interface Range {
  /** Inclusive; with `reverse`, the high end. */
  start?: Key
  /** Exclusive; with `reverse`, the low end. */
  end?: Key
  reverse?: boolean
}

export interface RangeQuery extends Range {
  offset?: number
  limit?: number
}

// lmdb's range calls write into the options object they are given (getKeys sets `values: false`):
// every call below passes a copy.

export interface Entry<V = any> {
  key: Key
  value: V
}

/** What the LMDB stores read and write through: the committed state, or a transaction's view of it. */
export interface LmdbAccess {
  get<V = any>(db: Database<V, Key>, key: Key): V | undefined
  range<V = any>(db: Database<V, Key>, query?: RangeQuery): Entry<V>[]
  count(db: Database<any, Key>, range?: Range): number
  put<V>(db: Database<V, Key>, key: Key, value: V): void
  remove(db: Database<any, Key>, key: Key): void
  /**
   * A commutative change (a counter, a sequence number): `apply` runs inside the commit's write
   * transaction, after the checks, against the state as it is then. It is not a read of the view, so
   * concurrent transactions that only apply operations to the same key never conflict; nor does the
   * transaction see its own operations' results.
   */
  atCommit(apply: () => void): void
}

/** Records kept decoded at most (all databases together): beyond, the memo starts over. */
const DECODED_RECORDS = 20_000
/** Stored values larger than this are decoded on every read (a record is a few hundred bytes). */
const DECODED_MAX_BYTES = 16 * 1024

interface Decoded {
  bytes: Buffer
  value: unknown
}

/**
 * The committed state, for reads outside a transaction. A point read decodes a record only when its
 * stored bytes changed since this process last decoded it: the bytes are read from the memory map
 * every time (whatever process wrote them: the CLI revoking a key is seen on the next read) and
 * compared with those of the kept record. The record handed out is frozen, since every reader of
 * that key shares it: callers copy to change (`{ ...record, field }`), as writes do.
 */
export class CommittedAccess implements LmdbAccess {
  readonly #decoded = new Map<Database<any, Key>, Map<string, Decoded>>()
  #count = 0

  get<V>(db: Database<V, Key>, key: Key): V | undefined {
    const fast = db.getBinaryFast(key)
    if (fast === undefined) return undefined
    // lmdb reuses that buffer for every read and records the value's size as `lastSize` (its own
    // field, not in its types): without it, read as lmdb does.
    const size = (db as unknown as { lastSize?: unknown }).lastSize
    if (typeof size !== 'number' || size > DECODED_MAX_BYTES) return db.get(key)
    const bytes = fast.subarray(0, size)
    const byKey = this.#decoded.get(db) ?? this.#memoFor(db)
    const name = typeof key === 'string' ? `s${key}` : `j${JSON.stringify(key)}`
    const kept = byKey.get(name)
    if (kept && kept.bytes.equals(bytes)) return kept.value as V
    const stored = Buffer.from(bytes)
    const value = deepFreeze(db.get(key))
    if (!kept && ++this.#count > DECODED_RECORDS) {
      for (const memo of this.#decoded.values()) memo.clear()
      this.#count = 1
    }
    byKey.set(name, { bytes: stored, value })
    return value
  }

  #memoFor(db: Database<any, Key>): Map<string, Decoded> {
    const memo = new Map<string, Decoded>()
    this.#decoded.set(db, memo)
    return memo
  }

  range<V>(db: Database<V, Key>, query: RangeQuery = {}): Entry<V>[] {
    return [...db.getRange({ ...query })].map(({ key, value }) => ({ key: key as Key, value }))
  }

  count(db: Database<any, Key>, range: Range = {}): number {
    return db.getCount({ ...range })
  }

  put(): void {
    throw new Error('storage writes happen inside storage.transaction()')
  }

  remove(): void {
    throw new Error('storage writes happen inside storage.transaction()')
  }

  atCommit(): void {
    throw new Error('storage writes happen inside storage.transaction()')
  }
}

const REMOVED = Symbol('removed')

type Check =
  | { kind: 'point'; db: Database<any, Key>; key: Key; bytes: Buffer | undefined }
  | { kind: 'range'; db: Database<any, Key>; query: RangeQuery; seen: { key: Key; bytes: Buffer | undefined }[] }
  | { kind: 'count'; db: Database<any, Key>; range: Range; count: number }

interface Write {
  key: Key
  value: unknown | typeof REMOVED
}

/** The identity of a key within one database (keys are strings, numbers and arrays of them). */
const identity = (key: Key): string => JSON.stringify(key)

function sameBytes(a: Buffer | undefined, b: Buffer | undefined): boolean {
  return a === undefined || b === undefined ? a === b : a.equals(b)
}

function inRange(key: Key, { start, end, reverse }: Range): boolean {
  if (reverse) {
    return (start === undefined || compareKeys(key, start) <= 0) && (end === undefined || compareKeys(key, end) > 0)
  }
  return (start === undefined || compareKeys(key, start) >= 0) && (end === undefined || compareKeys(key, end) < 0)
}

export class TransactionView implements LmdbAccess {
  private readonly checks: Check[] = []
  private readonly writes = new Map<Database<any, Key>, Map<string, Write>>()
  private readonly operations: (() => void)[] = []

  get<V>(db: Database<V, Key>, key: Key): V | undefined {
    const written = this.writes.get(db)?.get(identity(key))
    if (written) return written.value === REMOVED ? undefined : written.value as V
    const bytes = db.getBinary(key)
    this.checks.push({ kind: 'point', db, key, bytes })
    return bytes === undefined ? undefined : db.get(key)
  }

  range<V>(db: Database<V, Key>, query: RangeQuery = {}): Entry<V>[] {
    const { offset = 0, limit = Infinity, ...range } = query
    const overlay = [...(this.writes.get(db)?.values() ?? [])].filter((write) => inRange(write.key, range))
    // Without writes of its own in the range, the committed page is the answer and what is checked.
    if (overlay.length === 0) return this.committedRange(db, query)
    // With some, the whole committed range is read (and checked), merged with them, then paged.
    const merged = new Map<string, Entry<V>>()
    for (const entry of this.committedRange(db, range)) merged.set(identity(entry.key), entry)
    for (const write of overlay) {
      if (write.value === REMOVED) merged.delete(identity(write.key))
      else merged.set(identity(write.key), { key: write.key, value: write.value as V })
    }
    const direction = range.reverse ? -1 : 1
    const entries = [...merged.values()].sort((a, b) => direction * compareKeys(a.key, b.key))
    return entries.slice(offset, offset + limit)
  }

  count(db: Database<any, Key>, range: Range = {}): number {
    const overlaid = [...(this.writes.get(db)?.values() ?? [])].some((write) => inRange(write.key, range))
    if (overlaid) return this.range(db, range).length
    const count = db.getCount({ ...range })
    this.checks.push({ kind: 'count', db, range: { ...range }, count })
    return count
  }

  put<V>(db: Database<V, Key>, key: Key, value: V): void {
    this.written(db).set(identity(key), { key, value })
  }

  remove(db: Database<any, Key>, key: Key): void {
    this.written(db).set(identity(key), { key, value: REMOVED })
  }

  atCommit(apply: () => void): void {
    this.operations.push(apply)
  }

  /** True when the transaction has something to apply. */
  get changes(): boolean {
    return this.operations.length > 0 || [...this.writes.values()].some((writes) => writes.size > 0)
  }

  /** True when every read the view recorded would read the same now (call inside a write transaction to commit on it). */
  readsHold(): boolean {
    return this.checks.every((check) => {
      switch (check.kind) {
        case 'point':
          return sameBytes(check.db.getBinary(check.key), check.bytes)
        case 'count':
          return check.db.getCount({ ...check.range }) === check.count
        case 'range': {
          const keys = [...check.db.getKeys({ ...check.query })] as Key[]
          return keys.length === check.seen.length && keys.every((key, i) =>
            compareKeys(key, check.seen[i].key) === 0 && sameBytes(check.db.getBinary(key), check.seen[i].bytes))
        }
      }
    })
  }

  /**
   * Checks the reads and applies the writes and operations in one LMDB write transaction; answers false,
   * having written nothing, when a read no longer holds (a conflict: run the work again).
   */
  async commit(root: RootDatabase<any, Key>): Promise<boolean> {
    if (!this.changes) return this.readsHold()
    // A child transaction: an operation that throws undoes this commit's writes, not a batch's others.
    const committed = await (root.transaction(() => root.childTransaction(() => {
      if (!this.readsHold()) return false
      for (const [db, writes] of this.writes) {
        for (const { key, value } of writes.values()) {
          if (value === REMOVED) db.remove(key)
          else db.put(key, value)
        }
      }
      for (const apply of this.operations) apply()
      return true
    })) as Promise<unknown>)
    return committed === true
  }

  private committedRange<V>(db: Database<V, Key>, query: RangeQuery): Entry<V>[] {
    const entries = [...db.getRange({ ...query })].map(({ key, value }) => ({ key: key as Key, value }))
    this.checks.push({ kind: 'range', db, query: { ...query }, seen: entries.map(({ key }) => ({ key, bytes: db.getBinary(key) })) })
    return entries
  }

  private written(db: Database<any, Key>): Map<string, Write> {
    let writes = this.writes.get(db)
    if (!writes) this.writes.set(db, writes = new Map())
    return writes
  }
}
