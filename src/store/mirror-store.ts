/**
 * The git mirror's records in the index: the journal of changes (appended inside the transaction that
 * makes the change, so it commits with it), each organization's mirror head and its push remote.
 */
import type { Database } from 'lmdb'
import type { IndexKey } from './lmdb-index.js'
import { MIRROR_DATABASES } from './layout.js'
import type { ResourceRecord, VersionRecord } from './records.js'
import type { StoredSecret } from './secret-keyring.js'
import { sameStoredSecret, type SecretHolder, type SecretRef, type SecretSlot } from './secret-slots.js'

/** One change to mirror. Records are snapshots taken in the change's transaction. */
export type JournalChange =
  | { change: 'create'; resource: ResourceRecord }
  | { change: 'update'; before: ResourceRecord; resource: ResourceRecord }
  | { change: 'delete'; resource: ResourceRecord }
  | { change: 'version'; resource: ResourceRecord; version: VersionRecord }
  /** `registry mirror rebuild`: replaces the history with one derived from the index. */
  | { change: 'rebuild' }

export type JournalEntry = JournalChange & {
  seq: number
  organization_id: string
  /** RFC 3339: the commit's date. */
  at: string
}

/** What a version commit needs of the version: its blob and what the message says. */
export type MirrorVersion = Pick<VersionRecord, 'id' | 'number' | 'checksum' | 'digest' | 'format' | 'source' | 'restored_from'>

/**
 * What the history keeps of a journaled change: the records of creates, updates and deletes (small,
 * and the index no longer knows a resource's earlier metadata or a deleted resource), and of a version
 * only what its commit needs, with the resource's id: the resource as it was then is the one its
 * create or last update left.
 */
export type HistoryEntry = { seq: number; at: string } & (
  | { change: 'create'; resource: ResourceRecord }
  | { change: 'update'; before: ResourceRecord; resource: ResourceRecord }
  | { change: 'delete'; resource: ResourceRecord }
  | { change: 'version'; resource_id: string; version: MirrorVersion }
)

export function historyEntry(seq: number, at: string, change: Exclude<JournalChange, { change: 'rebuild' }>): HistoryEntry {
  if (change.change !== 'version') return { ...change, seq, at }
  const { id, number, checksum, digest, format, source, restored_from } = change.version
  return { change: 'version', seq, at, resource_id: change.resource.id, version: { id, number, checksum, digest, format, source, restored_from } }
}

export interface MirrorHead {
  commit: string
  updated_at: string
}

export interface MirrorRemote {
  url: string
  /** Write-only: never returned, never logged; sealed (secret-keyring.ts). */
  token: StoredSecret | null
  created_at: string
  last_pushed_commit: string | null
  last_pushed_at: string | null
  last_error: string | null
  last_error_at: string | null
}

type Key = IndexKey

/** What the index needs to append to the journal inside its own transactions. */
export interface JournalSink {
  append(organizationId: string, at: string, change: JournalChange): void
}

/** Narrow view of `LmdbIndex` this store needs. */
export interface MirrorIndex {
  database<V = any>(name: string): Database<V, Key>
  transaction<T>(work: () => T): Promise<T>
}

/** Where an organization's push mirror token is: its additional authenticated data names the organization. */
export function mirrorSecretRef(organizationId: string): SecretRef {
  return { holder: 'mirror-remote', organization_id: organizationId, field: 'token' }
}

export class MirrorStore implements JournalSink, SecretHolder {
  private readonly journal: Database<JournalEntry, Key>
  private readonly meta: Database<number, Key>
  private readonly heads: Database<MirrorHead, Key>
  private readonly remotes: Database<MirrorRemote, Key>
  private readonly history: Database<HistoryEntry, Key>

  constructor(private readonly index: MirrorIndex) {
    this.journal = index.database(MIRROR_DATABASES.journal)
    this.meta = index.database(MIRROR_DATABASES.meta)
    this.heads = index.database(MIRROR_DATABASES.heads)
    this.remotes = index.database(MIRROR_DATABASES.remotes)
    this.history = index.database(MIRROR_DATABASES.history)
  }

  /** Must run inside a write transaction (the index calls it from its own). */
  append(organizationId: string, at: string, change: JournalChange): void {
    const seq = (this.meta.get('seq') ?? 0) + 1
    this.meta.put('seq', seq)
    this.journal.put(seq, { ...change, seq, organization_id: organizationId, at } as JournalEntry)
    if (change.change !== 'rebuild') this.history.put([organizationId, seq], historyEntry(seq, at, change))
  }

  /** Every change of one organization since the history began (or from `seq` on), in the order it was journaled. */
  *historyOf(organizationId: string, seq = 0): Generator<HistoryEntry> {
    for (const { value } of this.history.getRange({ start: [organizationId, seq], end: [organizationId, Number.MAX_SAFE_INTEGER] })) yield value
  }

  /** The sequence number of the organization's latest history entry (0 before any). */
  lastSeqOf(organizationId: string): number {
    for (const { value } of this.history.getRange({ start: [organizationId, Number.MAX_SAFE_INTEGER], end: [organizationId, 0], reverse: true, limit: 1 })) return value.seq
    return 0
  }

  /** The version of every history entry (deleted resources' too): their blobs are kept for rebuilds. */
  *historyVersions(): Generator<MirrorVersion> {
    for (const { value } of this.history.getRange()) if (value.change === 'version') yield value.version
  }

  /** Appends in a transaction of its own (the rebuild request). */
  appendNow(organizationId: string, change: JournalChange): Promise<void> {
    return this.index.transaction(() => this.append(organizationId, new Date().toISOString(), change))
  }

  /** Pending entries in order, at most `limit`. */
  pending(limit: number): JournalEntry[] {
    return [...this.journal.getRange({ limit }).map(({ value }) => value)]
  }

  /** The pending entries of one organization, in order, read as they are iterated. */
  *entriesOf(organizationId: string): Generator<JournalEntry> {
    for (const { value } of this.journal.getRange()) if (value.organization_id === organizationId) yield value
  }

  /** Sequence numbers of every pending entry of one organization. */
  pendingOf(organizationId: string): number[] {
    return Array.from(this.entriesOf(organizationId), (entry) => entry.seq)
  }

  /** Reads inside one write transaction: a consistent snapshot of the index and the journal together. */
  transactionRead<T>(work: () => T): Promise<T> {
    return this.index.transaction(work)
  }

  lastSeq(): number {
    return this.meta.get('seq') ?? 0
  }

  /** The commit point of the writer: entries applied and the head they produced, in one transaction. */
  markApplied(organizationId: string, seqs: number[], head: string): Promise<void> {
    return this.index.transaction(() => {
      for (const seq of seqs) this.journal.remove(seq)
      this.heads.put(organizationId, { commit: head, updated_at: new Date().toISOString() })
    })
  }

  /** Drops entries without applying them (superseded by a rebuild), in one transaction. */
  discard(seqs: number[]): Promise<void> {
    return this.index.transaction(() => { for (const seq of seqs) this.journal.remove(seq) })
  }

  head(organizationId: string): MirrorHead | undefined {
    return this.heads.get(organizationId)
  }

  remote(organizationId: string): MirrorRemote | undefined {
    return this.remotes.get(organizationId)
  }

  remoteOrganizations(): string[] {
    return [...this.remotes.getKeys()].map(String)
  }

  setRemote(organizationId: string, url: string, token: StoredSecret | null, at: string): Promise<MirrorRemote> {
    return this.index.transaction(() => {
      const remote: MirrorRemote = {
        url, token, created_at: at, last_pushed_commit: null, last_pushed_at: null, last_error: null, last_error_at: null,
      }
      this.remotes.put(organizationId, remote)
      return remote
    })
  }

  removeRemote(organizationId: string): Promise<boolean> {
    return this.index.transaction(() => {
      if (this.remotes.get(organizationId) === undefined) return false
      this.remotes.remove(organizationId)
      return true
    })
  }

  *secretSlots(): Iterable<SecretSlot> {
    for (const { key, value } of this.remotes.getRange()) {
      if (value.token !== null) yield { ref: mirrorSecretRef(String(key)), organization_id: String(key), value: value.token }
    }
  }

  replaceSecret(ref: SecretRef, expected: StoredSecret, next: StoredSecret): Promise<boolean> {
    return this.index.transaction(() => {
      if (ref.holder !== 'mirror-remote') return false
      const remote = this.remotes.get(ref.organization_id)
      if (!remote || !sameStoredSecret(remote.token, expected)) return false
      this.remotes.put(ref.organization_id, { ...remote, token: next })
      return true
    })
  }

  /**
   * Records the outcome of a push made to `pushed` (the remote as read when the push started), unless
   * the remote was removed or set again meanwhile: by the CLI in another process too, and with the same
   * URL (a new token). A setting is known by its URL and `created_at`; the outcome changes only the
   * `last_*` fields of the record as committed.
   */
  recordPush(
    organizationId: string, pushed: Pick<MirrorRemote, 'url' | 'created_at'>,
    outcome: { commit: string; at: string } | { error: string; at: string },
  ): Promise<void> {
    return this.index.transaction(() => {
      const remote = this.remotes.get(organizationId)
      if (!remote || remote.url !== pushed.url || remote.created_at !== pushed.created_at) return
      const next: MirrorRemote = 'commit' in outcome
        ? { ...remote, last_pushed_commit: outcome.commit, last_pushed_at: outcome.at, last_error: null, last_error_at: null }
        : { ...remote, last_error: outcome.error, last_error_at: outcome.at }
      this.remotes.put(organizationId, next)
    })
  }
}
