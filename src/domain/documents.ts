/**
 * How the domain reaches the documents layer: the worker pool, seen through the task shapes only,
 * so tests and other runtimes can supply their own.
 */
import type {
  BodyShape, BundleResult, BundleTask, CheckResult, CheckTask, ConvertResult, ConvertTask, DiffResult, DiffTask, DigestAnswer, DigestTask, DocumentKind,
  LintResult, LintTask, LocateResult, LocateTask, TermsTask,
} from '../documents/types.js'
import type { SearchTerms } from '../documents/search-terms.js'
import type { ResourceKind } from '../storage/registry-records.js'
import type { Tenant } from '../documents/fair-scheduler.js'

/**
 * Who a task is for: the workers are shared fairly between organizations and keys. The HTTP layer
 * names the request's key; the domain hands it down to every task the request needs (undefined:
 * background work, the CLI, which share one tenant).
 */
export { companionOf, type Tenant } from '../documents/fair-scheduler.js'

type Input<T> = Omit<T, 'op'>

export interface DocumentProcessor {
  digest(task: Input<DigestTask>, tenant?: Tenant): Promise<DigestAnswer>
  check(task: Input<CheckTask>, tenant?: Tenant): Promise<CheckResult>
  lint(task: Input<LintTask>, tenant?: Tenant): Promise<LintResult>
  convert(task: Input<ConvertTask>, tenant?: Tenant): Promise<ConvertResult>
  bundle(task: Input<BundleTask>, tenant?: Tenant): Promise<BundleResult>
  /** Compares two versions' documents (off the event loop, like everything here). */
  diff(task: Input<DiffTask>, tenant?: Tenant): Promise<DiffResult>
  /** Where paths lie in a document's text as sent: the line and column of an answer's findings. */
  locate(task: Input<LocateTask>, tenant?: Tenant): Promise<LocateResult>
  /** What search finds in a stored document (its title, paths, operations…). */
  terms(task: Input<TermsTask>, tenant?: Tenant): Promise<SearchTerms>
  close(): Promise<void>
  /** False when no worker can take a task (closed, or none running); absent: always ready. */
  readonly ready?: boolean
  /** Tasks waiting for a worker. */
  readonly queueSize?: number
  /** The largest document (text, bytes) a task may carry; absent: no limit of its own. */
  readonly maxDocumentBytes?: number
}

export const DOCUMENT_KIND: Record<ResourceKind, DocumentKind> = {
  api: 'openapi',
  schema: 'jsonschema',
  ruleset: 'ruleset',
}

/**
 * What the client sent as a document: the raw request body (text, or UTF-8 bytes that move to the
 * worker and must not be read after), or the `document` member of a parsed body.
 */
export type DocumentInput = { body: string | Uint8Array; shape: BodyShape } | { document: unknown }
