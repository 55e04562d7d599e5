/**
 * One append to the git mirror's journal on today's databases (`MIRROR_DATABASES`): the sequence
 * counter under `mirror-meta` 'seq', the entry under its number in `mirror-journal`, and (but for a
 * rebuild request) its history entry under [organization, number] in `mirror-history`. Synchronous: it
 * runs inside an LMDB write transaction, where the counter is read as committed and under the write
 * lock, so concurrent appends never conflict. Two callers: the port's LMDB adapter at commit
 * (`LmdbMirrorJournal.append`), and `LmdbIndex`'s own transactions until resource deletion moves onto
 * the port. A leaf module (no import of the index or the adapter), so neither imports the other for it.
 */
import type { Database } from 'lmdb'
import { historyEntry, type JournalChange, type JournalEntry } from '../mirror-records.js'

type Key = string | number | (string | number)[]

/** The databases an append writes. */
export interface JournalDatabases {
  journal: Database<any, Key>
  meta: Database<any, Key>
  history: Database<any, Key>
}

/** Must run inside an LMDB write transaction. */
export function appendToJournal(db: JournalDatabases, organizationId: string, at: string, change: JournalChange): void {
  const seq = ((db.meta.get('seq') as number | undefined) ?? 0) + 1
  db.meta.put('seq', seq)
  db.journal.put(seq, { ...change, seq, organization_id: organizationId, at } as JournalEntry)
  if (change.change !== 'rebuild') db.history.put([organizationId, seq], historyEntry(seq, at, change))
}
