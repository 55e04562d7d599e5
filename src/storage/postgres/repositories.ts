import type { RepositoryStore } from '../port.js'
import type { Sql } from './sql.js'

/** The repositories section on PostgreSQL. */
export class PgRepositories implements RepositoryStore {
  constructor(readonly sql: Sql) {}
}
