/**
 * Turning ajv's raw errors into problems a person can act on. With `allErrors`, a document that fails
 * a `oneOf` gets the errors of every alternative (an OpenAPI response that lacks `description` is also
 * told it lacks `$ref`); this keeps the errors of the alternative the document was evidently meant to
 * be and drops the rest, then caps the list.
 */
import type { ErrorObject } from 'ajv'
import type { ProblemItem } from '../errors.js'
import { MAX_PROBLEMS } from './limits.js'
import { instancePathToPath, lookupPointer, pointerSegments } from './pointer.js'

const COMPOSITE = new Set(['oneOf', 'anyOf'])

function valueAt(doc: unknown, instancePath: string): unknown {
  const segments = pointerSegments(instancePath)
  if (segments === null) return undefined
  const found = lookupPointer(doc, segments)
  return found.found ? found.value : undefined
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function under(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(prefix + '/')
}

function listValues(values: unknown): string {
  if (!Array.isArray(values)) return ''
  const shown = values.slice(0, 12).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))
  return shown.join(', ') + (values.length > 12 ? ', …' : '')
}

function describe(doc: unknown, e: ErrorObject): ProblemItem {
  const path = instancePathToPath(doc, e.instancePath)
  const p = e.params as Record<string, unknown>
  switch (e.keyword) {
    case 'additionalProperties':
    case 'unevaluatedProperties': {
      const name = String(p.additionalProperty ?? p.unevaluatedProperty)
      return { path: [...path, name], message: `property '${name}' is not allowed here` }
    }
    case 'required':
      return { path, message: `missing required property '${String(p.missingProperty)}'` }
    case 'enum':
      return { path, message: `must be one of: ${listValues(p.allowedValues)}` }
    case 'const':
      return { path, message: `must be ${JSON.stringify(p.allowedValue)}` }
    case 'false schema':
      return { path, message: 'is not allowed here' }
    case 'type':
      return { path, message: `must be ${String(p.type).replace(/,/g, ' or ')}` }
    case 'not': {
      const exclusive = mutuallyExclusive(e)
      if (exclusive) return { path, message: `${exclusive.map((name) => `'${name}'`).join(' and ')} cannot be used together` }
      return { path, message: e.message ?? "fails 'not'" }
    }
    default:
      return { path, message: e.message ?? `fails '${e.keyword}'` }
  }
}

/**
 * The members a `not: { required: [a, b] }` forbids together (OpenAPI's `example` with `examples`, a
 * License's `identifier` with `url`), when the validator was compiled with `verbose` (which gives the
 * keyword's own schema on the error).
 */
function mutuallyExclusive(e: ErrorObject): string[] | undefined {
  const schema = e.schema as { required?: unknown } | undefined
  if (!isObject(schema) || !Array.isArray(schema.required) || schema.required.length < 2) return undefined
  return schema.required.map(String)
}

/**
 * Which alternative of the `oneOf`/`anyOf` error `c` the error `e` belongs to: an inlined branch's
 * errors have the composite's schema path and the branch's index as prefix; a branch that is a `$ref`
 * (the current 3.0 schema's parameters: PathParameter, QueryParameter …) has errors under the
 * referenced definition's path, matched through the branches a verbose validator gives.
 */
function branchOf(c: ErrorObject, e: ErrorObject): string | undefined {
  if (e === c || !under(e.instancePath, c.instancePath)) return undefined
  const prefix = c.schemaPath + '/'
  if (e.schemaPath.startsWith(prefix)) return e.schemaPath.slice(prefix.length).split('/')[0]
  const alternatives: unknown[] = Array.isArray(c.schema) ? c.schema : []
  const index = alternatives.findIndex((branch) => isObject(branch) && typeof branch.$ref === 'string'
    && branch.$ref.startsWith('#/') && e.schemaPath.startsWith(branch.$ref + '/'))
  return index < 0 ? undefined : String(index)
}

/**
 * Reduces ajv errors to at most MAX_PROBLEMS readable problems for `doc`.
 * The rules, in order: drop `if` (ajv reports the failed `then`/`else` itself); drop the errors of
 * the alternatives a `oneOf` rejected for matching *too many* branches (the problem is elsewhere);
 * where an object has `$ref`, drop the complaints of the non-reference alternative about `$ref`, and
 * where it has none, drop "missing `$ref`"; for alternatives that ajv names by schema path, keep the
 * one that got furthest into the document; drop `oneOf`/`anyOf` summaries that have details; dedupe.
 */
export function ajvProblems(doc: unknown, errors: readonly ErrorObject[] | null | undefined): ProblemItem[] {
  if (!errors || errors.length === 0) return []
  let list = errors.filter((e) => e.keyword !== 'if')

  // oneOf that failed because several branches passed: the failing branches' errors are noise.
  const tooMany = list.filter((e) => e.keyword === 'oneOf' && Array.isArray((e.params as { passingSchemas?: unknown }).passingSchemas))
  for (const c of tooMany) {
    const prefix = c.schemaPath + '/'
    list = list.filter((e) => !e.schemaPath.startsWith(prefix))
  }

  // Reference-or-object alternatives (OpenAPI's `X | Reference`).
  list = list.filter((e) => {
    const node = valueAt(doc, e.instancePath)
    if (!isObject(node)) return true
    const hasRef = Object.prototype.hasOwnProperty.call(node, '$ref')
    const p = e.params as Record<string, unknown>
    if (!hasRef && e.keyword === 'required' && p.missingProperty === '$ref') return false
    if (hasRef && (e.keyword === 'additionalProperties' || e.keyword === 'unevaluatedProperties')) {
      const name = p.additionalProperty ?? p.unevaluatedProperty
      if (name === '$ref') return false
    }
    if (hasRef && e.keyword === 'required' && p.missingProperty !== '$ref') {
      // A reference object is complete with its `$ref`: other required members belong to the target.
      return !list.some((o) => o !== e && o.keyword !== 'required' && under(o.instancePath, e.instancePath))
    }
    return true
  })

  // Alternatives that ajv identifies by schema path (inlined branches). A branch refused by an
  // `enum`/`const` (a discriminator such as a parameter's `in`) was evidently not meant; among the
  // others keep the one that got furthest into the document. When every branch was refused that way,
  // say once what the allowed values are.
  for (const c of list.filter((e) => COMPOSITE.has(e.keyword))) {
    if (!list.includes(c)) continue
    const branches = new Map<string, ErrorObject[]>()
    for (const e of list) {
      const index = branchOf(c, e)
      if (index === undefined) continue
      const group = branches.get(index) ?? []
      group.push(e)
      branches.set(index, group)
    }
    if (branches.size < 2) continue
    const discriminated = (group: ErrorObject[]): boolean => group.some((e) => e.keyword === 'enum' || e.keyword === 'const')
    const depth = (group: ErrorObject[]): number => Math.max(...group.map((e) => e.instancePath.split('/').length))
    const groups = [...branches.values()]
    const meant = groups.filter((g) => !discriminated(g))
    const drop = new Set<ErrorObject>()
    const add: ErrorObject[] = []
    if (meant.length > 0) {
      let best: ErrorObject[] | undefined
      for (const group of meant) {
        if (!best || depth(group) > depth(best) || (depth(group) === depth(best) && group.length < best.length)) best = group
      }
      for (const group of groups) if (group !== best) for (const e of group) drop.add(e)
    } else {
      const allowed = new Map<string, unknown[]>()
      for (const group of groups) {
        for (const e of group) {
          drop.add(e)
          if (e.keyword !== 'enum' && e.keyword !== 'const') continue
          const p = e.params as { allowedValues?: unknown[]; allowedValue?: unknown }
          const values = allowed.get(e.instancePath) ?? []
          for (const v of e.keyword === 'enum' ? (p.allowedValues ?? []) : [p.allowedValue]) if (!values.includes(v)) values.push(v)
          allowed.set(e.instancePath, values)
        }
      }
      for (const [instancePath, allowedValues] of allowed) {
        add.push({ keyword: 'enum', instancePath, schemaPath: c.schemaPath, params: { allowedValues }, message: 'must be equal to one of the allowed values' })
      }
    }
    const at = list.indexOf(c)
    list = [...list.slice(0, at).filter((e) => !drop.has(e)), ...add, ...list.slice(at).filter((e) => !drop.has(e))]
  }

  // A failed `not: { required: [a, b] }` leaves a and b unevaluated too: one problem says it.
  for (const e of list.filter((x) => x.keyword === 'not')) {
    const names = mutuallyExclusive(e)
    if (!names) continue
    list = list.filter((o) => !(o.keyword === 'unevaluatedProperties' && o.instancePath === e.instancePath
      && names.includes(String((o.params as { unevaluatedProperty?: unknown }).unevaluatedProperty))))
  }

  // Summaries of alternatives are only worth showing when nothing more precise is left.
  list = list.filter((e) => !COMPOSITE.has(e.keyword) || !list.some((o) => o !== e && !COMPOSITE.has(o.keyword) && under(o.instancePath, e.instancePath)))

  const seen = new Set<string>()
  const problems: ProblemItem[] = []
  for (const e of list) {
    const problem = describe(doc, e)
    const key = JSON.stringify([problem.path, problem.message])
    if (seen.has(key)) continue
    seen.add(key)
    problems.push(problem)
    if (problems.length >= MAX_PROBLEMS) break
  }
  if (problems.length === 0) {
    // Everything was filtered as noise (should not happen): fall back to the first raw error.
    problems.push(describe(doc, errors[0]))
  }
  return problems
}
