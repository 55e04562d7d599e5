/**
 * UNTIL DELETION MOVES ONTO THE PORT: what is left of repository sync's LMDB store. Connections live on
 * the storage port (src/storage/features/repositories.ts, its LMDB adapter on these same databases);
 * only an API's deletion still commits through `LmdbIndex.deleteResource`, whose delete hooks run
 * synchronously inside that index transaction, so the connection is removed there by this function.
 * When deletion becomes a port transaction it calls `tx.repositories.remove(apiId)` instead, and this
 * file goes.
 */
import { REPOSITORY_DATABASES, repositoryKeys } from './layout.js'
import type { LmdbIndex } from './lmdb-index.js'

/**
 * A delete hook's remover of an API's repository connection and its webhook index entry, on the index's
 * databases; it must run inside one of the index's write transactions (an API's delete).
 */
export function repositoryConnectionRemover(index: LmdbIndex): (apiId: string) => void {
  const db = index.databases(REPOSITORY_DATABASES)
  return (apiId) => {
    const connection: { normalized_url: string; branch: string } | undefined = db.repositoryConnections.get(apiId)
    if (!connection) return
    db.repositoryBranches.remove(repositoryKeys.repositoryBranch(connection.normalized_url, connection.branch, apiId))
    db.repositoryConnections.remove(apiId)
  }
}
