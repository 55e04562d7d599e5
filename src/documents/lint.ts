/**
 * Linting with Spectral inside a worker. The document comes from its canonical JSON; `$ref`s are
 * resolved inside the document only: the resolver has no readers at all, so an external reference is
 * reported (Spectral's `invalid-ref`) and never read from disk or the network.
 *
 * Spectral's own diagnostics are kept as findings: `invalid-ref` (a reference that cannot be
 * resolved; for an external one the message is rewritten to name the reference as written, instead of
 * Spectral's "No resolver defined for scheme 'file' in ref /registry/…"), `unrecognized-format` (the ruleset has formats and the document matches none, so its
 * format-specific rules did not run; a warning) and `parser` (cannot happen here: canonical JSON is
 * well-formed and has no duplicate keys). Each says something true about the document that a user
 * should see, and each has a stable code, so they are not dropped.
 */
import { RegistryError } from '../errors.js'
import type { Finding, RulesetInput, Severity } from './types.js'
import { compileRuleset, DOCUMENT_SOURCE } from './ruleset.js'
import type { Ruleset } from './ruleset.js'
import { encodePointer, lookupPointer } from './pointer.js'
import { quote } from './refs.js'
import { spectral } from './spectral.js'

type SpectralDocument = Parameters<InstanceType<ReturnType<typeof spectral>['core']['Spectral']>['run']>[0] & object
/** What findings are made of: Spectral's results, or results kept from an earlier lint. */
export interface SpectralResult { code: string | number; message: string; severity: number; path: readonly (string | number)[] }

const CACHE_SIZE = 32
/** Compiled rulesets by ruleset version checksum, least recently used first. */
const cache = new Map<string, Ruleset>()

export function compiled(input: RulesetInput): Ruleset {
  const hit = cache.get(input.checksum)
  if (hit) {
    cache.delete(input.checksum)
    cache.set(input.checksum, hit)
    return hit
  }
  let ruleset: Ruleset
  try {
    ruleset = compileRuleset(input.document)
  } catch (err) {
    if (err instanceof RegistryError) {
      throw new RegistryError('invalid_document', `the ruleset cannot be used for linting: ${err.message}`, err.errors)
    }
    throw err
  }
  cache.set(input.checksum, ruleset)
  while (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string)
  return ruleset
}

const SEVERITIES: Severity[] = ['error', 'warn', 'info', 'hint']

function compareFindings(a: { key: string; f: Finding }, b: { key: string; f: Finding }): number {
  if (a.key !== b.key) return a.key < b.key ? -1 : 1
  if (a.f.code !== b.f.code) return a.f.code < b.f.code ? -1 : 1
  if (a.f.message !== b.f.message) return a.f.message < b.f.message ? -1 : 1
  return 0
}

/** Lints a document (its canonical JSON) with a ruleset; findings sorted by path, code, message. */
export async function lintDocument(canonical: string, input: RulesetInput): Promise<Finding[]> {
  const ruleset = compiled(input)
  return findingsOf(await runSpectral(ruleset, spectralDocument(canonical)), canonical)
}

/** Spectral's Document of a JSON text, under the registry's document source. */
export function spectralDocument(text: string): SpectralDocument {
  const { core, parsers } = spectral()
  return new core.Document(text, parsers.Json, DOCUMENT_SOURCE)
}

/** Spectral's results for a Document; a rule that throws is the ruleset's failure (`ruleset_failed`). */
export async function runSpectral(ruleset: Ruleset, document: SpectralDocument): Promise<SpectralResult[]> {
  const { core, refResolver } = spectral()
  const linter = new core.Spectral({ resolver: new refResolver.Resolver({ resolvers: {} }) })
  linter.setRuleset(ruleset)
  try {
    return await linter.run(document)
  } catch (err) {
    throw rulesetFailed(err, ruleset)
  }
}

/** The registry's findings of Spectral's results: severities it knows, external $refs named, sorted. */
export function findingsOf(results: readonly SpectralResult[], canonical: string): Finding[] {
  const findings: Finding[] = results
    .filter((d) => d.severity >= 0 && d.severity <= 3)
    .map((d) => ({
      code: String(d.code),
      message: d.message,
      severity: SEVERITIES[d.severity],
      path: d.path.map((s) => (typeof s === 'number' ? s : String(s))),
    }))
  explainExternalRefs(canonical, findings)
  const keyed = findings.map((f) => ({ key: encodePointer(f.path), f }))
  keyed.sort(compareFindings)
  return keyed.map((x) => x.f)
}

/**
 * A ruleset that Spectral cannot run on this document: a rule's JSONPath filter that throws on some
 * node (`@property.match(…)` meeting an array index, whose property is a number), or a function that
 * throws. Plain Spectral fails the same way on the same document and ruleset, so this is the
 * document's and ruleset's answer, not the registry's fault: a 422 naming the rule, never a 500.
 * A RangeError (a stack or string too large) is a resource limit and stays unexpected.
 */
function rulesetFailed(err: unknown, ruleset: Ruleset): unknown {
  if (!(err instanceof Error) || err instanceof RegistryError || err instanceof RangeError) return err
  const rules = failingRules(err, ruleset)
  const what = `${err.name}: ${err.message}`
  const which = rules.length === 0 ? 'a rule' : `rule${rules.length > 1 ? 's' : ''} ${rules.map((name) => quote(name)).join(', ')}`
  return new RegistryError(
    'ruleset_failed',
    `the ruleset fails on this document (Spectral itself does): ${which} threw ${what}; change the rule or the document`,
    rules.length === 0 ? [{ message: what }] : rules.map((code) => ({ code, message: what })),
  )
}

/**
 * The rules whose `given` threw: nimma compiles each JSONPath expression into a function named after
 * it, so the first frame of a filter's error names the expression; the rules with that `given` are
 * the ones. Empty when the stack names none (a function that threw: Spectral's error names the
 * function, not the rule).
 */
function failingRules(err: Error, ruleset: Ruleset): string[] {
  const frame = /^\s*at (.+) \(eval at query \(/m.exec(err.stack ?? '')
  if (!frame) return []
  const expression = frame[1]
  return Object.values(ruleset.rules).filter((rule) => rule.given.includes(expression)).map((rule) => rule.name)
}

/** Spectral's message for an external reference names a resolved path; name the `$ref` as written. */
function explainExternalRefs(canonical: string, findings: Finding[]): void {
  let doc: unknown
  for (const f of findings) {
    if (f.code !== 'invalid-ref' || !f.message.startsWith('No resolver defined') || f.path[f.path.length - 1] !== '$ref') continue
    doc ??= JSON.parse(canonical)
    const found = lookupPointer(doc, f.path.map(String))
    if (found.found && typeof found.value === 'string') {
      f.message = `external $ref ${quote(found.value)} is not resolved: the registry never fetches files or URLs; bundle the document first`
    }
  }
}

/** Drops every compiled ruleset (tests). */
export function clearRulesetCache(): void {
  cache.clear()
}
