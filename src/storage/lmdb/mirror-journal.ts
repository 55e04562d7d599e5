/**
 * The git mirror's records on its databases (`MIRROR_DATABASES`, layout.ts), as the registry has
 * always kept them: `mirror-journal` (sequence number → JournalEntry, removed once applied),
 * `mirror-meta` ('seq' → the last number handed out), `mirror-history` ([organization, sequence number]
 * → HistoryEntry, kept), `mirror-heads` (organization → MirrorHead) and `mirror-remotes` (organization →
 * MirrorRemote).
 */
import { notFound, RegistryError } from '../../errors.js'
import type { MirrorJournalStore } from '../port.js'
import type {
  HistoryEntry, HistoryPosition, JournalChange, JournalEntry, MirrorHead, MirrorRemote, MirrorVersion,
} from '../records.js'
import { historyEntry } from '../records.js'
import type { LmdbEnvironment, MirrorDatabases } from './databases.js'
import type { Key, LmdbAccess } from './transaction-view.js'

/** History entries read at a time while looking for versions. */
const CHUNK = 512

export class LmdbMirrorJournal implements MirrorJournalStore {
  constructor(
    private readonly access: LmdbAccess,
    private readonly environment: LmdbEnvironment,
    private readonly appended: () => void,
  ) {}

  private get db() {
    return this.environment.mirror
  }

  async pending(limit: number, afterSeq?: number): Promise<JournalEntry[]> {
    const after = afterSeq === undefined ? {} : { start: afterSeq + 1 }
    return this.access.range<JournalEntry>(this.db.journal, { ...after, limit }).map(({ value }) => value)
  }

  async pendingOf(organizationId: string): Promise<JournalEntry[]> {
    // The journal is keyed by number only (it is short: entries leave it once applied).
    return this.access.range<JournalEntry>(this.db.journal).map(({ value }) => value).filter((entry) => entry.organization_id === organizationId)
  }

  async history(organizationId: string, afterSeq = 0): Promise<HistoryEntry[]> {
    return this.access.range<HistoryEntry>(this.db.history, { start: [organizationId, afterSeq + 1], end: [organizationId, Number.MAX_SAFE_INTEGER] })
      .map(({ value }) => value)
  }

  async lastSeq(organizationId: string): Promise<number> {
    const [last] = this.access.range<HistoryEntry>(this.db.history,
      { start: [organizationId, Number.MAX_SAFE_INTEGER], end: [organizationId, 0], reverse: true, limit: 1 })
    return last?.value.seq ?? 0
  }

  async historyVersions(after: HistoryPosition | undefined, limit: number): Promise<{ versions: MirrorVersion[]; next: HistoryPosition | undefined }> {
    const versions: MirrorVersion[] = []
    let start: Key | undefined = after && [after.organization_id, after.seq + 1]
    for (;;) {
      const chunk = this.access.range<HistoryEntry>(this.db.history, { ...(start === undefined ? {} : { start }), limit: CHUNK })
      for (const { key, value } of chunk) {
        if (value.change !== 'version') continue
        versions.push(value.version)
        if (versions.length >= limit) return { versions, next: position(key) }
      }
      if (chunk.length < CHUNK) return { versions, next: undefined }
      const last = position(chunk[chunk.length - 1].key)
      start = [last.organization_id, last.seq + 1]
    }
  }

  async head(organizationId: string): Promise<MirrorHead | undefined> {
    return this.access.get(this.db.heads, organizationId)
  }

  async remote(organizationId: string): Promise<MirrorRemote | undefined> {
    return this.access.get(this.db.remotes, organizationId)
  }

  async remoteOrganizations(): Promise<string[]> {
    return this.access.range(this.db.remotes).map(({ key }) => String(key))
  }

  async append(organizationId: string, at: string, change: JournalChange): Promise<void> {
    // Commutative: the sequence number is taken from the counter as committed, under the write lock.
    this.access.atCommit(() => appendToJournal(this.db, organizationId, at, change))
    this.appended()
  }

  async markApplied(organizationId: string, seqs: number[], head: MirrorHead): Promise<void> {
    this.requireOrganization(organizationId)
    for (const seq of seqs) this.access.remove(this.db.journal, seq)
    this.access.put(this.db.heads, organizationId, head)
  }

  async discard(seqs: number[]): Promise<void> {
    for (const seq of seqs) this.access.remove(this.db.journal, seq)
  }

  async copyIn(organizationId: string, history: HistoryEntry[], journal: JournalEntry[]): Promise<void> {
    this.requireOrganization(organizationId)
    for (const entry of journal) {
      if (entry.organization_id !== organizationId) throw new Error(`journal entry ${entry.seq} is another organization's`)
      if (this.access.get(this.db.journal, entry.seq) !== undefined) throw taken(entry.seq)
      this.access.put(this.db.journal, entry.seq, entry)
    }
    for (const entry of history) {
      if (this.access.get(this.db.history, [organizationId, entry.seq]) !== undefined) throw taken(entry.seq)
      this.access.put(this.db.history, [organizationId, entry.seq], entry)
    }
    const highest = Math.max(0, ...journal.map((entry) => entry.seq), ...history.map((entry) => entry.seq))
    // Applied at commit like an append's counter: raised, never lowered, so concurrent appends never conflict with it.
    this.access.atCommit(() => {
      if (highest > ((this.db.meta.get('seq') as number | undefined) ?? 0)) this.db.meta.put('seq', highest)
    })
  }

  async putRemote(organizationId: string, remote: MirrorRemote): Promise<void> {
    this.requireOrganization(organizationId)
    this.access.put(this.db.remotes, organizationId, remote)
  }

  async removeRemote(organizationId: string): Promise<boolean> {
    if (this.access.get(this.db.remotes, organizationId) === undefined) return false
    this.access.remove(this.db.remotes, organizationId)
    return true
  }

  private requireOrganization(organizationId: string): void {
    if (this.access.get(this.environment.index.organizations, organizationId) === undefined) throw notFound('organization')
  }
}

const taken = (seq: number) => new RegistryError('conflict', `mirror entry ${seq} is already there`)

function position(key: Key): HistoryPosition {
  const [organizationId, seq] = key as [string, number]
  return { organization_id: organizationId, seq }
}

/**
 * One append: the sequence counter under `mirror-meta` 'seq', the entry under its number in
 * `mirror-journal`, and (but for a rebuild request) its history entry under [organization, number] in
 * `mirror-history`. Runs inside the commit's LMDB write transaction, where the counter is read as
 * committed and under the write lock, so concurrent appends never conflict.
 */
function appendToJournal(db: MirrorDatabases, organizationId: string, at: string, change: JournalChange): void {
  const seq = ((db.meta.get('seq') as number | undefined) ?? 0) + 1
  db.meta.put('seq', seq)
  db.journal.put(seq, { ...change, seq, organization_id: organizationId, at } as JournalEntry)
  if (change.change !== 'rebuild') db.history.put([organizationId, seq], historyEntry(seq, at, change))
}
