import type { SearchStore } from '../port.js'
import type { SearchTerms } from '../records.js'
import type { SearchDatabases } from './databases.js'
import type { LmdbAccess } from './transaction-view.js'

/** Today's `search-terms` database: document checksum → SearchTerms. */
export class LmdbSearch implements SearchStore {
  constructor(private readonly access: LmdbAccess, private readonly db: SearchDatabases) {}

  async getTerms(checksum: string): Promise<SearchTerms | undefined> {
    return this.access.get(this.db.searchTerms, checksum)
  }

  async putTerms(checksum: string, terms: SearchTerms): Promise<void> {
    // A blind write: computed from the content alone, so a concurrent put of the same key wrote the same.
    this.access.put(this.db.searchTerms, checksum, terms)
  }
}
