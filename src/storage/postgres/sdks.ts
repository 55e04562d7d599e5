import type { SdkStore } from '../port.js'
import type { Sql } from './sql.js'

/** The sdks section on PostgreSQL. */
export class PgSdks implements SdkStore {
  constructor(readonly sql: Sql) {}
}
