/**
 * The repository connections' tokens and webhook secrets as a SecretHolder, so that `registry secrets
 * status|rotate` and the start-up inventory see them with the other secrets (src/domain/secrets.ts, still
 * LMDB-bound: its holders are read synchronously). Replacements are port transactions on the same environment.
 */
import type { RootDatabase } from 'lmdb'
import { connectionSecretRef, sameStoredSecret, type SecretHolder, type SecretRef, type SecretSlot } from '../../store/secret-slots.js'
import type { RepositoryConnectionRecord, StoredSecret } from '../records.js'
import { environmentOn, type LmdbEnvironment } from './databases.js'
import { optimistic } from './optimistic.js'
import { LmdbRepositories } from './repositories.js'
import type { Key } from './transaction-view.js'

export class LmdbRepositorySecrets implements SecretHolder {
  private readonly environment: LmdbEnvironment

  constructor(root: RootDatabase<any, Key>) {
    this.environment = environmentOn(root)
  }

  * secretSlots(): Iterable<SecretSlot> {
    for (const { value } of this.environment.repositories.repositoryConnections.getRange()) {
      const connection = value as RepositoryConnectionRecord
      for (const field of ['token', 'webhook_secret'] as const) {
        const stored = connection[field]
        if (stored !== null) yield { ref: connectionSecretRef(connection, field), organization_id: connection.organization_id, value: stored }
      }
    }
  }

  replaceSecret(ref: SecretRef, expected: StoredSecret, next: StoredSecret): Promise<boolean> {
    if (ref.holder !== 'repository-connection') return Promise.resolve(false)
    return optimistic(this.environment.root, async (view) => {
      const repositories = new LmdbRepositories(view, this.environment)
      const connection = await repositories.get(ref.api_id)
      if (!connection || connection.id !== ref.connection_id || !sameStoredSecret(connection[ref.field], expected)) return false
      // Its version stays: a sync running meanwhile still records its outcome on it.
      await repositories.put({ ...connection, [ref.field]: next })
      return true
    })
  }
}
