/** Building a diff's result (entries shared by operations) and reading it back as a list of changes. */
import type { LocalChange } from './schema-graph.js'
import type { Change, ChangeCounts, Classification, DiffEntry, DiffResult, Operation } from './types.js'

const RANK: Record<Classification, number> = { breaking: 0, 'non-breaking': 1, annotation: 2 }

export function emptyCounts(): ChangeCounts {
  return { breaking: 0, 'non-breaking': 0, annotation: 0 }
}

/** Collects changes; the same change reached from many operations becomes one entry naming them all. */
export class DiffBuilder {
  readonly #operations: Operation[] = []
  readonly #operationIndex = new Map<string, number>()
  readonly #entries = new Map<string, DiffEntry>()

  /** The index of an operation, added on first use. */
  operation(operation: Operation): number {
    const key = `${operation.method} ${operation.path}`
    let index = this.#operationIndex.get(key)
    if (index === undefined) {
      index = this.#operations.push(operation) - 1
      this.#operationIndex.set(key, index)
    }
    return index
  }

  /** A change at an operation; `where` (a response, a parameter) prefixes its message. */
  atOperation(operation: number, change: LocalChange, where: string): void {
    const entry = this.#entry(change, where === '' ? change.message : `${where}: ${change.message}`)
    const list = (entry.operations ??= [])
    if (list[list.length - 1] !== operation && !list.includes(operation)) list.push(operation)
  }

  /** A change of the document itself, or of a component no operation uses. */
  atDocument(change: LocalChange, component?: string): void {
    const entry = this.#entry(change, change.message)
    if (component !== undefined) entry.component = component
  }

  #entry(change: LocalChange, message: string): DiffEntry {
    const key = `${change.check}\u0000${change.classification}\u0000${change.pointer}\u0000${message}`
    let entry = this.#entries.get(key)
    if (!entry) {
      entry = { kind: change.kind, pointer: change.pointer, classification: change.classification, check: change.check, message }
      this.#entries.set(key, entry)
    }
    return entry
  }

  build(): DiffResult {
    const entries = [...this.#entries.values()].sort((x, y) => RANK[x.classification] - RANK[y.classification])
    const counts = emptyCounts()
    for (const entry of entries) counts[entry.classification] += entry.operations?.length ?? 1
    return { operations: this.#operations, entries, counts }
  }
}

/** How many changes clients see (an entry counts once per operation), optionally of one class. */
export function changeTotal(result: DiffResult, classification?: Classification): number {
  if (classification) return result.counts[classification]
  return result.counts.breaking + result.counts['non-breaking'] + result.counts.annotation
}

/**
 * A page of the changes clients see: breaking first, then non-breaking, then annotations; an entry
 * shared by operations is one change per operation. Skips whole entries without listing them.
 */
export function changesPage(result: DiffResult, offset: number, limit: number, classification?: Classification): Change[] {
  const page: Change[] = []
  let skip = offset
  for (const entry of result.entries) {
    if (page.length >= limit) break
    if (classification && entry.classification !== classification) continue
    const operations = entry.operations ?? [null]
    if (skip >= operations.length) {
      skip -= operations.length
      continue
    }
    for (let i = skip; i < operations.length && page.length < limit; i++) {
      const index = operations[i]
      page.push({
        kind: entry.kind,
        pointer: entry.pointer,
        operation: index === null ? null : result.operations[index],
        component: entry.component ?? null,
        classification: entry.classification,
        check: entry.check,
        message: entry.message,
      })
    }
    skip = 0
  }
  return page
}
