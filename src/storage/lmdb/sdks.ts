import type { SdkStore } from '../port.js'
import type { LmdbEnvironment } from './databases.js'
import type { LmdbAccess } from './transaction-view.js'

/** The sdks section on today's LMDB databases of the feature (`environment.sdks`), read as they are. */
export class LmdbSdks implements SdkStore {
  constructor(readonly access: LmdbAccess, readonly environment: LmdbEnvironment) {}
}
