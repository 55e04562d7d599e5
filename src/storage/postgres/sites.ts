import type { SiteStore } from '../port.js'
import type { Sql } from './sql.js'

/** The sites section on PostgreSQL. */
export class PgSites implements SiteStore {
  constructor(readonly sql: Sql) {}
}
