import type { DocumentFormat } from '../../documents/types.js'
import type { BlobRef, BlobStore } from '../records.js'
import type { Sql } from './sql.js'

/**
 * Documents as rows keyed by (canonical checksum, digest of the bytes, format): the same text is stored
 * once however often it is uploaded; nothing durable is on the replica's disk.
 */
export class PgBlobStore implements BlobStore {
  constructor(private readonly sql: Sql) {}

  async put(ref: BlobRef, bytes: string | Buffer): Promise<{ created: boolean; size: number }> {
    const data = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes
    // Found again, a blob is touched (as the file store does) so that gc sees it young while the upload commits.
    const { rows: [row] } = await this.sql.query<{ created: boolean }>(
      `INSERT INTO blobs (checksum, digest, format, bytes) VALUES ($1, $2, $3, $4)
       ON CONFLICT (checksum, digest, format) DO UPDATE SET touched_at = now()
       RETURNING (xmax = 0) AS created`,
      [ref.checksum, ref.digest, ref.format, data],
    )
    return { created: row.created, size: data.length }
  }

  async get(ref: BlobRef): Promise<Buffer> {
    const { rows: [row] } = await this.sql.query<{ bytes: Buffer }>(
      'SELECT bytes FROM blobs WHERE checksum = $1 AND digest = $2 AND format = $3', [ref.checksum, ref.digest, ref.format])
    if (!row) throw Object.assign(new Error(`blob not found: ${ref.checksum} ${ref.digest}.${ref.format}`), { code: 'ENOENT' })
    return row.bytes
  }

  async has(ref: BlobRef): Promise<boolean> {
    const { rowCount } = await this.sql.query(
      'SELECT 1 FROM blobs WHERE checksum = $1 AND digest = $2 AND format = $3', [ref.checksum, ref.digest, ref.format])
    return rowCount === 1
  }

  async *list(): AsyncIterable<BlobRef & { size: number; modifiedMs: number }> {
    const { rows } = await this.sql.query<{ checksum: string; digest: string; format: DocumentFormat; size: number; modified: number }>(
      `SELECT checksum, digest, format, octet_length(bytes) AS size, (extract(epoch FROM touched_at) * 1000)::float8 AS modified
       FROM blobs ORDER BY checksum, digest, format`)
    for (const { modified, ...blob } of rows) yield { ...blob, modifiedMs: modified }
  }

  async remove(ref: BlobRef, unchangedSince?: number): Promise<number> {
    const { rows: [row] } = await this.sql.query<{ size: number }>(
      `DELETE FROM blobs WHERE checksum = $1 AND digest = $2 AND format = $3
       AND ($4::float8 IS NULL OR touched_at < to_timestamp($4::float8 / 1000)) RETURNING octet_length(bytes) AS size`,
      [ref.checksum, ref.digest, ref.format, unchangedSince ?? null])
    return row?.size ?? 0
  }
}
