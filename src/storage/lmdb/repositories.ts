import { RegistryError, notFound } from '../../errors.js'
import { repositoryKeys } from './layout.js'
import { MAX_DELIVERIES, syncLeaseDue } from '../features/repositories.js'
import type { RepositoryStore } from '../port.js'
import type { LastSyncRecord, RepositoryConnectionRecord, RepositoryProvider, ResourceRecord, SyncLeaseRecord } from '../records.js'
import type { LmdbEnvironment, RepositoryDatabases } from './databases.js'
import type { LmdbAccess } from './transaction-view.js'

/**
 * The repositories section on today's LMDB databases of the feature (`environment.repositories`,
 * `REPOSITORY_DATABASES` in layout.ts), read and written with their keys as they were:
 * `repository-connections` (api id → connection), `repository-branches` ([normalized url, branch, api id]
 * → null), `webhook-deliveries` ([provider, id] → ms first seen) and `webhook-delivery-order` ([ms,
 * provider, id] → null); and, since issue 16, `repository-sync-leases` (api id → sync lease) with
 * `repository-sync-due` ([due, api id] → null).
 */
export class LmdbRepositories implements RepositoryStore {
  private readonly db: RepositoryDatabases

  constructor(private readonly access: LmdbAccess, private readonly environment: LmdbEnvironment) {
    this.db = environment.repositories
  }

  async get(apiId: string): Promise<RepositoryConnectionRecord | undefined> {
    return this.access.get(this.db.repositoryConnections, apiId)
  }

  async byRepository(normalizedUrl: string): Promise<RepositoryConnectionRecord[]> {
    const found: RepositoryConnectionRecord[] = []
    for (const { key } of this.access.range(this.db.repositoryBranches, repositoryKeys.repositoryRange(normalizedUrl))) {
      const connection = await this.get((key as string[])[2])
      if (connection) found.push(connection)
    }
    return found
  }

  async list(organizationId: string): Promise<RepositoryConnectionRecord[]> {
    // A scan of every connection, as before (there are few: one per synced API at most); no database
    // orders them by organization.
    return this.access.range<RepositoryConnectionRecord>(this.db.repositoryConnections)
      .map(({ value }) => value).filter((connection) => connection.organization_id === organizationId)
  }

  async put(connection: RepositoryConnectionRecord, expectedVersion?: string | null): Promise<boolean> {
    const api: ResourceRecord | undefined = this.access.get(this.environment.index.resources, connection.api_id)
    if (!api || api.kind !== 'api' || api.organization_id !== connection.organization_id) throw notFound('api')
    const before = await this.get(connection.api_id)
    if (expectedVersion !== undefined && (before?.updated_at ?? null) !== expectedVersion) {
      throw new RegistryError('conflict', 'the repository connection changed meanwhile')
    }
    if (before) this.access.remove(this.db.repositoryBranches, branchKey(before))
    this.access.put(this.db.repositoryConnections, connection.api_id, connection)
    this.access.put(this.db.repositoryBranches, branchKey(connection), null)
    return before === undefined
  }

  async remove(apiId: string): Promise<boolean> {
    const connection = await this.get(apiId)
    if (!connection) return false
    this.access.remove(this.db.repositoryBranches, branchKey(connection))
    this.access.remove(this.db.repositoryConnections, apiId)
    await this.removeSyncLease(apiId)
    return true
  }

  async syncLease(apiId: string): Promise<SyncLeaseRecord | undefined> {
    return this.access.get(this.db.syncLeases, apiId)
  }

  async nextSync(at: string): Promise<SyncLeaseRecord | undefined> {
    const [first] = this.access.range(this.db.syncLeaseDue, { ...repositoryKeys.syncLeaseDueBy(at), limit: 1 })
    return first && this.syncLease((first.key as string[])[1])
  }

  async putSyncLease(lease: SyncLeaseRecord): Promise<void> {
    const due = syncLeaseDue(lease)
    if (!(await this.get(lease.api_id))) throw notFound('repository connection')
    const before = await this.syncLease(lease.api_id)
    if (before) this.access.remove(this.db.syncLeaseDue, repositoryKeys.syncLeaseDue(syncLeaseDue(before), before.api_id))
    this.access.put(this.db.syncLeases, lease.api_id, lease)
    this.access.put(this.db.syncLeaseDue, repositoryKeys.syncLeaseDue(due, lease.api_id), null)
  }

  async removeSyncLease(apiId: string): Promise<boolean> {
    const lease = await this.syncLease(apiId)
    if (!lease) return false
    this.access.remove(this.db.syncLeaseDue, repositoryKeys.syncLeaseDue(syncLeaseDue(lease), apiId))
    this.access.remove(this.db.syncLeases, apiId)
    return true
  }

  async recordSync(apiId: string, connectionVersion: string, lastSync: LastSyncRecord): Promise<boolean> {
    const connection = await this.get(apiId)
    if (!connection || connection.updated_at !== connectionVersion) return false
    this.access.put(this.db.repositoryConnections, apiId, { ...connection, last_sync: lastSync })
    return true
  }

  async claimDelivery(provider: RepositoryProvider, id: string, atMs: number, keep = MAX_DELIVERIES): Promise<boolean> {
    const key = repositoryKeys.webhookDelivery(provider, id)
    if (this.access.get(this.db.webhookDeliveries, key) !== undefined) return false
    this.access.put(this.db.webhookDeliveries, key, atMs)
    this.access.put(this.db.webhookDeliveryOrder, repositoryKeys.webhookDeliveryOrder(atMs, provider, id), null)
    // Forgetting the oldest is commutative (at commit, on the state as it is then): concurrent claims of
    // different ids do not conflict over the window of the newest `keep`.
    const { webhookDeliveries, webhookDeliveryOrder } = this.db
    this.access.atCommit(() => {
      for (const old of [...webhookDeliveryOrder.getKeys({ reverse: true, offset: keep })]) {
        const [, oldProvider, oldId] = old as [number, string, string]
        webhookDeliveryOrder.remove(old)
        webhookDeliveries.remove(repositoryKeys.webhookDelivery(oldProvider, oldId))
      }
    })
    return true
  }
}

const branchKey = (connection: RepositoryConnectionRecord) =>
  repositoryKeys.repositoryBranch(connection.normalized_url, connection.branch, connection.api_id)
