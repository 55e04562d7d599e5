/** The shapes of a diff: what the worker answers, the cache keeps, and clients see (docs/changes.md). */
import type { Classification } from './checks.js'

export type { Classification }
export type ChangeKind = 'added' | 'removed' | 'changed'

/** An OpenAPI operation: the method in lower case and the path as the document writes it. */
export interface Operation {
  method: string
  path: string
}

/** One change, as clients see it. */
export interface Change {
  kind: ChangeKind
  /** RFC 6901 pointer into the `to` document; for `removed`, into the `from` document. */
  pointer: string
  /** OpenAPI: the operation the change belongs to. */
  operation: Operation | null
  /** OpenAPI: the component (`schemas/Pet`), for a change that belongs to no operation. */
  component: string | null
  classification: Classification
  /** The check that found it (the table in docs/changes.md). */
  check: string
  message: string
}

/**
 * A change found once and reported at every operation that reaches it: a property removed from a
 * component that 300 operations return is one entry naming those 300 operations, not 300 entries.
 */
export interface DiffEntry {
  kind: ChangeKind
  pointer: string
  classification: Classification
  check: string
  message: string
  /** Indexes into `DiffResult.operations`, in document order; absent for a change of no operation. */
  operations?: number[]
  component?: string
}

export type ChangeCounts = Record<Classification, number>

/**
 * A diff of two documents: entries breaking first, then non-breaking, then annotations, each class in
 * document order. A pure function of the two documents: the cache keeps it by their checksums.
 */
export interface DiffResult {
  operations: Operation[]
  entries: DiffEntry[]
  /** Changes as clients count them: an entry counts once per operation it names. */
  counts: ChangeCounts
}

/** Compare two stored documents of one kind (both sent as text: JSON, canonical JSON or YAML). */
export interface DiffTask {
  op: 'diff'
  kind: 'openapi' | 'jsonschema'
  before: string
  after: string
}

/**
 * The version of the comparison: raised whenever the diff of the same two documents would come out
 * differently (a new check, another message), so that results cached by an older one are not read.
 */
export const DIFF_VERSION = 1
