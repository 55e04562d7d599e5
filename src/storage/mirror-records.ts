/**
 * The records of the git mirror (issue 5) and of search's terms (issue 17) as both adapters store them:
 * the LMDB databases of `MIRROR_DATABASES` and `SEARCH_DATABASES` (src/storage/lmdb/layout.ts) hold them as
 * they are, PostgreSQL's json columns as json (migrations 001 and 008). Re-exported by records.ts.
 */
import type { ResourceRecord, VersionRecord } from './registry-records.js'
import type { StoredSecret } from './secret-keyring.js'
import type { SecretRef } from './secret-slots.js'

export type { SearchTerms } from '../documents/search-terms.js'

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

/** Where a page of the history's versions stopped (`MirrorJournalReader.historyVersions`): the next starts after it. */
export interface HistoryPosition {
  organization_id: string
  seq: number
}

/** An organization's mirror head: the commit `main` points at, written with the entries it applied. */
export interface MirrorHead {
  commit: string
  updated_at: string
}

/** An organization's push mirror. */
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

/** Where an organization's push mirror token is: its additional authenticated data names the organization. */
export function mirrorSecretRef(organizationId: string): SecretRef {
  return { holder: 'mirror-remote', organization_id: organizationId, field: 'token' }
}
