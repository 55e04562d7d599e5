import type { SiteStore } from '../port.js'
import type { LmdbEnvironment } from './databases.js'
import type { LmdbAccess } from './transaction-view.js'

/** The sites section on today's LMDB databases of the feature (`environment.sites`), read as they are. */
export class LmdbSites implements SiteStore {
  constructor(readonly access: LmdbAccess, readonly environment: LmdbEnvironment) {}
}
