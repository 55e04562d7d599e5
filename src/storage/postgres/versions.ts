import { LRUCache } from 'lru-cache'
import { RegistryError, notFound } from '../../errors.js'
import type { VersionStore } from '../port.js'
import type { Page, PageRequest, ResourceKind, ResourceRecord, VersionRecord } from '../records.js'
import { json, recordOf, recordsOf, run, type Prepared, type Sql } from './sql.js'
import { deepFreeze } from '../frozen.js'

// Read for every resource shown: prepared once per connection (sql.ts).
const CURRENT_VERSION: Prepared = {
  name: 'current-version',
  text: 'SELECT v.record FROM resources r JOIN versions v ON v.resource_id = r.id AND v.number = r.current_number WHERE r.id = $1',
}
const VERSION_TEXT: Prepared = { name: 'version-text', text: 'SELECT record::text AS record FROM versions WHERE resource_id = $1 AND number = $2' }
import { tallyVersionWritten } from './tallies.js'

/**
 * Version records read by `currentOf`, by resource id and number: a version never changes once
 * committed, so nothing here can be stale, on this replica or any other. Shared by every reader, so
 * frozen (a caller copies to change), as LMDB's committed records are.
 */
export class CommittedVersions {
  private readonly records = new LRUCache<string, { record: VersionRecord }>({ maxSize: 16 * 1024 * 1024, sizeCalculation: (_, key) => Math.max(1, key.length + 512) })

  get(resourceId: string, number: number): VersionRecord | undefined {
    return this.records.get(`${resourceId}/${number}`)?.record
  }

  set(resourceId: string, number: number, text: string): VersionRecord {
    const record = deepFreeze(JSON.parse(text) as VersionRecord)
    this.records.set(`${resourceId}/${number}`, { record }, { size: Math.max(1, text.length) })
    return record
  }
}

export class PgVersions implements VersionStore {
  /** `committed`: outside transactions only (a transaction's reads must see its own state, and take part in its conflicts). */
  constructor(private readonly sql: Sql, private readonly committed?: CommittedVersions) {}

  current(resourceId: string): Promise<VersionRecord | undefined> {
    return recordOf(this.sql, CURRENT_VERSION, [resourceId])
  }

  async currentOf(resource: ResourceRecord): Promise<VersionRecord | undefined> {
    if (resource.last_number === 0) return undefined
    if (!this.committed) return this.get(resource.id, resource.last_number)
    const kept = this.committed.get(resource.id, resource.last_number)
    if (kept) return kept
    const { rows: [found] } = await run<{ record: string }>(this.sql, VERSION_TEXT, [resource.id, resource.last_number])
    if (!found) return undefined
    return this.committed.set(resource.id, resource.last_number, found.record)
  }

  get(resourceId: string, number: number): Promise<VersionRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM versions WHERE resource_id = $1 AND number = $2', [resourceId, number])
  }

  byId(id: string): Promise<VersionRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM versions WHERE id = $1', [id])
  }

  async list(resourceId: string, page: PageRequest): Promise<Page<VersionRecord>> {
    const { rows: [{ total }] } = await this.sql.query<{ total: string }>('SELECT count(*) AS total FROM versions WHERE resource_id = $1', [resourceId])
    const items = await recordsOf<VersionRecord>(this.sql,
      'SELECT record FROM versions WHERE resource_id = $1 ORDER BY number DESC OFFSET $2 LIMIT $3', [resourceId, page.offset, page.limit])
    return { items, total: Number(total) }
  }

  recent(organizationId: string, limit: number): Promise<VersionRecord[]> {
    // Version ids are ULIDs: newest first is id order, descending.
    return recordsOf(this.sql, `SELECT v.record FROM versions v JOIN resources r ON r.id = v.resource_id
      WHERE r.organization_id = $1 ORDER BY v.id DESC LIMIT $2`, [organizationId, limit])
  }

  scan(after: Pick<VersionRecord, 'resource_id' | 'number'> | undefined, limit: number): Promise<VersionRecord[]> {
    return after === undefined
      ? recordsOf(this.sql, 'SELECT record FROM versions ORDER BY resource_id, number LIMIT $1', [limit])
      : recordsOf(this.sql, 'SELECT record FROM versions WHERE (resource_id, number) > ($1, $2) ORDER BY resource_id, number LIMIT $3',
        [after.resource_id, after.number, limit])
  }

  async isKnownValid(kind: ResourceKind, checksum: string): Promise<boolean> {
    const { rowCount } = await this.sql.query('SELECT 1 FROM valid_documents WHERE kind = $1 AND checksum = $2', [kind, checksum])
    return rowCount === 1
  }

  async append(version: VersionRecord): Promise<ResourceRecord> {
    const resource = await recordOf<ResourceRecord>(this.sql, 'SELECT record FROM resources WHERE id = $1', [version.resource_id])
    if (!resource) throw notFound()
    if (version.number !== resource.last_number + 1) {
      throw new RegistryError('conflict', `version ${version.number} is not the next of ${resource.kind} ${resource.id} (${resource.last_number + 1})`)
    }
    const updated: ResourceRecord = { ...resource, last_number: version.number, updated_at: version.created_at }
    await this.sql.query(
      'INSERT INTO versions (id, resource_id, number, kind, checksum, record) VALUES ($1, $2, $3, $4, $5, $6)',
      [version.id, version.resource_id, version.number, version.kind, version.checksum, json(version)],
    )
    // The number moves only from the one this transaction read (serializable: a concurrent append fails one of the two).
    const { rowCount } = await this.sql.query(
      'UPDATE resources SET last_number = $2, current_number = $2, record = $3 WHERE id = $1 AND last_number = $2 - 1',
      [resource.id, version.number, json(updated)],
    )
    if (rowCount !== 1) throw new RegistryError('conflict', `version ${version.number} of ${resource.id} was taken meanwhile`)
    await this.sql.query('INSERT INTO valid_documents (kind, checksum) VALUES ($1, $2) ON CONFLICT DO NOTHING', [version.kind, version.checksum])
    await tallyVersionWritten(this.sql, version.kind, version.source)
    return updated
  }
}
