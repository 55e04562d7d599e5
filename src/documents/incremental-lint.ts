/**
 * A lint that reuses the findings of the parts of a document that did not change since the lint of an
 * earlier version (issue 19 item 2; docs/lint.md, "Re-linting only what changed").
 *
 * A whole lint notes, for every unit of the document (lint-units.ts), the results whose route was that
 * unit (lint-capture.ts), under the unit's route key: the memo. A later lint of a document with the
 * same ruleset and frame looks its units' keys up in the memo; the units not found (changed, added, or
 * reaching a changed unit) are linted by Spectral in a document of the frame, those units and what they
 * reach; the others' results are taken from the memo; the three findings that depend on the whole
 * document are computed over it (lint-cross-rules.ts). Spectral's list is a set (its runner drops
 * results with the same code, path, source and message), so the union is the whole lint's list.
 *
 * Only rulesets whose every rule is known take this path (spectral:oas's own, and rules of the
 * ruleset's own that use Spectral's core functions and look only inside what they match: a rule of
 * another kind could look across units in ways this does not know), and only documents lint-units.ts accepts; any
 * result whose route cannot be known during a run sends the lint back to a whole one. The memo is a
 * cache: the findings are the same with or without it.
 */
import { createRequire } from 'node:module'
import type { Finding, KeptResult, LintMemo, RulesetInput } from './types.js'
import { attributeResults, captured, CONTAINER_RULES, ROUTE, type RawResult } from './lint-capture.js'
import { crossDocumentResults, isCrossDocument } from './lint-cross-rules.js'
import { closureOf, documentUnits, FRAME, partialDocument, routeKeys, routeOf, WHOLE, type DocumentUnits, type Refusal } from './lint-units.js'
import { compiled, findingsOf, runSpectral, spectralDocument } from './lint.js'
import type { Ruleset } from './spectral.js'

const require = createRequire(import.meta.url)


export interface Relint {
  findings: Finding[]
  memo?: LintMemo
  /** Units whose results were reused (absent for a whole lint). */
  reused?: number
  /** Units linted again. */
  linted?: number
  /** Why nothing was reused, or no memo left, when that is not simply the lack of a memo to use. */
  whole?: string
}

let oasRules: Record<string, unknown> | undefined
const eligible = new WeakMap<Ruleset, boolean>()

/** Spectral's core functions that read nothing but their target, options and path. */
const LOCAL_FUNCTIONS = ['alphabetical', 'casing', 'defined', 'enumeration', 'falsy', 'length', 'or', 'pattern', 'schema', 'truthy', 'undefined', 'xor'] as const

type Rule = Ruleset['rules'][string]
type Then = { function: unknown; functionOptions?: unknown }

/**
 * True when the re-lint knows every rule of the ruleset: spectral:oas's own (as it defines them,
 * severity aside), or a rule of the ruleset's own that only looks inside what it matches (a JSONPath
 * that never looks back at the root, and Spectral's core functions that read only their target).
 */
function reusable(ruleset: Ruleset): boolean {
  const known = eligible.get(ruleset)
  if (known !== undefined) return known
  oasRules ??= (require('@stoplight/spectral-rulesets') as { oas: { rules: Record<string, unknown> } }).oas.rules
  const oas = oasRules
  const functions = require('@stoplight/spectral-functions') as Record<(typeof LOCAL_FUNCTIONS)[number], unknown>
  const local = new Set(LOCAL_FUNCTIONS.map((name) => functions[name]))
  const ownRule = (rule: Rule) => !CONTAINER_RULES.has(rule.name)
    && rule.given.every(looksInsideOnly)
    && (rule.then as Then[]).every((then) => local.has(then.function) && !(then.function === functions.schema && namesSchemasByUri(then.functionOptions)))
  const answer = !ruleset.overrides && Object.values(ruleset.rules).every((rule) => sameAsOas(rule, oas[rule.name]) || ownRule(rule))
  eligible.set(ruleset, answer)
  return answer
}

/**
 * A rule as spectral:oas defines it, but for its severity and message: the same `given`, functions,
 * fields and options. (A ruleset may redefine a rule of spectral:oas under its name; Spectral keeps the
 * extended definition as the rule's `definition` then, so that alone proves nothing.)
 */
function sameAsOas(rule: Rule, definition: unknown): boolean {
  if (definition === null || typeof definition !== 'object') return false
  const def = definition as { given: string | string[]; then: Then | Then[]; resolved?: boolean }
  const given = Array.isArray(def.given) ? def.given : [def.given]
  const thens = Array.isArray(def.then) ? def.then : [def.then]
  // Spectral's rules keep the very `then` objects of the definition they were made from.
  return JSON.stringify(rule.given) === JSON.stringify(given) && rule.resolved === (def.resolved ?? true)
    && rule.then.length === thens.length && rule.then.every((then, i) => then === thens[i])
}

/**
 * A `given` that matches nodes by where they are and what they hold, never by the root: no alias (it
 * could be anything), and no `$` or `@root` in it after its start outside quoted names (`$ref`).
 */
function looksInsideOnly(given: string): boolean {
  if (!given.startsWith('$')) return false
  const unquoted = given.slice(1).replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g, '')
  return !unquoted.includes('$') && !unquoted.includes('@root')
}

/** Options of the `schema` function whose schema names itself or others by URI (Spectral's per-document validators share those names). */
function namesSchemasByUri(options: unknown): boolean {
  const text = JSON.stringify(options ?? null)
  return /"(?:\$id|id|\$schema|\$anchor|\$dynamicAnchor)":|"\$(?:ref|dynamicRef|recursiveRef)":"(?!#)/.test(text)
}

/** A document cut into units with their route keys, or why it is linted whole. */
export type RelintCut = { cut: DocumentUnits; keys: Map<string, string> } | Refusal

/** Cuts `document` (parsed from `canonical`, nothing added to it since) for the re-lint with this ruleset. */
export function relintCut(document: unknown, canonical: string, input: RulesetInput): RelintCut {
  if (!reusable(compiled(input))) return { refused: 'a rule the re-lint does not know (a function of its own, an alias, a look at the root, overrides)' }
  const cut = documentUnits(document, canonical)
  return 'refused' in cut ? cut : { cut, keys: routeKeys(cut) }
}

/**
 * The units of the cut that the memo of an earlier version's lint does not hold (changed, added, or
 * reaching a changed unit), or undefined when that version had another frame. Every other unit is in
 * the new version as it was, at the same path, in the earlier version: a memo is left only by the lint of
 * a version that passed validation.
 */
export function unitsNotIn(prepared: RelintCut, previous: LintMemo): Set<string> | undefined {
  if ('refused' in prepared || previous.frame !== prepared.cut.frameHash) return undefined
  return new Set([...prepared.cut.units.keys()].filter((id) => !Object.hasOwn(previous.routes, prepared.keys.get(id)!)))
}

/**
 * Lints a document, reusing the memo of an earlier version's lint when it applies; answers its own memo.
 * `prepared`: relintCut's answer for this text, when the caller has it.
 */
export async function relintDocument(canonical: string, input: RulesetInput, previous?: LintMemo, prepared?: RelintCut): Promise<Relint> {
  const ruleset = compiled(input)
  const cutAndKeys = prepared ?? relintCut(JSON.parse(canonical), canonical, input)
  if ('refused' in cutAndKeys) return { findings: findingsOf(await runSpectral(ruleset, spectralDocument(canonical)), canonical), whole: cutAndKeys.refused }
  attributeResults(ruleset)
  const { cut, keys } = cutAndKeys
  let why: string | undefined
  if (previous && previous.ruleset === input.checksum && previous.frame === cut.frameHash) {
    const partial = await lintChanged(canonical, input, ruleset, cut, keys, previous)
    if (!('whole' in partial)) return partial
    why = partial.whole
  } else if (previous) {
    why = previous.ruleset === input.checksum ? 'another frame (the document outside its paths and components)' : 'another ruleset'
  }
  const whole = await lintWhole(canonical, input, ruleset, cut, keys)
  return why && whole.whole === undefined ? { ...whole, whole: why } : whole
}

/** The route of a result: the one noted when it was pushed, else (the resolver's own) where it is. */
function routeOfResult(result: RawResult): string {
  const noted = result[ROUTE]
  if (noted !== undefined) return noted
  return result.path.length === 0 ? FRAME : routeOf(result.path)
}

function kept(result: RawResult): KeptResult {
  return { code: result.code, message: result.message, severity: result.severity, path: result.path, ...(result.source !== undefined && { source: result.source }) }
}

/** A whole lint by Spectral, leaving a memo when every result's route is known and the cross-document results agree. */
async function lintWhole(canonical: string, input: RulesetInput, ruleset: Ruleset, cut: DocumentUnits, keys: Map<string, string>): Promise<Relint> {
  const document = spectralDocument(canonical)
  const { value: results, capture } = await captured(document, () => runSpectral(ruleset, document))
  const findings = findingsOf(results, canonical)
  if (capture.unsupported || !capture.results) return { findings, whole: capture.unsupported ?? 'no results captured' }
  const routes: Record<string, KeptResult[]> = {}
  for (const key of keys.values()) routes[key] = []
  const spectralCross: RawResult[] = []
  for (const result of capture.results) {
    if (isCrossDocument(result)) {
      spectralCross.push(result)
      continue
    }
    const route = routeOfResult(result)
    if (route === FRAME) continue
    const key = keys.get(route)
    if (route === WHOLE || key === undefined) return { findings, whole: `a result of ${String(result.code)} about a whole container` }
    routes[key].push(kept(result))
  }
  const formats = (document as { formats?: Set<unknown> | null }).formats
  if (!sameResults(spectralCross, crossDocumentResults(cut, ruleset, formats))) return { findings, whole: 'the findings computed over the whole document differ from Spectral\'s' }
  return { findings, memo: { ruleset: input.checksum, frame: cut.frameHash, routes } }
}

/** The re-lint: Spectral on the changed units only; `whole` (why) when a result's route cannot be known. */
async function lintChanged(
  canonical: string, input: RulesetInput, ruleset: Ruleset, cut: DocumentUnits, keys: Map<string, string>, previous: LintMemo,
): Promise<Relint | { whole: string }> {
  const changed = unitsNotIn({ cut, keys }, previous)!
  const document = spectralDocument(JSON.stringify(partialDocument(cut, closureOf(cut, [...changed, ...cut.frameReaches]))))
  const { capture } = await captured(document, () => runSpectral(ruleset, document))
  if (capture.unsupported || !capture.results) return { whole: capture.unsupported ?? 'no results captured' }
  const routes: Record<string, KeptResult[]> = {}
  for (const id of changed) routes[keys.get(id)!] = []
  const results: KeptResult[] = []
  for (const result of capture.results) {
    if (isCrossDocument(result)) continue
    const route = routeOfResult(result)
    if (route === WHOLE) return { whole: `a result of ${String(result.code)} about a whole container` }
    if (route === FRAME) {
      results.push(result)
    } else if (changed.has(route)) {
      results.push(result)
      routes[keys.get(route)!].push(kept(result))
    }
  }
  for (const [id, key] of keys) {
    if (changed.has(id)) continue
    routes[key] = previous.routes[key]
    results.push(...routes[key])
  }
  const formats = (document as { formats?: Set<unknown> | null }).formats
  results.push(...crossDocumentResults(cut, ruleset, formats))
  return {
    findings: findingsOf(withoutDuplicates(results), canonical),
    memo: { ruleset: input.checksum, frame: cut.frameHash, routes },
    reused: cut.units.size - changed.size,
    linted: changed.size,
  }
}

/** Spectral's de-duplication (its runner's computeResultFingerprint); kept results have a path, so no range is needed. */
function fingerprint(result: KeptResult & { range?: unknown }): string {
  let id = String(result.code)
  id += result.path.length > 0 ? JSON.stringify(result.path) : JSON.stringify(result.range)
  if (result.source !== undefined) id += result.source
  return id + result.message
}

function withoutDuplicates(results: KeptResult[]): KeptResult[] {
  const seen = new Set<string>()
  return results.filter((result) => {
    const id = fingerprint(result)
    if (seen.has(id)) return false
    seen.add(id)
    return true
  })
}

function sameResults(a: KeptResult[], b: KeptResult[]): boolean {
  const ids = (list: KeptResult[]) => new Set(list.map((r) => `${fingerprint(r)}\n${r.severity}`))
  const left = ids(a)
  const right = ids(b)
  return left.size === right.size && [...left].every((id) => right.has(id))
}
