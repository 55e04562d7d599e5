import { historyEntry } from '../../store/mirror-store.js'
import type { MirrorJournalStore } from '../port.js'
import type { JournalChange, JournalEntry } from '../records.js'
import { json, recordsOf, type Sql } from './sql.js'

export class PgMirrorJournal implements MirrorJournalStore {
  constructor(private readonly sql: Sql, private readonly appended: () => void) {}

  pending(limit: number): Promise<JournalEntry[]> {
    return recordsOf(this.sql, 'SELECT entry AS record FROM mirror_journal ORDER BY seq LIMIT $1', [limit])
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
}
