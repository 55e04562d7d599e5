import { createHash } from 'node:crypto'
/**
 * The piscina worker: every parse, validation and lint runs here, never on the server's main thread.
 * Answers `TaskError` objects for RegistryErrors (so the code and items cross the thread boundary);
 * anything unexpected is thrown and becomes an `internal` error in the pool.
 */
import { isAscii } from 'node:buffer'
import { performance } from 'node:perf_hooks'
import { getHeapStatistics } from 'node:v8'
import { isMainThread, parentPort, threadId } from 'node:worker_threads'
import { workerData } from 'piscina'
import { RegistryError } from '../errors.js'
import type { ProblemItem } from '../errors.js'
import { canonicalJson, checksumOf } from './canonical.js'
import { convertText, yamlText } from './convert.js'
import { diffJsonSchema } from './diff/jsonschema.js'
import { diffOpenApi } from './diff/openapi.js'
import { convertToOpenApi } from './import.js'
import { convertibleFormatOf, CONVERTED_FROM_NAMES, type ConvertedFrom } from './import-formats.js'
import { limitHeapGrowth } from './heap-growth.js'
import { searchTermsOf, type SearchTerms } from './search-terms.js'
import { validateJsonSchema, warmJsonSchema } from './jsonschema.js'
import { lintDocument } from './lint.js'
import { relintCut, relintDocument, unitsNotIn, type RelintCut } from './incremental-lint.js'
import { partialDocument } from './lint-units.js'
import { validateOpenApi, warmOpenApi } from './openapi.js'
import { assertDocumentShape, parseDocumentText } from './parse.js'
import { encodePointer } from './pointer.js'
import { locatePaths } from './positions.js'
import { bundleRegistryRefs, mayHaveRegistryRefs, registryRefTargets, type RegistryDocuments } from './registry-refs.js'
import { compileRuleset, warmRulesets } from './ruleset.js'
import { bufferOf, moving, ownBytes, textOf, type Movable } from './text-bytes.js'
import type {
  BodyShape,
  BundleResult,
  BundleTask,
  CheckResult,
  CheckTask,
  ConvertResult,
  ConvertTask,
  DiffResult,
  DiffTask,
  DigestAnswer,
  DigestResult,
  DigestTask,
  DocumentFormat,
  DocumentKind,
  LintMemo,
  LintResult,
  LintTask,
  LocateResult,
  LocateTask,
  RulesetInput,
  SentCheckTask,
  Task,
  TaskError,
} from './types.js'

/** Compiles the validators and loads Spectral: what a worker does once, before its first upload. */
export interface WarmTask {
  op: 'warm'
}

export type WorkerTask = Task | WarmTask

/** Posted by a worker when it starts a run, so the pool starts that run's clock (see pool.ts). */
export interface StartedMessage {
  documentTaskStarted: number
}

/** The phases of a task that are timed (seconds) and reported to the pool after every task. */
export type WorkPhase = 'digest' | 'validate' | 'lint' | 'convert' | 'diff' | 'locate'

/**
 * Posted by a worker after every task: how long its phases took and how large its heap is, so that
 * the pool can report the times and retire a worker that grew (see pool.ts).
 */
export interface StatsMessage {
  documentWorkerStats: {
    threadId: number
    heapUsedBytes: number
    phases: Partial<Record<WorkPhase, number>>
  }
}

export type WorkerResult =
  DigestAnswer | Movable<DigestAnswer> | CheckResult | LintResult | ConvertResult | BundleResult | DiffResult | SearchTerms | LocateResult | { warmed: true } | TaskError

/** What a worker compiles and loads before its first upload needs it, in steps of at most ~0.5 s. */
const WARM_STEPS: (() => void)[] = [() => warmOpenApi('3.0'), () => warmOpenApi('3.1'), () => warmOpenApi('3.2'), warmJsonSchema, warmRulesets]

function warm(): void {
  for (const step of WARM_STEPS) step()
}

/**
 * Warms up one step per turn of the event loop, so the worker is ready at once and a task that
 * arrives meanwhile waits for one step at most, not for all of them. A failing step is left to
 * fail again, visibly, in the task that needs it.
 */
function warmInBackground(): void {
  const steps = [...WARM_STEPS]
  const next = (): void => {
    const step = steps.shift()
    if (!step) return
    try {
      step()
    } catch {
      /* see above */
    }
    setImmediate(next)
  }
  setImmediate(next)
}

/** Phase times of the task being run (a worker runs one task at a time). */
let phases: Partial<Record<WorkPhase, number>> = {}

function timed<T>(phase: WorkPhase, work: () => T): T {
  const started = performance.now()
  try {
    return work()
  } finally {
    phases[phase] = (phases[phase] ?? 0) + (performance.now() - started) / 1000
  }
}

async function timedLint<T>(work: () => Promise<T>): Promise<T> {
  const started = performance.now()
  try {
    return await work()
  } finally {
    phases.lint = (phases.lint ?? 0) + (performance.now() - started) / 1000
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** A document read from an upload; `text` is null when it must be serialized (an object in an envelope). */
type ParsedBody = { document: unknown; format: DocumentFormat; text: string | null }

/** What `document` holds: a JSON/YAML string is parsed; an object is taken as JSON. */
function fromMember(document: unknown): ParsedBody {
  if (typeof document === 'string') {
    const parsed = parseDocumentText(document)
    return { ...parsed, text: document }
  }
  if (isPlainObject(document)) return { document, format: 'json', text: null }
  if (document === undefined) {
    throw new RegistryError('invalid_request', "'document' is required", [{ message: 'required field', path: ['document'] }])
  }
  const what = document === null ? 'null' : Array.isArray(document) ? 'an array' : `a ${typeof document}`
  const message = `'document' must be an object or a string holding JSON or YAML, not ${what}`
  throw new RegistryError('invalid_document', message, [{ message, path: [] }])
}

function parseJsonBody(body: string): unknown {
  try {
    return JSON.parse(body)
  } catch (err) {
    throw new RegistryError('invalid_request', `the request body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`)
  }
}

/**
 * An `application/json` body: `{ "document": … }` (an object with a `document` member, and no other),
 * or the document itself (any other object: it is stored as sent, in JSON).
 */
function fromJsonBody(body: string, parsed: unknown): ParsedBody {
  if (!isPlainObject(parsed)) {
    throw new RegistryError('invalid_request', 'the request body must be a JSON object: the document itself, or { "document": … }')
  }
  if (!Object.prototype.hasOwnProperty.call(parsed, 'document')) return { document: parsed, format: 'json', text: body }
  const unknown = Object.keys(parsed).filter((k) => k !== 'document')
  if (unknown.length > 0) {
    const names = unknown.slice(0, 10).map((k) => `'${k.length > 100 ? k.slice(0, 100) + '…' : k}'`).join(', ')
    throw new RegistryError(
      'invalid_request',
      `unknown field${unknown.length > 1 ? 's' : ''} ${names}: the body has only 'document'`,
      unknown.slice(0, 10).map((k) => ({ message: 'unknown field', path: [k] })),
    )
  }
  return fromMember(parsed.document)
}

/** Reads a raw body as its shape says (see BodyShape). */
function fromBody(body: string, shape: BodyShape): ParsedBody {
  if (shape === 'json') return fromJsonBody(body, parseJsonBody(body))
  if (shape === 'untyped' && body.trimStart().startsWith('{')) {
    let parsed: unknown
    try {
      parsed = JSON.parse(body)
    } catch {
      parsed = undefined
    }
    if (parsed !== undefined) return fromJsonBody(body, parsed)
  }
  return { ...parseDocumentText(body), text: body }
}

/**
 * A body as text: UTF-8 bytes (the HTTP layer checked they are UTF-8) are decoded without a byte-order
 * mark, as TextDecoder reads them. `asSent`: the text is exactly the bytes sent (no mark dropped).
 */
function bodyText(body: string | Uint8Array): { text: string; asSent: boolean } {
  if (typeof body === 'string') return { text: body, asSent: true }
  const bytes = bufferOf(body)
  // ASCII reads the same as Latin-1, which is copied as it is: 0.4 ms for 5 MB where UTF-8 takes 19.
  if (isAscii(bytes)) return { text: bytes.toString('latin1'), asSent: true }
  const bom = body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf
  return { text: bytes.toString('utf8', bom ? 3 : 0), asSent: !bom }
}

export function digest(task: DigestTask): DigestResult {
  return digestKept(task).result
}

/** A digest, its canonical JSON kept for the check that follows (see lastDigested). */
function digestKept(task: DigestTask): { result: DigestResult; sentAsStored: boolean } {
  const digested = timed('digest', () => digestNow(task))
  if (!digested.result.unchanged) lastDigested = { checksum: digested.result.checksum, canonical: digested.result.canonical }
  return digested
}

/**
 * A digest as it goes back to the pool: its texts as bytes, moved (see TextBytes). A body whose bytes
 * are the stored text goes back as it came, not encoded again.
 */
function digestToMove(task: DigestTask): DigestAnswer | Movable<DigestAnswer> {
  const { result, sentAsStored } = digestKept(task)
  if (result.unchanged) return result
  const text = sentAsStored && task.body instanceof Uint8Array ? ownBytes(task.body) : ownBytes(result.text)
  const canonical = ownBytes(result.canonical)
  return moving({ ...result, text, canonical }, [text.buffer, canonical.buffer])
}

/**
 * The canonical JSON of the last document this worker digested: the check that follows a digest is
 * sent here without it (CheckTask's `checksum`), which spares copying several megabytes between the
 * threads twice. One document only, so what the worker keeps stays small beside its heap.
 */
let lastDigested: { checksum: string; canonical: string } | undefined

/** The canonical JSON a check task brings, or the one this worker holds for its checksum. */
function canonicalOf(task: SentCheckTask): string | undefined {
  if (task.canonical !== undefined) return textOf(task.canonical)
  return task.checksum !== undefined && lastDigested?.checksum === task.checksum ? lastDigested.canonical : undefined
}

function digestNow(task: DigestTask): { result: DigestResult; sentAsStored: boolean } {
  const bodyHash = task.body === undefined ? undefined : createHash('sha256').update(task.body).digest('hex')
  // The envelope flag is part of the key: the same text is another document with or without it.
  // The shape is part of the key: the same bytes can be another document read another way.
  const raw = bodyHash === undefined ? undefined : `${task.shape ?? 'document'}:${bodyHash}`
  if (raw !== undefined && task.currentChecksum && task.currentRaw === raw) return unstored({ unchanged: true, checksum: task.currentChecksum, raw })
  const sent = task.body === undefined ? undefined : bodyText(task.body)
  const body = sent?.text
  const parsed = body === undefined ? fromMember(task.document) : fromBody(body, task.shape ?? 'document')
  // Shape first: JSON.stringify and the canonical form recurse, and must only see bounded depth.
  assertDocumentShape(parsed.document)
  // An API takes a Swagger 2.0 document or a Postman collection as its OpenAPI 3 conversion: from here
  // on (checksum, validation, lint, the stored text) the document is the converted one.
  const convertedFrom = task.kind === 'openapi' ? convertibleFormatOf(parsed.document) : undefined
  const document = convertedFrom ? convertToOpenApi(parsed.document, convertedFrom) : parsed.document
  if (convertedFrom) assertDocumentShape(document)
  const canonical = canonicalJson(document)
  const checksum = checksumOf(canonical)
  if (task.currentChecksum && task.currentChecksum === checksum) return unstored({ unchanged: true, checksum, ...(raw && { raw }) })
  const text = convertedFrom ? convertedText(document, parsed.format) : parsed.text ?? JSON.stringify(document)
  // A body stored as sent: unless a byte-order mark was dropped, its hash is the blob's digest.
  const asSent = !convertedFrom && parsed.text === body && sent?.asSent
  const digest = asSent && bodyHash ? bodyHash : createHash('sha256').update(text, 'utf8').digest('hex')
  // The summary costs nothing here and spares a check task when validation and lint are both cached.
  const registryRefs = mayHaveRegistryRefs(canonical) ? registryRefTargets(document) : []
  const result: DigestResult = {
    unchanged: false, checksum, format: parsed.format, text, digest, canonical, summary: summaryOf(document),
    ...(raw && { raw }), ...(registryRefs.length > 0 && { registryRefs }),
    ...(!convertedFrom && parsed.text === null && { serialized: true as const }), ...(convertedFrom && { convertedFrom }),
  }
  return { result, sentAsStored: asSent === true }
}

const unstored = (result: DigestResult) => ({ result, sentAsStored: false })

/** A converted document's text, in the format of the one sent: indented JSON, or YAML as reads write it. */
function convertedText(document: unknown, format: DocumentFormat): string {
  return format === 'yaml' ? yamlText(document) : `${JSON.stringify(document, null, 2)}\n`
}

const KIND_NAMES: Record<DocumentKind, string> = {
  openapi: 'the OpenAPI document',
  jsonschema: 'the JSON Schema',
  ruleset: 'the ruleset',
}

/** `convertedFrom`: the document is the OpenAPI 3 conversion of one sent as this (the paths are into the conversion). */
function invalidDocument(kind: DocumentKind, problems: ProblemItem[], convertedFrom?: ConvertedFrom): RegistryError {
  const first = problems[0]
  const where = first.path && first.path.length > 0 ? ` at /${encodePointer(first.path)}` : ''
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : ''
  const what = convertedFrom ? `${KIND_NAMES[kind]} converted from ${CONVERTED_FROM_NAMES[convertedFrom]}` : KIND_NAMES[kind]
  return new RegistryError('invalid_document', `${what} is not valid${where}: ${first.message}${more}`, problems)
}

function summaryOf(doc: unknown): NonNullable<CheckResult['summary']> {
  const d = isPlainObject(doc) ? doc : {}
  const info = isPlainObject(d.info) ? d.info : {}
  return {
    openapi: typeof d.openapi === 'string' ? d.openapi : '',
    title: typeof info.title === 'string' ? info.title : '',
    version: typeof info.version === 'string' ? info.version : '',
  }
}

export async function check(task: SentCheckTask): Promise<CheckResult> {
  const sent = canonicalOf(task)
  if (sent === undefined) return { canonicalMissing: true }
  const result: CheckResult = {}
  const previous = task.previousLint === undefined ? undefined : JSON.parse(task.previousLint) as LintMemo
  const { canonical, cut } = validated({ ...task, canonical: sent }, previous, result)
  const ruleset = task.ruleset
  if (ruleset) {
    const lint = await timedLint(() => relintDocument(canonical, ruleset, previous, cut))
    result.findings = lint.findings
    if (lint.memo) result.lintMemo = JSON.stringify(lint.memo)
    if (lint.reused !== undefined) result.relinted = { reused: lint.reused, linted: lint.linted ?? 0 }
  }
  return result
}

/**
 * The check task's validation (and registry schemas bundled), answering the canonical text to lint. Its
 * own function so that the parsed document is garbage before a whole lint starts: the lint parses the
 * text again, with positions, and a suspended async function would keep the first tree alive until it
 * ends (about 9 MB for the 5 MB generated document, whose lint keeps up to 350 MB alive).
 *
 * A new version of an OpenAPI document whose earlier version left a lint memo is cut into units here,
 * once for its validation and its re-lint: only the units the memo does not hold are validated against
 * the schema (validateOpenApi's `changedPart`), and the re-lint reuses the cut and its tree.
 */
function validated(task: CheckTask & { canonical: string }, previous: LintMemo | undefined, result: CheckResult): { canonical: string; cut?: RelintCut } {
  const doc: unknown = JSON.parse(task.canonical)
  let canonical = task.canonical
  if (task.registryDocuments && isPlainObject(doc)) {
    const problems = bundleRegistryRefs(doc, task.registryDocuments)
    if (problems.length > 0) throw invalidDocument(task.kind, problems, task.convertedFrom)
    canonical = canonicalJson(doc)
  }
  // Bundled schemas are placed in the tree in their own key order, which the cut's hashes must not see.
  const cut = previous && task.ruleset && task.kind === 'openapi' && !task.registryDocuments ? timed('lint', () => cutOrNothing(doc, canonical, task.ruleset!)) : undefined
  const changed = cut && previous && !task.skipValidation ? unitsNotIn(cut, previous) : undefined
  const changedPart = changed && cut && !('refused' in cut) ? partialDocument(cut.cut, changed) : undefined
  if (!task.skipValidation) timed('validate', () => validate(task.kind, doc, result, task.convertedFrom, changedPart))
  else if (task.kind === 'openapi') result.summary = summaryOf(doc)
  return { canonical, ...(cut && { cut }) }
}

/** relintCut, or nothing when it throws (a ruleset Spectral cannot compile): the lint reports that, after validation. */
function cutOrNothing(doc: unknown, canonical: string, ruleset: RulesetInput): RelintCut | undefined {
  try {
    return relintCut(doc, canonical, ruleset)
  } catch {
    return undefined
  }
}

/** The stored document with its registry schemas placed in it (`?bundle=true`). */
export function bundle(task: BundleTask): BundleResult {
  return timed('convert', () => {
    const { document } = parseDocumentText(task.text)
    const documents: RegistryDocuments = task.registryDocuments
    if (isPlainObject(document)) {
      const problems = bundleRegistryRefs(document, documents)
      if (problems.length > 0) throw invalidDocument('openapi', problems)
    }
    const canonical = canonicalJson(document)
    const json = JSON.stringify(document)
    return { text: task.to === 'json' ? json : convertText(json, 'json', 'yaml'), checksum: checksumOf(canonical) }
  })
}

function validate(kind: DocumentKind, doc: unknown, result: CheckResult, convertedFrom?: ConvertedFrom, changedPart?: Record<string, unknown>): void {
  switch (kind) {
    case 'openapi': {
      const { problems, summary } = validateOpenApi(doc, changedPart)
      if (problems.length > 0) throw invalidDocument('openapi', problems, convertedFrom)
      result.summary = summary
      break
    }
    case 'jsonschema': {
      const problems = validateJsonSchema(doc)
      if (problems.length > 0) throw invalidDocument('jsonschema', problems)
      break
    }
    case 'ruleset':
      compileRuleset(doc)
      break
  }
}

export async function lint(task: LintTask): Promise<LintResult> {
  return { findings: await timedLint(() => lintDocument(textOf(task.canonical), task.ruleset)) }
}

/** Compares two stored documents (see diff/). */
export function diff(task: DiffTask): DiffResult {
  return timed('diff', () => {
    const before = parseDocumentText(task.before).document
    const after = parseDocumentText(task.after).document
    return task.kind === 'openapi' ? diffOpenApi(before, after) : diffJsonSchema(before, after)
  })
}

/** Places the findings of an answer in the text the document was sent as (positions.ts). */
export function locate(task: LocateTask): LocateResult {
  return timed('locate', () => ({ positions: locatePaths(textOf(task.text), task.paths, task.format) }))
}

export function convert(task: ConvertTask): ConvertResult {
  return timed('convert', () => ({ text: convertText(task.text, task.from, task.to) }))
}

/** Tells the pool what the task cost and how this worker is doing (see StatsMessage). */
function reportStats(): void {
  if (!parentPort) return
  const stats: StatsMessage = {
    documentWorkerStats: { threadId, heapUsedBytes: getHeapStatistics().used_heap_size, phases },
  }
  phases = {}
  parentPort.postMessage(stats)
}

export default async function run(task: WorkerTask & { runId?: number }): Promise<WorkerResult> {
  if (typeof task.runId === 'number' && parentPort) {
    const started: StartedMessage = { documentTaskStarted: task.runId }
    parentPort.postMessage(started)
  }
  phases = {}
  try {
    switch (task.op) {
      case 'digest':
        return digestToMove(task)
      case 'check':
        return await check(task)
      case 'lint':
        return await lint(task)
      case 'convert':
        return convert(task)
      case 'bundle':
        return bundle(task)
      case 'diff':
        return diff(task)
      case 'locate':
        return locate(task)
      case 'terms':
        return searchTermsOf(parseDocumentText(task.text).document)
      case 'warm':
        warm()
        return { warmed: true }
      default:
        throw new Error(`unknown task ${JSON.stringify((task as { op?: unknown }).op)}`)
    }
  } catch (err) {
    if (err instanceof RegistryError) {
      const error: TaskError['error'] = { code: err.code, detail: err.message }
      if (err.errors) error.errors = err.errors
      return { error }
    }
    throw err
  } finally {
    if (task.op !== 'warm') reportStats()
  }
}

// A document worker's heap grows by a fixed factor between full collections (see heap-growth.ts).
if (!isMainThread) limitHeapGrowth()

// A worker started by the pool with `warm` compiles everything as soon as it is up.
if ((workerData as { warm?: unknown } | undefined)?.warm === true) warmInBackground()
