import type { RepositoryStore } from '../port.js'
import type { LmdbEnvironment } from './databases.js'
import type { LmdbAccess } from './transaction-view.js'

/** The repositories section on today's LMDB databases of the feature (`environment.repositories`), read as they are. */
export class LmdbRepositories implements RepositoryStore {
  constructor(readonly access: LmdbAccess, readonly environment: LmdbEnvironment) {}
}
