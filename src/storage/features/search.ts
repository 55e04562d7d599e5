/**
 * The port's search section (issue 17, item 11): what search finds in each stored document (its title,
 * description, paths, operation ids…), kept by the document's checksum. A pure function of the content,
 * read once in a worker and never changed, so a put is a blind write that conflicts with nothing (like
 * `results`). The in-memory search index follows an organization's changes through the mirror's
 * history (`mirror.history`, `mirror.lastSeq`).
 */
import type { SearchTerms } from '../records.js'

export interface SearchReader {
  getTerms(checksum: string): Promise<SearchTerms | undefined>
}

export interface SearchStore extends SearchReader {
  /** Inserts, or leaves what is there (the same terms: they are computed from the content alone). */
  putTerms(checksum: string, terms: SearchTerms): Promise<void>
}
