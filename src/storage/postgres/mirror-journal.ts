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

export class PgMirrorJournal implements MirrorJournalStore {
  constructor(private readonly sql: Sql, private readonly appended: () => void) {}

  pending(limit: number): Promise<JournalEntry[]> {
    return recordsOf(this.sql, 'SELECT entry AS record FROM mirror_journal ORDER BY seq LIMIT $1', [limit])
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

  async append(organizationId: string, at: string, change: JournalChange): Promise<void> {
    // A sequence, not a counter row: concurrent appends never wait for or conflict with each other.
    const { rows: [{ seq }] } = await this.sql.query<{ seq: string }>("SELECT nextval('mirror_journal_seq') AS seq")
    const number = Number(seq)
    const entry = { ...change, seq: number, organization_id: organizationId, at } as JournalEntry
    await this.sql.query('INSERT INTO mirror_journal (seq, organization_id, entry) VALUES ($1, $2, $3)', [number, organizationId, json(entry)])
    if (change.change !== 'rebuild') {
      await this.sql.query('INSERT INTO mirror_history (organization_id, seq, entry) VALUES ($1, $2, $3)',
        [organizationId, number, json(historyEntry(number, at, change))])
    }
    this.appended()
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
