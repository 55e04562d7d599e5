import type { ResourceKind, VersionSource } from '../registry-records.js'
import type { TallyStore } from '../port.js'
import type { StorageTallies } from '../features/tallies.js'
import type { Sql } from './sql.js'

/**
 * Tallies as rows that are only ever inserted (`tally_deltas`) and summed when read: a counter row
 * updated by every upload would make concurrent serializable uploads conflict over it.
 */
export class PgTallies implements TallyStore {
  constructor(private readonly sql: Sql) {}

  async get(): Promise<StorageTallies> {
    const { rows } = await this.sql.query<{ name: string; kind: string | null; source: string | null; total: string }>(
      'SELECT name, kind, source, sum(delta)::text AS total FROM tally_deltas GROUP BY name, kind, source ORDER BY name, kind, source')
    const { rows: [stored] } = await this.sql.query<{ count: string }>('SELECT count(*)::text AS count FROM versions')
    const total = (name: string) => Number(rows.find((row) => row.name === name)?.total ?? 0)
    return {
      versions: Number(stored.count),
      versionsWritten: rows.filter((row) => row.name === 'versions-written')
        .map((row) => ({ kind: row.kind as ResourceKind, source: row.source as VersionSource, count: Number(row.total) })),
      blobs: { count: total('blobs-count'), bytes: total('blobs-bytes') },
    }
  }

  async addBlobs(count: number, bytes: number): Promise<void> {
    if (count === 0 && bytes === 0) return
    await this.sql.query("INSERT INTO tally_deltas (name, delta) VALUES ('blobs-count', $1), ('blobs-bytes', $2)", [count, bytes])
  }
}

/** The tally of a version written, in the transaction that appends it. */
export async function tallyVersionWritten(sql: Sql, kind: ResourceKind, source: VersionSource): Promise<void> {
  await sql.query("INSERT INTO tally_deltas (name, kind, source, delta) VALUES ('versions-written', $1, $2, 1)", [kind, source])
}
