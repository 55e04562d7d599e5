/**
 * The three findings of spectral:oas that depend on the whole document, computed over the parsed
 * document instead of by Spectral, for a re-lint (docs/lint.md): `operation-operationId-unique` (each
 * operationId after its first use), the equivalent-paths finding of `path-params`, and
 * `oas3-unused-component` (a component no crawled `$ref` points at exactly). Each follows its
 * function in @stoplight/spectral-rulesets line for line, and each result is finished as Spectral's
 * runner finishes it (lintNode's processTargetResults: decoded path, message template, severity). The
 * documents these run on are those lint-units.ts accepts: no path item or operation is a `$ref`, so
 * every path is the same in the resolved document and Spectral maps none of them elsewhere.
 *
 * A whole lint compares these with Spectral's own results on the same document and keeps no re-lint
 * state when they differ (incremental-lint.ts).
 */
import { createRequire } from 'node:module'
import type { Ruleset } from './spectral.js'
import { decodeSegmentFragment, renderMessage, type RawResult } from './lint-capture.js'
import { OPERATION_KEYS, UNUSED_COMPONENT_TYPES, type DocumentUnits, type Segment } from './lint-units.js'
import { DOCUMENT_SOURCE } from './ruleset.js'

const require = createRequire(import.meta.url)
const runtime = createRequire(require.resolve('@stoplight/spectral-core'))('@stoplight/spectral-runtime') as {
  printPath: (path: Segment[], style: unknown) => string
  PrintStyle: { EscapedPointer: unknown }
}

const PATH_PARAMETER = /(\{;?\??[a-zA-Z0-9_-]+\*?\})/g
const EQUIVALENT_PATHS = /^Paths ".*" and ".*" must not be equivalent\.$/s

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object'
const isPlainObject = (value: unknown): value is Record<string, unknown> => isObject(value) && !Array.isArray(value)

/** True for the results this module computes (by rule and message), which a re-lint never reuses. */
export function isCrossDocument(result: Pick<RawResult, 'code' | 'message'>): boolean {
  return result.code === 'operation-operationId-unique' || result.code === 'oas3-unused-component'
    || (result.code === 'path-params' && EQUIVALENT_PATHS.test(result.message))
}

type Rule = Ruleset['rules'][string]

/** The three rules' results for a document, for the rules of this ruleset that apply to its formats. */
export function crossDocumentResults(cut: DocumentUnits, ruleset: Ruleset, formats: Set<unknown> | null | undefined): RawResult[] {
  const results: RawResult[] = []
  const active = (name: string): Rule | undefined => {
    const rule = ruleset.rules[name]
    return rule && rule.enabled && rule.matchesFormat(formats as never) ? rule : undefined
  }
  const document = cut.document
  const finish = (rule: Rule | undefined, raw: { message: string; path: Segment[] }[]) => {
    if (!rule) return
    for (const one of raw) {
      const result = finished(rule, one, document)
      if (result) results.push(result)
    }
  }
  finish(active('operation-operationId-unique'), operationIdsUsedAgain(document.paths))
  finish(active('path-params'), equivalentPaths(document.paths))
  finish(active('oas3-unused-component'), unusedComponents(document, cut.refTargets))
  return results
}

/** lintNode's processTargetResults for a path that needs no mapping. */
function finished(rule: Rule, raw: { message: string; path: Segment[] }, document: unknown): RawResult | undefined {
  const path = raw.path.map(decodeSegmentFragment)
  const vars = {
    property: path.length > 0 ? path[path.length - 1] : '',
    error: raw.message,
    path: runtime.printPath(path, runtime.PrintStyle.EscapedPointer),
    description: rule.description,
    value: path.reduce<unknown>((value, key) => (isObject(value) ? value[key] : undefined), document),
  }
  const resultMessage = renderMessage(raw.message, vars)
  vars.error = resultMessage
  const severity = rule.getSeverityForSource(DOCUMENT_SOURCE, path) as number
  if (severity === -1) return undefined
  const message = (rule.message === null ? rule.description ?? resultMessage : renderMessage(rule.message, vars)).trim()
  return { code: rule.name, message, path, severity, source: DOCUMENT_SOURCE }
}

/** oasOpIdUnique (with getAllOperations' order and checks). */
function operationIdsUsedAgain(paths: unknown): { message: string; path: Segment[] }[] {
  const results: { message: string; path: Segment[] }[] = []
  if (!isPlainObject(paths)) return results
  // Spectral keeps an array and asks `includes`; a Set compares the same way (SameValueZero) without
  // reading every operationId seen for every operation (34 ms for the 5 MB generated document).
  const seen = new Set<unknown>()
  for (const path of Object.keys(paths)) {
    const item = paths[path]
    if (!isPlainObject(item)) continue
    for (const operation of Object.keys(item)) {
      const value = item[operation]
      if (!isPlainObject(value) || !OPERATION_KEYS.includes(operation)) continue
      if (!('operationId' in value)) continue
      if (seen.has(value.operationId)) results.push({ message: 'operationId must be unique.', path: ['paths', path, operation, 'operationId'] })
      else seen.add(value.operationId)
    }
  }
  return results
}

/** oasPathParam's first check: two paths the same but for their parameters' names. */
function equivalentPaths(paths: unknown): { message: string; path: Segment[] }[] {
  const results: { message: string; path: Segment[] }[] = []
  if (!isPlainObject(paths)) return results
  const unique: Record<string, string> = {}
  for (const path of Object.keys(paths)) {
    if (!isObject(paths[path])) continue
    const normalized = path.replace(PATH_PARAMETER, '%')
    if (normalized in unique) results.push({ message: `Paths "${String(unique[normalized])}" and "${path}" must not be equivalent.`, path: ['paths', path] })
    else unique[normalized] = path
  }
  return results
}

/** oasUnusedComponent with unreferencedReusableObject: a component no crawled reference points at. */
function unusedComponents(document: Record<string, unknown>, refTargets: Set<string>): { message: string; path: Segment[] }[] {
  const results: { message: string; path: Segment[] }[] = []
  const components = document.components
  if (!isPlainObject(components)) return results
  for (const type of UNUSED_COMPONENT_TYPES) {
    const value = components[type]
    if (!isObject(value)) continue
    for (const name of Object.keys(value)) {
      if (!refTargets.has(`#/components/${type}/${name}`)) {
        results.push({ message: 'Potential orphaned reusable object has been detected', path: ['components', type, name] })
      }
    }
  }
  return results
}
