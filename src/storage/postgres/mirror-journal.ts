/**
 * The git mirror's records on PostgreSQL: `mirror_journal` and `mirror_history` (001_initial.sql),
 * `mirror_heads` and `mirror_remotes` (008_mirror.sql).
 */
import { notFound } from '../../errors.js'
import type { MirrorJournalStore } from '../port.js'
import {
  historyEntry, type HistoryEntry, type HistoryPosition, type JournalChange, type JournalEntry, type MirrorHead, type MirrorRemote,
  type MirrorVersion,
} from '../records.js'
import { json, recordOf, recordsOf, type Sql } from './sql.js'

/**
 * Journal entries are numbered when their transaction commits, not when appended: `append` keeps the
 * change, and `numberAppends`, the last step before COMMIT, takes this transaction-level advisory lock,
 * numbers the changes from the sequence and inserts them. The lock is released only once the commit is
 * visible (or rolled back), so across every replica on the database an entry numbered N+1 is never
 * visible before entry N is committed: `pending` and `history` only grow at their end. The cost is that
 * journaling commits take their numbers one at a time (a few inserts each); nothing is read, so
 * concurrent journaling transactions still never conflict.
 */
export const JOURNAL_NUMBERING_LOCK = '120303903928942' // the bytes of "mjourn" (PostgreSQL 15 reads no hex literals)

/**
 * An entry's JSON around its number: serialized with a stand-in number and cut there, so that the
 * statement that takes the number writes exactly the text LMDB writes (the same keys in the same
 * order). Only the entry's own `seq` can match: a string in the JSON holds no unescaped quote.
 */
const STAND_IN = Number.MAX_SAFE_INTEGER
function aroundSeq(entry: object): [string, string] {
  const parts = JSON.stringify(entry).split(`"seq":${STAND_IN}`)
  if (parts.length !== 2) throw new Error('a journal entry without its own number')
  return [`${parts[0]}"seq":`, parts[1]]
}

export class PgMirrorJournal implements MirrorJournalStore {
  /** Appended in this transaction, numbered at its commit. */
  private readonly appends: { organizationId: string; at: string; change: JournalChange }[] = []

  constructor(private readonly sql: Sql) {}

  pending(limit: number, afterSeq = 0): Promise<JournalEntry[]> {
    return recordsOf(this.sql, 'SELECT entry AS record FROM mirror_journal WHERE seq > $2 ORDER BY seq LIMIT $1', [limit, afterSeq])
  }

  pendingOf(organizationId: string): Promise<JournalEntry[]> {
    return recordsOf(this.sql, 'SELECT entry AS record FROM mirror_journal WHERE organization_id = $1 ORDER BY seq', [organizationId])
  }

  history(organizationId: string, afterSeq = 0): Promise<HistoryEntry[]> {
    return recordsOf(this.sql, 'SELECT entry AS record FROM mirror_history WHERE organization_id = $1 AND seq > $2 ORDER BY seq',
      [organizationId, afterSeq])
  }

  async lastSeq(organizationId: string): Promise<number> {
    const { rows: [last] } = await this.sql.query<{ seq: string | null }>('SELECT max(seq) AS seq FROM mirror_history WHERE organization_id = $1', [organizationId])
    return Number(last?.seq ?? 0)
  }

  async historyVersions(after: HistoryPosition | undefined, limit: number): Promise<{ versions: MirrorVersion[]; next: HistoryPosition | undefined }> {
    const { rows } = await this.sql.query<{ organization_id: string; seq: string; version: MirrorVersion }>(
      `SELECT organization_id, seq, entry -> 'version' AS version FROM mirror_history
        WHERE entry ->> 'change' = 'version' AND (organization_id, seq) > ($1, $2)
        ORDER BY organization_id, seq LIMIT $3`,
      [after?.organization_id ?? '', after?.seq ?? 0, limit])
    const last = rows.at(-1)
    const next = last && rows.length >= limit ? { organization_id: last.organization_id, seq: Number(last.seq) } : undefined
    return { versions: rows.map((row) => row.version), next }
  }

  head(organizationId: string): Promise<MirrorHead | undefined> {
    return recordOf(this.sql, 'SELECT record FROM mirror_heads WHERE organization_id = $1', [organizationId])
  }

  remote(organizationId: string): Promise<MirrorRemote | undefined> {
    return recordOf(this.sql, 'SELECT record FROM mirror_remotes WHERE organization_id = $1', [organizationId])
  }

  async remoteOrganizations(): Promise<string[]> {
    const { rows } = await this.sql.query<{ organization_id: string }>('SELECT organization_id FROM mirror_remotes ORDER BY organization_id')
    return rows.map((row) => row.organization_id)
  }

  append(organizationId: string, at: string, change: JournalChange): Promise<void> {
    this.appends.push({ organizationId, at, change })
    return Promise.resolve()
  }

  /**
   * Numbers and inserts this transaction's appends, in the order they were made, under the numbering
   * lock (see above); answers whether there were any. Called by the adapter right before COMMIT.
   */
  async numberAppends(): Promise<boolean> {
    if (this.appends.length === 0) return false
    await this.sql.query(`SELECT pg_advisory_xact_lock(${JOURNAL_NUMBERING_LOCK})`)
    for (const { organizationId, at, change } of this.appends) {
      // The entries as on LMDB, their number put in by the statement that takes it.
      const entry = aroundSeq({ ...change, seq: STAND_IN, organization_id: organizationId, at })
      const history = change.change === 'rebuild' ? [null, null] : aroundSeq(historyEntry(STAND_IN, at, change))
      await this.sql.query(
        `WITH n AS (SELECT nextval('mirror_journal_seq') AS seq),
              journal AS (INSERT INTO mirror_journal (seq, organization_id, entry) SELECT n.seq, $1, ($2 || n.seq || $3)::json FROM n)
         INSERT INTO mirror_history (organization_id, seq, entry)
           SELECT $1, n.seq, ($4 || n.seq || $5)::json FROM n WHERE $4::text IS NOT NULL`,
        [organizationId, ...entry, ...history])
    }
    return true
  }

  async markApplied(organizationId: string, seqs: number[], head: MirrorHead): Promise<void> {
    await this.requireOrganization(organizationId)
    await this.discard(seqs)
    await this.sql.query(
      `INSERT INTO mirror_heads (organization_id, head_commit, record) VALUES ($1, $2, $3)
        ON CONFLICT (organization_id) DO UPDATE SET head_commit = excluded.head_commit, record = excluded.record`,
      [organizationId, head.commit, json(head)])
  }

  async discard(seqs: number[]): Promise<void> {
    if (seqs.length > 0) await this.sql.query('DELETE FROM mirror_journal WHERE seq = ANY($1::bigint[])', [seqs])
  }

  async copyIn(organizationId: string, history: HistoryEntry[], journal: JournalEntry[]): Promise<void> {
    await this.requireOrganization(organizationId)
    if (journal.some((entry) => entry.organization_id !== organizationId)) throw new Error('a journal entry of another organization')
    // A taken number is a unique violation, which the adapter answers as 409.
    if (journal.length > 0) {
      await this.sql.query(
        `INSERT INTO mirror_journal (seq, organization_id, entry)
           SELECT (entry ->> 'seq')::bigint, $1, entry FROM json_array_elements($2::json) AS entry`,
        [organizationId, JSON.stringify(journal)])
    }
    if (history.length > 0) {
      await this.sql.query(
        `INSERT INTO mirror_history (organization_id, seq, entry)
           SELECT $1, (entry ->> 'seq')::bigint, entry FROM json_array_elements($2::json) AS entry`,
        [organizationId, JSON.stringify(history)])
    }
    const highest = Math.max(0, ...journal.map((entry) => entry.seq), ...history.map((entry) => entry.seq))
    // Raised, never lowered (a sequence is outside the transaction: a rollback leaves a gap, as nextval does).
    await this.sql.query(
      `SELECT setval('mirror_journal_seq', $1::bigint)
        WHERE $1::bigint > (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM mirror_journal_seq)`, [highest])
  }

  async putRemote(organizationId: string, remote: MirrorRemote): Promise<void> {
    await this.requireOrganization(organizationId)
    await this.sql.query(
      `INSERT INTO mirror_remotes (organization_id, url, record) VALUES ($1, $2, $3)
        ON CONFLICT (organization_id) DO UPDATE SET url = excluded.url, record = excluded.record`,
      [organizationId, remote.url, json(remote)])
  }

  async removeRemote(organizationId: string): Promise<boolean> {
    const { rowCount } = await this.sql.query('DELETE FROM mirror_remotes WHERE organization_id = $1', [organizationId])
    return (rowCount ?? 0) > 0
  }

  private async requireOrganization(organizationId: string): Promise<void> {
    const { rowCount } = await this.sql.query('SELECT 1 FROM organizations WHERE id = $1', [organizationId])
    if (!rowCount) throw notFound('organization')
  }
}
