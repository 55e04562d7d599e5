import type { SessionStore } from '../port.js'
import type { SessionRecord } from '../records.js'
import { json, recordOf, type Sql } from './sql.js'

export class PgSessions implements SessionStore {
  constructor(private readonly sql: Sql) {}

  get(hash: string): Promise<SessionRecord | undefined> {
    // Read on every request of a console session: prepared once per connection (sql.ts).
    return recordOf(this.sql, { name: 'session-by-hash', text: 'SELECT record FROM sessions WHERE hash = $1' }, [hash])
  }

  async expired(at: string, limit: number): Promise<string[]> {
    const { rows } = await this.sql.query<{ hash: string }>(
      'SELECT hash FROM sessions WHERE expires_at <= $1 ORDER BY expires_at, hash LIMIT $2', [at, limit])
    return rows.map((row) => row.hash)
  }

  async put(hash: string, session: SessionRecord): Promise<void> {
    await this.sql.query(
      `INSERT INTO sessions (hash, expires_at, record) VALUES ($1, $2, $3)
       ON CONFLICT (hash) DO UPDATE SET expires_at = excluded.expires_at, record = excluded.record`,
      [hash, session.expires_at, json(session)],
    )
  }

  async remove(hash: string): Promise<boolean> {
    const { rowCount } = await this.sql.query('DELETE FROM sessions WHERE hash = $1', [hash])
    return rowCount === 1
  }
}
