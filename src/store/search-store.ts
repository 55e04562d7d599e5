/**
 * Search's store: what search finds in each stored document, by its checksum (a pure function of the
 * document, read once in a worker), and the organization's changes since a point of the mirror's
 * history, which keeps the in-memory search index up to date with writes of any process.
 */
import type { Database } from 'lmdb'
import type { SearchTerms } from '../documents/search-terms.js'
import type { RegistryIndex } from './interfaces.js'
import { SEARCH_DATABASES } from './layout.js'
import { LmdbIndex, type IndexKey } from './lmdb-index.js'
import type { HistoryEntry } from './mirror-store.js'

export class SearchStore {
  private readonly terms: Database<SearchTerms, IndexKey>

  constructor(private readonly index: LmdbIndex) {
    this.terms = index.databases(SEARCH_DATABASES).searchTerms
  }

  static of(index: RegistryIndex): SearchStore {
    return new SearchStore(LmdbIndex.require(index, 'search'))
  }

  getTerms(checksum: string): SearchTerms | undefined {
    return this.terms.get(checksum)
  }

  putTerms(checksum: string, terms: SearchTerms): Promise<boolean> {
    return this.terms.put(checksum, terms)
  }

  /** The sequence number of the organization's latest change (0 before any). */
  lastChange(organizationId: string): number {
    return this.index.mirror.lastSeqOf(organizationId)
  }

  /** The organization's changes after `seq`, oldest first. */
  changesSince(organizationId: string, seq: number): Iterable<HistoryEntry> {
    return this.index.mirror.historyOf(organizationId, seq + 1)
  }
}
