/**
 * The documents layer: parse, canonicalize, validate and lint. Everything here runs inside worker
 * threads (see pool.ts); these are the shapes that cross the thread boundary.
 */
import type { ProblemItem, ErrorCode } from '../errors.js'
import type { DiffResult, DiffTask } from './diff/types.js'
import type { ConvertedFrom } from './import-formats.js'
import type { Position } from './positions.js'
import type { RegistryDocuments } from './registry-refs.js'

export type { ConvertedFrom, DiffResult, DiffTask }

export type DocumentKind = 'openapi' | 'jsonschema' | 'ruleset'
export type DocumentFormat = 'json' | 'yaml'
export type Severity = 'error' | 'warn' | 'info' | 'hint'

export interface Finding {
  code: string
  message: string
  severity: Severity
  path: (string | number)[]
}

/** A finding in an answer about a document just sent: where it is in the text sent, when there is one. */
export type LocatedFinding = Finding & Partial<Position>

export type LintCounts = Record<Severity, number>

/** A compiled-once ruleset as the worker receives it: its version checksum is the cache key. */
export interface RulesetInput {
  checksum: string
  /** The parsed ruleset document (JSON-compatible object). */
  document: unknown
}

/** What a worker answers instead of throwing, so the code and items survive the thread boundary. */
export interface TaskError {
  error: { code: ErrorCode; detail: string; errors?: ProblemItem[] }
}

/**
 * How a raw upload body is read (docs/api.md, "Uploading a document"):
 * - `json` (`application/json`): a JSON object with a `document` member is the envelope
 *   `{ "document": … }` and may have no other member; any other JSON is the document itself;
 * - `document` (the YAML and OpenAPI / JSON Schema media types, a multipart field): the document's
 *   own text, JSON or YAML;
 * - `untyped` (no Content-Type): as `json` when the body is JSON, else as `document`.
 */
export type BodyShape = 'json' | 'document' | 'untyped'

/**
 * Step 1 of every upload: turn what the client sent into bytes to store and the canonical checksum.
 * Exactly one of `body` (raw request text) or `document` (an already-parsed `document` field) is given.
 */
export interface DigestTask {
  op: 'digest'
  /** Raw request body: text, or UTF-8 bytes (already checked to be UTF-8), read as `shape` says. */
  body?: string | Uint8Array
  /** How `body` is read; `document` when absent. */
  shape?: BodyShape
  /** The `document` member of a parsed request body: a JSON/YAML string or an object. */
  document?: unknown
  /**
   * What the document is uploaded as. `openapi` (an API): a Swagger 2.0 document or a Postman
   * collection v2.0/v2.1 is converted to OpenAPI 3 first (import.ts), and the converted document is
   * what is digested and stored. Other kinds, or absent: the document as sent.
   */
  kind?: DocumentKind
  /** When the canonical checksum equals this, answer `{ unchanged: true }` and do no more work. */
  currentChecksum?: string | null
  /**
   * The `raw` of a body that digested to `currentChecksum` before. A body with the same `raw` is
   * answered unchanged before it is parsed: an identical re-upload (a CI job publishing the same file
   * on every run) costs one SHA-256 instead of a parse and a canonical form (seconds for large YAML).
   */
  currentRaw?: string | null
}

/**
 * Text that crosses between threads as UTF-8 bytes, moved rather than copied: a structured clone of a
 * string of several megabytes costs tens of milliseconds on each side, moving bytes about one.
 */
export type TextBytes = Uint8Array

/** A digested document, `Text` being a string in the worker and TextBytes once it crossed. */
export interface Digested<Text extends string | TextBytes> {
  unchanged: false
  /** With a `body`: its shape and SHA-256, the key of `currentRaw` (see DigestTask). */
  raw?: string
  /** `sha256:` + 64 hex of the canonical JSON. */
  checksum: string
  format: DocumentFormat
  /** The bytes to store: the upload's own text (YAML text, JSON text, or JSON.stringify of an object). */
  text: Text
  /** `text` is JSON.stringify of an object (an envelope's object member): no text the client wrote. */
  serialized?: true
  /**
   * The document sent was this, and was converted to OpenAPI 3 (DigestTask's `kind`): `text`, the
   * checksum and everything after are the converted document's, in the format of the one sent.
   */
  convertedFrom?: ConvertedFrom
  /** SHA-256 hex of `text` as UTF-8: names the blob together with the canonical checksum. */
  digest: string
  /** Canonical JSON (sorted keys, no whitespace); later steps parse this instead of the original. */
  canonical: Text
  /** `openapi`, `info.title`, `info.version` when present (empty strings otherwise). */
  summary: { openapi: string; title: string; version: string }
  /** Registry schemas the document refers to (`/@org/schemas/slug/…`), when it refers to any. */
  registryRefs?: string[]
}

type Unchanged = { unchanged: true; checksum: string; raw?: string }

/** A digest as the worker computes it. */
export type DigestResult = Unchanged | Digested<string>

/** A digest as the pool answers it: its texts moved to the server as bytes. */
export type DigestAnswer = Unchanged | Digested<TextBytes>

/** Step 2: validate the document as its kind and, when `ruleset` is given, lint it. */
export interface CheckTask {
  op: 'check'
  kind: DocumentKind
  /**
   * The document's canonical JSON. With `checksum` (the canonical's, as its digest answered it), the
   * pool first sends the task without it to the worker that digested the document, which still holds
   * it; a worker that does not hold it answers `canonicalMissing`, and the task is sent again with it.
   */
  canonical: string | TextBytes
  checksum?: string
  /** Skip validation (already known valid), only lint. */
  skipValidation?: boolean
  ruleset?: RulesetInput
  /** OpenAPI: the registry schemas it refers to; the bundled document is what is validated and linted. */
  registryDocuments?: RegistryDocuments
  /** The document is the OpenAPI 3 conversion of one of these: its problems say so. */
  convertedFrom?: ConvertedFrom
  /**
   * What the document is a version of (a resource id), so that its lint may reuse the last lint of the
   * same resource with the same ruleset (incremental-lint.ts). Kept by the pool; never sent to a worker.
   */
  lineage?: string
  /** The pool's: the memo of that last lint. */
  previousLint?: LintMemoText
}

export interface CheckResult {
  /** The worker's, for the pool: the task came without its canonical JSON, and this worker does not hold it. */
  canonicalMissing?: true
  /** OpenAPI only: `openapi`, `info.title`, `info.version`. */
  summary?: { openapi: string; title: string; version: string }
  /** Present when a ruleset was given. Sorted by path, then code. */
  findings?: Finding[]
  /** The worker's, for the pool: what the next version's lint may reuse. */
  lintMemo?: LintMemoText
  /** Present when the lint reused an earlier version's findings: units reused and linted again. */
  relinted?: { reused: number; linted: number }
}

/**
 * A LintMemo as JSON: memos cross between the pool and its workers as text. A structured clone of one
 * (thousands of small objects) is slow: 75 to 126 ms each way for the 4.7 MB amazonaws ec2 document's,
 * whose JSON is 0.4 MB and is written and read in a few.
 */
export type LintMemoText = string

/** What a lint leaves for the next version's lint: each unit's results by route key (incremental-lint.ts). */
export interface LintMemo {
  /** The ruleset version's checksum. */
  ruleset: string
  /** The frame's hash: every unit's results depend on it. */
  frame: string
  routes: Record<string, KeptResult[]>
}

/** A result of Spectral's kept for reuse (without its range: findings have none). */
export interface KeptResult {
  code: string | number
  message: string
  severity: number
  path: (string | number)[]
  source?: string
}

/** Lint any document with a ruleset, without validating it as OpenAPI. */
export interface LintTask {
  op: 'lint'
  canonical: string | TextBytes
  ruleset: RulesetInput
}

export interface LintResult {
  findings: Finding[]
}

/** Convert stored text to the other format for a read (`?format=yaml` on a JSON upload, and back). */
export interface ConvertTask {
  op: 'convert'
  text: string
  from: DocumentFormat
  to: DocumentFormat
}

export interface ConvertResult {
  text: string
}

/** A stored OpenAPI document with its registry schemas bundled in, in the format asked for. */
export interface BundleTask {
  op: 'bundle'
  text: string
  to: DocumentFormat
  registryDocuments: RegistryDocuments
}

export interface BundleResult {
  text: string
  /** The canonical checksum of the bundled document (its ETag). */
  checksum: string
}

/** Where paths lie in a document's text as sent (positions.ts): the findings of an answer, placed. */
export interface LocateTask {
  op: 'locate'
  text: string | TextBytes
  /** The format the text was parsed as. */
  format: DocumentFormat
  paths: (string | number)[][]
}

export interface LocateResult {
  /** One per path, in order. */
  positions: Position[]
}

/** What search finds in a stored document (search-terms.ts). */
export interface TermsTask {
  op: 'terms'
  text: string
}

/** A check as sent to a worker: without its canonical JSON when the worker is expected to hold it (see CheckTask). */
export type SentCheckTask = Omit<CheckTask, 'canonical'> & { canonical?: CheckTask['canonical'] }

export type Task = DigestTask | SentCheckTask | LintTask | ConvertTask | BundleTask | DiffTask | TermsTask | LocateTask
