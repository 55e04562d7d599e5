/**
 * Spectral rulesets stored as documents (YAML or JSON, already parsed): turned into a Spectral
 * `Ruleset` without ever loading code, files or URLs (CONTRACT §5).
 *
 * What a ruleset document may use:
 * - `extends`: only `spectral:oas`, `spectral:asyncapi`, `spectral:arazzo` (a name, `[name, severity]`,
 *   or an array of those), mapped to the rulesets of @stoplight/spectral-rulesets;
 * - `rules` whose `then.function` names one of Spectral's core functions (@stoplight/spectral-functions);
 * - `formats` by their usual names (`oas3`, `oas3.1`, `json-schema-draft7` …);
 * - `aliases`, `overrides` (patterns on the document itself: `**` or `**#/json/pointer`),
 *   `documentationUrl`, `description`, `parserOptions`, `x-…`.
 * Refused: `functions`, `functionsDir`, any other `extends`, unknown functions and formats, JSONPath
 * scripts outside a safe subset (see jsonpath-guard.ts), `$ref`s to anything outside the ruleset.
 * Spectral's own ruleset validation checks the rest; its errors become problems with paths.
 */
import { RegistryError } from '../errors.js'
import type { ProblemItem } from '../errors.js'
import { DEFAULT_RULESET } from './defaults.js'
import { checkJsonPath } from './jsonpath-guard.js'
import { MAX_PROBLEMS } from './limits.js'
import type { PathSegment } from './pointer.js'
import { toProblemPath } from './pointer.js'
import { collectRefs, externalRefMessage, quote } from './refs.js'
import { spectral } from './spectral.js'
import type { Ruleset } from './spectral.js'

export { DEFAULT_RULESET }
export type { Ruleset }

/** The names the ruleset and the linted document go by inside Spectral (nothing is ever read there). */
export const RULESET_SOURCE = '/registry/ruleset'
export const DOCUMENT_SOURCE = '/registry/document'

export const EXTENDABLE = ['spectral:oas', 'spectral:asyncapi', 'spectral:arazzo'] as const

type Json = Record<string, unknown>

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function hasOwn(obj: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key)
}

/** Sets an own data property, whatever the key (`__proto__` included): never touches a prototype. */
function put(target: Json, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

// ---------------------------------------------------------------------------------------------
// Names: rulesets, functions, formats

function rulesetByName(name: string): object | undefined {
  const { oas, asyncapi, arazzo } = spectral().rulesets
  switch (name) {
    case 'spectral:oas':
      return oas
    case 'spectral:asyncapi':
      return asyncapi
    case 'spectral:arazzo':
      return arazzo
    default:
      return undefined
  }
}

let functionTable: Map<string, unknown> | undefined
function coreFunctions(): Map<string, unknown> {
  if (!functionTable) {
    functionTable = new Map()
    for (const [name, fn] of Object.entries(spectral().functions)) if (typeof fn === 'function') functionTable.set(name, fn)
  }
  return functionTable
}

/** Format names as written in YAML rulesets, besides the export names of @stoplight/spectral-formats. */
const FORMAT_ALIASES: Record<string, string> = {
  'oas3.0': 'oas3_0',
  'oas3.1': 'oas3_1',
  'oas3.2': 'oas3_2',
  asyncapi3: 'aas3',
  'asyncapi2.0': 'aas2_0',
  'asyncapi2.1': 'aas2_1',
  'asyncapi2.2': 'aas2_2',
  'asyncapi2.3': 'aas2_3',
  'asyncapi2.4': 'aas2_4',
  'asyncapi2.5': 'aas2_5',
  'asyncapi2.6': 'aas2_6',
  'asyncapi3.0': 'aas3_0',
  'asyncapi3.1': 'aas3_1',
  'json-schema': 'jsonSchema',
  'json-schema-loose': 'jsonSchemaLoose',
  'json-schema-draft4': 'jsonSchemaDraft4',
  'json-schema-draft6': 'jsonSchemaDraft6',
  'json-schema-draft7': 'jsonSchemaDraft7',
  'json-schema-draft-2019-09': 'jsonSchemaDraft2019_09',
  'json-schema-draft2019-09': 'jsonSchemaDraft2019_09',
  'json-schema-2019-09': 'jsonSchemaDraft2019_09',
  'json-schema-draft-2020-12': 'jsonSchemaDraft2020_12',
  'json-schema-draft2020-12': 'jsonSchemaDraft2020_12',
  'json-schema-2020-12': 'jsonSchemaDraft2020_12',
  'arazzo1.0': 'arazzo1_0',
}

let formatTable: Map<string, unknown> | undefined
function formatsByName(): Map<string, unknown> {
  if (!formatTable) {
    formatTable = new Map()
    const exported = spectral().formats as unknown as Record<string, unknown>
    for (const [name, fn] of Object.entries(exported)) {
      // Formats carry a displayName; helpers such as detectDialect do not.
      if (typeof fn === 'function' && typeof (fn as { displayName?: unknown }).displayName === 'string') formatTable.set(name, fn)
    }
    for (const [alias, name] of Object.entries(FORMAT_ALIASES)) {
      const fn = formatTable.get(name)
      if (fn) formatTable.set(alias, fn)
    }
  }
  return formatTable
}

const FORMAT_NAMES_SHOWN =
  'oas2, oas3, oas3.0, oas3.1, asyncapi2, asyncapi3, json-schema, json-schema-loose, json-schema-draft4, json-schema-draft6, json-schema-draft7, json-schema-draft-2019-09, json-schema-draft-2020-12, arazzo1.0'

// ---------------------------------------------------------------------------------------------
// From the document to a Spectral definition

/** Members Spectral knows (its own validation reports others without naming them, so name them here). */
const RULESET_KEYS = ['extends', 'rules', 'formats', 'aliases', 'overrides', 'documentationUrl', 'description', 'parserOptions']
const RULE_KEYS = ['given', 'then', 'severity', 'description', 'message', 'documentationUrl', 'recommended', 'resolved', 'formats', 'type', 'tags', 'extensions']
const OVERRIDE_KEYS = ['files', 'extends', 'rules', 'formats', 'aliases', 'parserOptions']
const EXTENDS_SEVERITIES = ['recommended', 'all', 'off']

function unknownMembers(obj: Json, known: readonly string[]): string[] {
  return Object.keys(obj).filter((k) => !known.includes(k) && !k.startsWith('x-'))
}

class Converter {
  readonly problems: ProblemItem[] = []

  problem(path: PathSegment[], message: string): void {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push({ path, message })
  }

  ruleset(doc: Json): Json {
    const out: Json = {}
    for (const key of Object.keys(doc)) {
      const value = doc[key]
      const path = [key]
      switch (key) {
        case 'functions':
          this.problem(path, `custom functions are not allowed: only Spectral's core functions can be used (${[...coreFunctions().keys()].join(', ')})`)
          break
        case 'functionsDir':
          this.problem(path, 'functionsDir is not allowed: the registry never loads custom functions; use Spectral\'s core functions')
          break
        case 'except':
          this.problem(path, "'except' is Spectral 5 syntax and is not supported: use 'overrides' with '**#/json/pointer' patterns")
          break
        case 'extends':
          put(out, key, this.extends(value, path))
          break
        case 'formats':
          put(out, key, this.formats(value, path))
          break
        case 'rules':
          put(out, key, this.rules(value, path))
          break
        case 'aliases':
          put(out, key, this.aliases(value, path))
          break
        case 'overrides':
          put(out, key, this.overrides(value, path))
          break
        default:
          if (!RULESET_KEYS.includes(key) && !key.startsWith('x-')) {
            this.problem(path, `unknown member ${quote(key)}: a ruleset has ${RULESET_KEYS.join(', ')} (and x-… extensions)`)
          }
          put(out, key, value)
      }
    }
    return out
  }

  extendsName(name: unknown, path: PathSegment[]): unknown {
    if (typeof name !== 'string') return name
    const ruleset = rulesetByName(name)
    if (ruleset) return ruleset
    this.problem(
      path,
      `extends ${quote(name)} is not allowed: only ${EXTENDABLE.join(', ')} can be extended (never files, URLs or packages)`,
    )
    return name
  }

  extends(value: unknown, path: PathSegment[]): unknown {
    const shape = `extends must be a ruleset name (${EXTENDABLE.join(', ')}), a [name, severity] pair, or a list of those`
    if (typeof value === 'string') return this.extendsName(value, path)
    if (!Array.isArray(value)) {
      this.problem(path, shape)
      return value
    }
    return value.map((item, i) => {
      if (typeof item === 'string') return this.extendsName(item, [...path, i])
      if (Array.isArray(item) && item.length === 2 && typeof item[0] === 'string') {
        // Spectral does not check this severity itself: a typo would silently turn every rule off.
        if (!EXTENDS_SEVERITIES.includes(item[1] as string)) {
          this.problem([...path, i, 1], `the severity of an extended ruleset must be one of ${EXTENDS_SEVERITIES.join(', ')}`)
        }
        return [this.extendsName(item[0], [...path, i, 0]), item[1]]
      }
      this.problem([...path, i], shape)
      return item
    })
  }

  formats(value: unknown, path: PathSegment[]): unknown {
    if (!Array.isArray(value)) return value
    const table = formatsByName()
    return value.map((name, i) => {
      if (typeof name !== 'string') return name
      const fn = table.get(name)
      if (!fn) this.problem([...path, i], `unknown format ${quote(name)}: use one of ${FORMAT_NAMES_SHOWN}`)
      return fn ?? name
    })
  }

  given(value: unknown, path: PathSegment[]): void {
    const check = (expression: unknown, at: PathSegment[]): void => {
      if (typeof expression !== 'string') return
      const problem = checkJsonPath(expression)
      if (problem) this.problem(at, `JSONPath ${quote(expression)} is not allowed: ${problem}`)
    }
    if (Array.isArray(value)) value.forEach((e, i) => check(e, [...path, i]))
    else check(value, path)
  }

  rules(value: unknown, path: PathSegment[]): unknown {
    if (!isObject(value)) return value
    const out: Json = {}
    for (const name of Object.keys(value)) {
      if (name === '__proto__') {
        this.problem([...path, name], "'__proto__' cannot be used as a rule name")
        continue
      }
      const rule = value[name]
      put(out, name, isObject(rule) ? this.rule(rule, [...path, name]) : rule)
    }
    return out
  }

  rule(rule: Json, path: PathSegment[]): Json {
    for (const key of unknownMembers(rule, RULE_KEYS)) {
      this.problem([...path, key], `unknown member ${quote(key)} of a rule: a rule has ${RULE_KEYS.join(', ')}`)
    }
    const out: Json = {}
    for (const key of Object.keys(rule)) {
      const value = rule[key]
      if (key === 'then') {
        put(out, key, Array.isArray(value) ? value.map((t, i) => this.then(t, [...path, key, i])) : this.then(value, [...path, key]))
      } else if (key === 'formats') {
        put(out, key, this.formats(value, [...path, key]))
      } else {
        if (key === 'given') this.given(value, [...path, key])
        put(out, key, value)
      }
    }
    return out
  }

  then(then: unknown, path: PathSegment[]): unknown {
    if (!isObject(then)) return then
    const out: Json = {}
    for (const key of Object.keys(then)) put(out, key, then[key])
    const name = then.function
    if (typeof name === 'string') {
      const fn = coreFunctions().get(name)
      if (fn) put(out, 'function', fn)
      else {
        this.problem(
          [...path, 'function'],
          `custom functions are not allowed: ${quote(name)} is not one of Spectral's core functions (${[...coreFunctions().keys()].join(', ')})`,
        )
      }
    }
    const field = then.field
    if (typeof field === 'string' && field.startsWith('$')) {
      const problem = checkJsonPath(field)
      if (problem) this.problem([...path, 'field'], `JSONPath ${quote(field)} is not allowed: ${problem}`)
    }
    // Options (a `schema` function's schema above all) must not point outside the ruleset.
    if (then.functionOptions !== undefined) {
      for (const site of collectRefs(then.functionOptions)) {
        if (!site.ref.startsWith('#')) this.problem([...path, 'functionOptions', ...site.path, '$ref'], externalRefMessage(site.ref))
      }
    }
    return out
  }

  aliases(value: unknown, path: PathSegment[]): unknown {
    if (!isObject(value)) return value
    const out: Json = {}
    for (const name of Object.keys(value)) {
      const alias = value[name]
      const at = [...path, name]
      if (name === '__proto__') {
        this.problem(at, "'__proto__' cannot be used as an alias name")
        continue
      }
      if (Array.isArray(alias)) {
        this.given(alias, at)
        put(out, name, alias)
      } else if (isObject(alias) && Array.isArray(alias.targets)) {
        const targets = alias.targets.map((target: unknown, i: number) => {
          if (!isObject(target)) return target
          const copy: Json = {}
          for (const key of Object.keys(target)) put(copy, key, target[key])
          if (hasOwn(target, 'formats')) put(copy, 'formats', this.formats(target.formats, [...at, 'targets', i, 'formats']))
          if (hasOwn(target, 'given')) this.given(target.given, [...at, 'targets', i, 'given'])
          return copy
        })
        const copy: Json = {}
        for (const key of Object.keys(alias)) put(copy, key, alias[key])
        put(copy, 'targets', targets)
        put(out, name, copy)
      } else {
        put(out, name, alias)
      }
    }
    return out
  }

  overrides(value: unknown, path: PathSegment[]): unknown {
    if (!Array.isArray(value)) return value
    return value.map((override: unknown, i: number) => {
      if (!isObject(override)) return override
      const at = [...path, i]
      for (const key of unknownMembers(override, OVERRIDE_KEYS)) {
        this.problem([...at, key], `unknown member ${quote(key)} of an override: it has ${OVERRIDE_KEYS.join(', ')}`)
      }
      const out: Json = {}
      for (const key of Object.keys(override)) {
        const v = override[key]
        switch (key) {
          case 'files':
            put(out, key, this.files(v, [...at, key]))
            break
          case 'extends':
            put(out, key, this.extends(v, [...at, key]))
            break
          case 'formats':
            put(out, key, this.formats(v, [...at, key]))
            break
          case 'rules':
            put(out, key, this.rules(v, [...at, key]))
            break
          case 'aliases':
            put(out, key, this.aliases(v, [...at, key]))
            break
          default:
            put(out, key, v)
        }
      }
      return out
    })
  }

  /**
   * Override patterns. The registry has no file names: a pattern may target the document as a whole
   * (`**`, `*`, `**\/*`) or a part of it (`**#/json/pointer`, or just `#/json/pointer`).
   */
  files(value: unknown, path: PathSegment[]): unknown {
    if (!Array.isArray(value)) return value
    return value.map((pattern: unknown, i: number) => {
      if (typeof pattern !== 'string') return pattern
      const hash = pattern.indexOf('#')
      const glob = hash === -1 ? pattern : pattern.slice(0, hash)
      if (glob === '' && hash === 0) return '**' + pattern
      if (glob === '**' || glob === '*' || glob === '**/*') return pattern
      this.problem(
        [...path, i],
        `override pattern ${quote(pattern)} is not supported: the registry has no file paths; use '**' for the whole document or '**#/json/pointer' for a part of it`,
      )
      return pattern
    })
  }
}

// ---------------------------------------------------------------------------------------------
// Spectral's errors to problems

interface SpectralValidationError {
  message: string
  path?: unknown
}

function flatten(err: unknown): unknown[] {
  if (err && typeof err === 'object' && Array.isArray((err as { errors?: unknown }).errors)) {
    return (err as { errors: unknown[] }).errors.flatMap(flatten)
  }
  return [err]
}

function spectralProblems(err: unknown, doc: unknown): ProblemItem[] {
  const problems: ProblemItem[] = []
  for (const e of flatten(err)) {
    if (problems.length >= MAX_PROBLEMS) break
    const message = e instanceof Error ? e.message : String((e as SpectralValidationError)?.message ?? e)
    const rawPath = (e as SpectralValidationError | undefined)?.path
    if (Array.isArray(rawPath) && rawPath.length > 0 && !(rawPath.length === 1 && rawPath[0] === '')) {
      problems.push({ path: toProblemPath(doc, rawPath.map(String)), message })
      continue
    }
    const missing = /^Cannot extend non-existing rule: "(.*)"$/.exec(message)
    if (missing) {
      problems.push({
        path: ['rules', missing[1]],
        message: `rule ${quote(missing[1])} does not exist in the extended rulesets: a new rule needs 'given' and 'then'; a severity alone only changes an existing rule`,
      })
      continue
    }
    problems.push({ path: [], message })
  }
  return problems
}

// ---------------------------------------------------------------------------------------------
// Checking the compiled rules' JSONPath expressions (after aliases are expanded)

const MAX_EXPANSIONS = 10_000

let trustedExpressions: Set<string> | undefined

/** The expressions of Spectral's own rulesets: written by Spectral, trusted as they are. */
function trusted(): Set<string> {
  if (!trustedExpressions) {
    const set = new Set<string>()
    const { Ruleset } = spectral().core
    for (const name of EXTENDABLE) {
      const ruleset = new Ruleset(rulesetByName(name), { severity: 'all' })
      for (const rule of Object.values(ruleset.rules)) {
        for (const given of rule.given) {
          set.add(given)
          for (const expanded of expand(rule.aliasSource.aliases, given)) set.add(expanded)
        }
        for (const then of rule.then) if (typeof then.field === 'string') set.add(then.field)
      }
    }
    trustedExpressions = set
  }
  return trustedExpressions
}

/** Every expression an alias reference can become (for any document format): a superset of Spectral's. */
function expand(aliases: Ruleset['aliases'], expression: string): string[] {
  const out: string[] = []
  const pending: [string, number][] = [[expression, 0]]
  while (pending.length > 0) {
    const [expr, depth] = pending.pop()!
    const m = /^#([A-Za-z0-9_-]+)/.exec(expr)
    if (!m || aliases === null || !hasOwn(aliases, m[1]) || depth > 32) {
      out.push(expr)
    } else {
      const alias = (aliases as Record<string, unknown>)[m[1]]
      const rest = expr.slice(m[1].length + 1)
      const givens: unknown[] = Array.isArray(alias)
        ? alias
        : isObject(alias) && Array.isArray(alias.targets)
          ? alias.targets.flatMap((t: unknown) => (isObject(t) && Array.isArray(t.given) ? t.given : []))
          : []
      for (const g of givens) if (typeof g === 'string') pending.push([g + rest, depth + 1])
    }
    if (out.length + pending.length > MAX_EXPANSIONS) throw new Error('too many expansions')
  }
  return out
}

function ruleExpressionProblems(ruleset: Ruleset): ProblemItem[] {
  const problems: ProblemItem[] = []
  const safe = trusted()
  const checked = new Set<string>()
  for (const [name, rule] of Object.entries(ruleset.rules)) {
    let expressions: string[]
    try {
      expressions = rule.given.flatMap((g) => expand(rule.aliasSource.aliases, g))
    } catch {
      problems.push({ path: ['rules', name, 'given'], message: `the aliases of rule ${quote(name)} expand to too many expressions` })
      continue
    }
    for (const then of rule.then) if (typeof then.field === 'string' && then.field.startsWith('$')) expressions.push(then.field)
    for (const expression of expressions) {
      if (safe.has(expression) || checked.has(expression)) continue
      checked.add(expression)
      const problem = checkJsonPath(expression)
      if (problem) problems.push({ path: ['rules', name, 'given'], message: `JSONPath ${quote(expression)} is not allowed: ${problem}` })
      if (problems.length >= MAX_PROBLEMS) return problems
    }
  }
  return problems
}

// ---------------------------------------------------------------------------------------------

function invalid(problems: ProblemItem[]): RegistryError {
  const first = problems[0]?.message ?? 'invalid ruleset'
  const detail = problems.length === 1 ? `the ruleset is not valid: ${first}` : `the ruleset is not valid: ${problems.length} problems, the first: ${first}`
  return new RegistryError('invalid_document', detail, problems)
}

/**
 * Compiles a ruleset document into the Spectral `Ruleset` that lints documents (overrides already
 * applied for the registry's one document name). Throws `invalid_document` listing the problems.
 */
export function compileRuleset(doc: unknown): Ruleset {
  if (!isObject(doc)) {
    throw new RegistryError('invalid_document', 'the ruleset must be an object', [{ message: 'the ruleset must be an object', path: [] }])
  }
  const converter = new Converter()
  const definition = converter.ruleset(doc)
  if (converter.problems.length > 0) throw invalid(converter.problems)

  const { Ruleset } = spectral().core
  let ruleset: Ruleset
  try {
    ruleset = new Ruleset(definition, { severity: 'recommended', source: RULESET_SOURCE }).fromSource(DOCUMENT_SOURCE)
  } catch (err) {
    throw invalid(spectralProblems(err, doc))
  }
  const problems = ruleExpressionProblems(ruleset)
  if (problems.length > 0) throw invalid(problems)
  return ruleset
}

/** The problems of a ruleset document; empty when it compiles. */
export function validateRuleset(doc: unknown): ProblemItem[] {
  try {
    compileRuleset(doc)
    return []
  } catch (err) {
    if (err instanceof RegistryError) return err.errors ?? [{ message: err.message, path: [] }]
    throw err
  }
}

/** Loads Spectral and compiles the default ruleset (worker start-up). */
export function warmRulesets(): void {
  compileRuleset(JSON.parse(JSON.stringify(DEFAULT_RULESET)))
}
