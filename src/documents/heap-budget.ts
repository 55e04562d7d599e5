/**
 * What a document worker accepts, measured against its heap. V8 can stop a worker that runs out of
 * heap in JavaScript, but one large allocation it cannot interrupt (JSON.parse of a big text, a
 * structured clone of a big object into the worker, stringifying the result) overshoots the small
 * slack Node gives a worker at its limit, and V8 then aborts the whole process ("Reached heap limit"),
 * every request with it. So a task's documents may take at most 1/HEAP_SHARE of the worker's heap as
 * text: parsing one into objects takes up to about 13 times its text (`[0,0,…]`, `[{},{},…]`), and the
 * canonical copy, validation and the heap a worker keeps between tasks need the rest. Past it the task
 * is refused before it reaches a worker (413 payload_too_large); measured: with a 64 MB heap, every
 * shape of document up to 2 MB ends as a result or a clean lint_resource_limit, a 16 MB one aborted.
 */
import { RegistryError } from '../errors.js'

const HEAP_SHARE = 32
const MB = 1024 * 1024

/** The largest document text (bytes, or UTF-16 code units) a task may carry to a worker of `heapMb`. */
export const maxDocumentBytes = (heapMb: number): number => Math.floor((heapMb * MB) / HEAP_SHARE)

/** The fields of a task that hold document text: raw bodies, documents given as text, stored texts. */
const TEXT_FIELDS = ['body', 'document', 'canonical', 'text', 'before', 'after'] as const

const weight = (value: unknown): number =>
  typeof value === 'string' ? value.length : value instanceof Uint8Array ? value.byteLength : 0

/**
 * What a task's documents weigh as text, the registry schemas it bundles included. A document given
 * as an object is not counted: the body it was parsed from is bounded by its route (see resource-routes).
 */
export function documentBytes(task: object): number {
  const fields = task as Record<string, unknown>
  let bytes = 0
  for (const field of TEXT_FIELDS) bytes += weight(fields[field])
  const bundled = fields.registryDocuments
  if (bundled && typeof bundled === 'object') for (const schema of Object.values(bundled)) bytes += weight((schema as { text?: unknown }).text)
  return bytes
}

const megabytes = (bytes: number): string => `${(bytes / MB).toFixed(1)} MB`

/** Refuses a task whose documents would not fit a worker of `heapMb` safely, before it is sent. */
export function assertFitsHeap(task: object, heapMb: number): void {
  const bytes = documentBytes(task)
  const max = maxDocumentBytes(heapMb)
  if (bytes <= max) return
  throw new RegistryError('payload_too_large',
    `the document is ${megabytes(bytes)}; this server validates documents of at most ${megabytes(max)} `
    + `(1/${HEAP_SHARE} of a document worker's ${heapMb} MB heap, REGISTRY_LINT_MEMORY_MB); nothing was stored`)
}
