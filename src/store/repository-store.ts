/**
 * Repository sync's store: each API's repository connection (with its secrets, which never leave the
 * domain), an index from (normalized repository url, branch) to the connected APIs for webhooks, and
 * the webhook deliveries already handled (bounded). Named databases of the index's LMDB environment
 * (`REPOSITORY_DATABASES`); every change is one transaction of the index, and `removeInTransaction`
 * runs inside the transaction of an API's delete.
 */
import type { Database } from 'lmdb'
import type { RegistryIndex } from './interfaces.js'
import { REPOSITORY_DATABASES, repositoryKeys } from './layout.js'
import { LmdbIndex, type IndexKey } from './lmdb-index.js'
import type { ProblemItem } from '../errors.js'
import type { StoredSecret } from './secret-keyring.js'
import { sameStoredSecret, type SecretHolder, type SecretRef, type SecretSlot } from './secret-slots.js'

export type RepositoryProvider = 'github' | 'gitlab'

/** How a sync ended: a new version, the same content again, refused by the lint gate, or failed. */
export type SyncStatus = 'succeeded' | 'unchanged' | 'blocked' | 'failed'

export interface LastSyncRecord {
  status: SyncStatus
  /** What started it: `manual` (POST …/sync) or `webhook`. */
  trigger: 'manual' | 'webhook'
  /** The webhook delivery id, when a webhook started it. */
  delivery: string | null
  started_at: string
  finished_at: string
  /** The commit the file was read from (null when the fetch failed before a commit was known). */
  commit: string | null
  /** The version made current (succeeded) or already current (unchanged). */
  version_id: string | null
  version_number: number | null
  /** Why it failed or was blocked: the problem the upload route would have answered. */
  error: { code: string; detail: string; errors?: ProblemItem[] } | null
}

export interface RepositoryConnectionRecord {
  id: string
  api_id: string
  organization_id: string
  provider: RepositoryProvider
  /** As given (http or https, no credentials). */
  url: string
  /** `host[:port]/path` lowercased, without `.git` or a trailing slash: what webhook payloads are matched on. */
  normalized_url: string
  branch: string
  path: string
  /** Sealed (secret-keyring.ts); never served. */
  token: StoredSecret | null
  webhook_secret: StoredSecret | null
  created_at: string
  updated_at: string
  last_sync: LastSyncRecord | null
}

/** Where a connection's secret is: its additional authenticated data names the API, the connection and the field. */
export function connectionSecretRef(connection: Pick<RepositoryConnectionRecord, 'api_id' | 'id'>, field: 'token' | 'webhook_secret'): SecretRef {
  return { holder: 'repository-connection', api_id: connection.api_id, connection_id: connection.id, field }
}

/** What the domain needs of the store. */
export interface RepositoryStore extends SecretHolder {
  get(apiId: string): RepositoryConnectionRecord | undefined
  /** Every connection to a repository (any branch), by normalized url. */
  byRepository(normalizedUrl: string): RepositoryConnectionRecord[]
  /** An organization's connections (a scan of every connection: there are few, one per synced API at most). */
  connectionsOf(organizationId: string): RepositoryConnectionRecord[]
  /**
   * Creates or replaces an API's connection in one transaction: `guard` runs first inside it (the API
   * still exists), then `build` is given the connection as committed (undefined when there is none)
   * and answers the new one. Answers it, and whether it was created.
   */
  put(
    apiId: string, build: (before: RepositoryConnectionRecord | undefined) => RepositoryConnectionRecord, guard?: () => void,
  ): Promise<{ connection: RepositoryConnectionRecord; created: boolean }>
  /** Answers false when the API had no connection. */
  remove(apiId: string): Promise<boolean>
  /** Removes an API's connection; must run inside a write transaction (an API's delete). */
  removeInTransaction(apiId: string): void
  /**
   * Records a sync's outcome on the connection, unless the connection is gone or was replaced since
   * the sync started (its `updated_at` is no longer `connectionVersion`).
   */
  recordSync(apiId: string, connectionVersion: string, lastSync: LastSyncRecord): Promise<void>
  /**
   * Remembers a webhook delivery id; answers false when it was seen before. Keeps the newest
   * `MAX_DELIVERIES` (by default), forgetting older ones.
   */
  claimDelivery(provider: RepositoryProvider, id: string, atMs: number): Promise<boolean>
}

/** Webhook deliveries remembered: far more than a provider redelivers, small enough to never matter. */
export const MAX_DELIVERIES = 10_000

type Key = IndexKey
type Databases = { -readonly [name in keyof typeof REPOSITORY_DATABASES]: Database<any, Key> }

/** The LMDB implementation: the index's environment, its transactions. */
export class LmdbRepositoryStore implements RepositoryStore {
  private readonly db: Databases

  constructor(private readonly index: LmdbIndex, private readonly maxDeliveries = MAX_DELIVERIES) {
    this.db = index.databases(REPOSITORY_DATABASES)
  }

  /** The store of a registry index; repository sync needs the LMDB index (named databases, shared transactions). */
  static of(index: RegistryIndex): LmdbRepositoryStore {
    return new LmdbRepositoryStore(LmdbIndex.require(index, 'repository connections'))
  }

  get(apiId: string): RepositoryConnectionRecord | undefined {
    return this.db.repositoryConnections.get(apiId)
  }

  byRepository(normalizedUrl: string): RepositoryConnectionRecord[] {
    const found: RepositoryConnectionRecord[] = []
    for (const key of this.db.repositoryBranches.getKeys(repositoryKeys.repositoryRange(normalizedUrl))) {
      const connection = this.get((key as string[])[2])
      if (connection) found.push(connection)
    }
    return found
  }

  connectionsOf(organizationId: string): RepositoryConnectionRecord[] {
    return [...this.db.repositoryConnections.getRange().map(({ value }) => value as RepositoryConnectionRecord)]
      .filter((connection) => connection.organization_id === organizationId)
  }

  put(
    apiId: string, build: (before: RepositoryConnectionRecord | undefined) => RepositoryConnectionRecord, guard?: () => void,
  ): Promise<{ connection: RepositoryConnectionRecord; created: boolean }> {
    return this.index.transaction(() => {
      guard?.()
      const before = this.get(apiId)
      const connection = build(before)
      if (connection.api_id !== apiId) throw new Error('a connection is stored under its own API')
      if (before) this.unlinkBranch(before)
      this.db.repositoryConnections.put(apiId, connection)
      this.db.repositoryBranches.put(repositoryKeys.repositoryBranch(connection.normalized_url, connection.branch, apiId), null)
      return { connection, created: before === undefined }
    })
  }

  remove(apiId: string): Promise<boolean> {
    return this.index.transaction(() => {
      const existed = this.get(apiId) !== undefined
      this.removeInTransaction(apiId)
      return existed
    })
  }

  removeInTransaction(apiId: string): void {
    const connection = this.get(apiId)
    if (!connection) return
    this.unlinkBranch(connection)
    this.db.repositoryConnections.remove(apiId)
  }

  private unlinkBranch(connection: RepositoryConnectionRecord): void {
    this.db.repositoryBranches.remove(repositoryKeys.repositoryBranch(connection.normalized_url, connection.branch, connection.api_id))
  }

  async recordSync(apiId: string, connectionVersion: string, lastSync: LastSyncRecord): Promise<void> {
    await this.index.transaction(() => {
      const connection = this.get(apiId)
      if (!connection || connection.updated_at !== connectionVersion) return
      this.db.repositoryConnections.put(apiId, { ...connection, last_sync: lastSync })
    })
  }

  *secretSlots(): Iterable<SecretSlot> {
    for (const { value } of this.db.repositoryConnections.getRange()) {
      const connection = value as RepositoryConnectionRecord
      for (const field of ['token', 'webhook_secret'] as const) {
        const stored = connection[field]
        if (stored !== null) yield { ref: connectionSecretRef(connection, field), organization_id: connection.organization_id, value: stored }
      }
    }
  }

  replaceSecret(ref: SecretRef, expected: StoredSecret, next: StoredSecret): Promise<boolean> {
    return this.index.transaction(() => {
      if (ref.holder !== 'repository-connection') return false
      const connection = this.get(ref.api_id)
      if (!connection || connection.id !== ref.connection_id || !sameStoredSecret(connection[ref.field], expected)) return false
      this.db.repositoryConnections.put(ref.api_id, { ...connection, [ref.field]: next })
      return true
    })
  }

  claimDelivery(provider: RepositoryProvider, id: string, atMs: number): Promise<boolean> {
    return this.index.transaction(() => {
      const key = repositoryKeys.webhookDelivery(provider, id)
      if (this.db.webhookDeliveries.get(key) !== undefined) return false
      this.db.webhookDeliveries.put(key, atMs)
      this.db.webhookDeliveryOrder.put(repositoryKeys.webhookDeliveryOrder(atMs, provider, id), null)
      // Newest first, past the newest `maxDeliveries`: the oldest, to forget.
      const forget = [...this.db.webhookDeliveryOrder.getKeys({ reverse: true, offset: this.maxDeliveries })]
      for (const old of forget) {
        const [, oldProvider, oldId] = old as [number, string, string]
        this.db.webhookDeliveryOrder.remove(old)
        this.db.webhookDeliveries.remove(repositoryKeys.webhookDelivery(oldProvider, oldId))
      }
      return true
    })
  }
}
