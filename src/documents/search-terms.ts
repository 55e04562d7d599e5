/**
 * What search finds in a document (issue 17, item 11): its title and description, and for OpenAPI its
 * paths, operation ids, summaries and tags. Read once per document in a worker and kept by checksum;
 * bounded so that a huge document costs the search index no more than a large one.
 */

export interface SearchTerms {
  title: string
  description: string
  /** Paths, operation ids, summaries and tag names, one string each. */
  terms: string[]
}

/** At most this many strings of one document, each at most MAX_LENGTH characters. */
const MAX_TERMS = 4_000
const MAX_LENGTH = 200
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const text = (value: unknown): string => (typeof value === 'string' ? value.slice(0, MAX_LENGTH) : '')

export function searchTermsOf(document: unknown): SearchTerms {
  const doc = isPlainObject(document) ? document : {}
  const info = isPlainObject(doc.info) ? doc.info : doc
  const found = new Set<string>()
  const add = (value: unknown) => { if (found.size < MAX_TERMS && text(value)) found.add(text(value)) }
  if (Array.isArray(doc.tags)) for (const tag of doc.tags) if (isPlainObject(tag)) add(tag.name)
  for (const group of [doc.paths, doc.webhooks]) {
    if (!isPlainObject(group)) continue
    for (const [path, item] of Object.entries(group)) {
      add(path)
      if (!isPlainObject(item)) continue
      for (const method of METHODS) {
        const operation = item[method]
        if (!isPlainObject(operation)) continue
        add(operation.operationId)
        add(operation.summary)
        if (Array.isArray(operation.tags)) for (const tag of operation.tags) add(tag)
      }
    }
  }
  return { title: text(info.title), description: text(info.description), terms: [...found] }
}
