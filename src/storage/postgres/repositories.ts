import { RegistryError, notFound } from '../../errors.js'
import { MAX_DELIVERIES, syncLeaseDue } from '../features/repositories.js'
import type { RepositoryStore } from '../port.js'
import type { LastSyncRecord, RepositoryConnectionRecord, RepositoryProvider, SyncLeaseRecord } from '../records.js'
import { json, recordOf, recordsOf, type Sql } from './sql.js'

/**
 * The repositories section on PostgreSQL: `repository_connections` and `repository_webhook_deliveries`
 * (007_repositories.sql), `repository_sync_leases` (011_repository_sync_leases.sql).
 */
export class PgRepositories implements RepositoryStore {
  constructor(private readonly sql: Sql) {}

  get(apiId: string): Promise<RepositoryConnectionRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM repository_connections WHERE api_id = $1', [apiId])
  }

  byRepository(normalizedUrl: string): Promise<RepositoryConnectionRecord[]> {
    return recordsOf(this.sql, 'SELECT record FROM repository_connections WHERE normalized_url = $1 ORDER BY branch, api_id', [normalizedUrl])
  }

  list(organizationId: string): Promise<RepositoryConnectionRecord[]> {
    return recordsOf(this.sql, 'SELECT record FROM repository_connections WHERE organization_id = $1 ORDER BY api_id', [organizationId])
  }

  syncLease(apiId: string): Promise<SyncLeaseRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM repository_sync_leases WHERE api_id = $1', [apiId])
  }

  nextSync(at: string): Promise<SyncLeaseRecord | undefined> {
    // SKIP LOCKED: a lease another replica's claim holds is passed over rather than waited for; the lock
    // lasts until this transaction ends, so the claimer that took it is the one that writes it.
    return recordOf(this.sql, `SELECT record FROM repository_sync_leases WHERE due <= $1 COLLATE "C"
      ORDER BY due, api_id LIMIT 1 FOR UPDATE SKIP LOCKED`, [at])
  }

  async putSyncLease(lease: SyncLeaseRecord): Promise<void> {
    const due = syncLeaseDue(lease)
    // The connection's row is the lease's parent (a foreign key): without it, 404 rather than a constraint error.
    const { rowCount } = await this.sql.query('SELECT 1 FROM repository_connections WHERE api_id = $1', [lease.api_id])
    if (!rowCount) throw notFound('repository connection')
    await this.sql.query(
      `INSERT INTO repository_sync_leases (api_id, due, record) VALUES ($1, $2, $3)
       ON CONFLICT (api_id) DO UPDATE SET due = excluded.due, record = excluded.record`,
      [lease.api_id, due, json(lease)])
  }

  async removeSyncLease(apiId: string): Promise<boolean> {
    const { rowCount } = await this.sql.query('DELETE FROM repository_sync_leases WHERE api_id = $1', [apiId])
    return rowCount === 1
  }

  async put(connection: RepositoryConnectionRecord, expectedVersion?: string | null): Promise<boolean> {
    const { rowCount } = await this.sql.query("SELECT 1 FROM resources WHERE id = $1 AND kind = 'api' AND organization_id = $2",
      [connection.api_id, connection.organization_id])
    if (!rowCount) throw notFound('api')
    const before = await this.get(connection.api_id)
    if (expectedVersion !== undefined && (before?.updated_at ?? null) !== expectedVersion) {
      throw new RegistryError('conflict', 'the repository connection changed meanwhile')
    }
    await this.sql.query(
      `INSERT INTO repository_connections (api_id, id, organization_id, provider, normalized_url, branch, record)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (api_id) DO UPDATE SET id = excluded.id, organization_id = excluded.organization_id, provider = excluded.provider,
         normalized_url = excluded.normalized_url, branch = excluded.branch, record = excluded.record`,
      [connection.api_id, connection.id, connection.organization_id, connection.provider, connection.normalized_url, connection.branch,
        json(connection)],
    )
    return before === undefined
  }

  async remove(apiId: string): Promise<boolean> {
    const { rowCount } = await this.sql.query('DELETE FROM repository_connections WHERE api_id = $1', [apiId])
    return rowCount === 1
  }

  async recordSync(apiId: string, connectionVersion: string, lastSync: LastSyncRecord): Promise<boolean> {
    const connection = await this.get(apiId)
    if (!connection || connection.updated_at !== connectionVersion) return false
    // Merged here, not in SQL: the json column keeps the record's text and key order (jsonb would not).
    await this.sql.query('UPDATE repository_connections SET record = $2 WHERE api_id = $1', [apiId, json({ ...connection, last_sync: lastSync })])
    return true
  }

  async claimDelivery(provider: RepositoryProvider, id: string, atMs: number, keep = MAX_DELIVERIES): Promise<boolean> {
    const { rowCount } = await this.sql.query(
      'INSERT INTO repository_webhook_deliveries (provider, id, seen_at_ms) VALUES ($1, $2, $3) ON CONFLICT (provider, id) DO NOTHING',
      [provider, id, atMs])
    if (!rowCount) return false
    // The oldest past the newest `keep`, in LMDB's order (time first seen, then provider and id).
    await this.sql.query(
      `DELETE FROM repository_webhook_deliveries WHERE (provider, id) IN (
         SELECT provider, id FROM repository_webhook_deliveries ORDER BY seen_at_ms DESC, provider DESC, id DESC OFFSET $1)`,
      [keep])
    return true
  }
}
