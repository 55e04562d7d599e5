import type { SearchStore } from '../port.js'
import type { SearchTerms } from '../records.js'
import { json, recordOf, type Sql } from './sql.js'

/** `search_terms` (008_mirror.sql): document checksum → SearchTerms. */
export class PgSearch implements SearchStore {
  constructor(private readonly sql: Sql) {}

  getTerms(checksum: string): Promise<SearchTerms | undefined> {
    return recordOf(this.sql, 'SELECT terms AS record FROM search_terms WHERE checksum = $1', [checksum])
  }

  async putTerms(checksum: string, terms: SearchTerms): Promise<void> {
    // Computed from the content alone: a concurrent put of the same key wrote the same value.
    await this.sql.query('INSERT INTO search_terms (checksum, terms) VALUES ($1, $2) ON CONFLICT DO NOTHING', [checksum, json(terms)])
  }
}
