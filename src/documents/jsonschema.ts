/**
 * JSON Schema documents: valid against the metaschema of their `$schema` (draft-04, -06, -07, 2019-09,
 * 2020-12; 2020-12 when absent), every `$ref` resolvable inside the document, nothing fetched.
 */
import type { ValidateFunction } from 'ajv'
import { RegistryError } from '../errors.js'
import type { ProblemItem } from '../errors.js'
import { ajvProblems } from './ajv-problems.js'
import { Ajv04, Ajv07, Ajv2019, Ajv2020, addFormats, isMissingRefError, loadJson } from './ajv.js'
import type { AjvInstance } from './ajv.js'
import { MAX_PROBLEMS } from './limits.js'
import { lookupPointer } from './pointer.js'
import type { PathSegment } from './pointer.js'
import { externalRefMessage, fragmentSegments, quote } from './refs.js'

export type Draft = 'draft-04' | 'draft-06' | 'draft-07' | '2019-09' | '2020-12'

interface DraftInfo {
  /** The metaschema id as ajv registers it (no trailing `#`). */
  meta: string
  /** A new Ajv instance for this draft (with the draft's metaschema loaded). */
  create: (options: Record<string, unknown>) => AjvInstance
  /** The keyword that sets a base URI. */
  idKeyword: 'id' | '$id'
}

const DRAFT6_META = 'ajv/dist/refs/json-schema-draft-06.json'

const DRAFTS: Record<Draft, DraftInfo> = {
  'draft-04': {
    meta: 'http://json-schema.org/draft-04/schema',
    create: (o) => new (Ajv04())(o),
    idKeyword: 'id',
  },
  'draft-06': {
    meta: 'http://json-schema.org/draft-06/schema',
    create: (o) => {
      const ajv = new (Ajv07())({ ...o, meta: false })
      ajv.addMetaSchema(loadJson<object>(DRAFT6_META))
      return ajv
    },
    idKeyword: '$id',
  },
  'draft-07': {
    meta: 'http://json-schema.org/draft-07/schema',
    create: (o) => new (Ajv07())(o),
    idKeyword: '$id',
  },
  '2019-09': {
    meta: 'https://json-schema.org/draft/2019-09/schema',
    create: (o) => new (Ajv2019())(o),
    idKeyword: '$id',
  },
  '2020-12': {
    meta: 'https://json-schema.org/draft/2020-12/schema',
    create: (o) => new (Ajv2020())(o),
    idKeyword: '$id',
  },
}

export const SUPPORTED_SCHEMA_URIS = [
  'http://json-schema.org/draft-04/schema#',
  'http://json-schema.org/draft-06/schema#',
  'http://json-schema.org/draft-07/schema#',
  'https://json-schema.org/draft/2019-09/schema',
  'https://json-schema.org/draft/2020-12/schema',
]

/** Which draft a `$schema` value names (http or https, with or without the trailing `#`), or null. */
export function draftOf(schemaUri: string): Draft | null {
  const m = /^https?:\/\/json-schema\.org\/(?:(draft-0[467])\/schema|draft\/(2019-09|2020-12)\/schema)#?$/.exec(schemaUri.trim())
  if (!m) return null
  return (m[1] ?? m[2]) as Draft
}

const metaValidators = new Map<Draft, ValidateFunction>()

function metaValidator(draft: Draft): ValidateFunction {
  let validate = metaValidators.get(draft)
  if (!validate) {
    const info = DRAFTS[draft]
    const ajv = info.create({ allErrors: true, strict: false, logger: false, unicodeRegExp: false })
    addFormats(ajv)
    const found = ajv.getSchema(info.meta)
    if (!found) throw new Error(`metaschema ${info.meta} is not loaded`)
    validate = found as ValidateFunction
    metaValidators.set(draft, validate)
  }
  return validate
}

/** Compiles every metaschema validator now (worker start-up). */
export function warmJsonSchema(): void {
  for (const draft of Object.keys(DRAFTS) as Draft[]) metaValidator(draft)
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** Keywords whose object value maps names to subschemas (the names are not keywords). */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'])
/** Keywords whose values are instance data, not schemas: a `$ref` in there is just data. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'example'])

const SYNTHETIC_BASE = 'https://registry.invalid/schema.json'

function resolveUri(ref: string, base: string): string | null {
  try {
    return new URL(ref, base).href
  } catch {
    return null
  }
}

function withoutFragment(uri: string): string {
  const i = uri.indexOf('#')
  return i === -1 ? uri : uri.slice(0, i)
}

interface RefSite {
  ref: string
  path: PathSegment[]
  /** Absolute URI the reference resolves to, or null when it cannot be resolved as a URI. */
  resolved: string | null
  /** The base URI in scope where the `$ref` sits. */
  base: string
}

/** Collects `$ref`s and the document's own resource URIs (`$id`s), tracking base URIs. Iterative. */
function scan(doc: Record<string, unknown>, draft: Draft): { refs: RefSite[]; own: Set<string>; rootBase: string } {
  const idKeyword = DRAFTS[draft].idKeyword
  const own = new Set<string>()
  const rootId = typeof doc[idKeyword] === 'string' ? (doc[idKeyword] as string) : undefined
  const rootBase = (rootId !== undefined && resolveUri(rootId, SYNTHETIC_BASE)) || SYNTHETIC_BASE
  own.add(withoutFragment(rootBase))
  const refs: RefSite[] = []
  interface Frame {
    node: unknown
    base: string
    path: PathSegment[]
    names: boolean
  }
  const stack: Frame[] = [{ node: doc, base: SYNTHETIC_BASE, path: [], names: false }]
  while (stack.length > 0) {
    const { node, base: outer, path, names } = stack.pop()!
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) {
        if (node[i] !== null && typeof node[i] === 'object') stack.push({ node: node[i], base: outer, path: [...path, i], names: false })
      }
      continue
    }
    if (!isObject(node)) continue
    const keys = Object.keys(node)
    if (names) {
      for (let i = keys.length - 1; i >= 0; i--) {
        const v = node[keys[i]]
        if (v !== null && typeof v === 'object') stack.push({ node: v, base: outer, path: [...path, keys[i]], names: false })
      }
      continue
    }
    let base = outer
    const id = node[idKeyword]
    if (typeof id === 'string') {
      const resolved = resolveUri(id, outer)
      if (resolved !== null) {
        base = resolved
        own.add(withoutFragment(resolved))
      }
    }
    const ref = node.$ref
    if (typeof ref === 'string') refs.push({ ref, path, resolved: resolveUri(ref, base), base })
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]
      const v = node[key]
      if (v === null || typeof v !== 'object' || DATA_KEYWORDS.has(key)) continue
      stack.push({ node: v, base, path: [...path, key], names: SCHEMA_MAPS.has(key) && isObject(v) })
    }
  }
  return { refs, own, rootBase }
}

function refProblems(doc: Record<string, unknown>, draft: Draft): ProblemItem[] {
  const { refs, own, rootBase } = scan(doc, draft)
  const metas = new Set(Object.values(DRAFTS).map((d) => d.meta))
  const problems: ProblemItem[] = []
  for (const site of refs) {
    if (problems.length >= MAX_PROBLEMS) break
    if (site.resolved === null) {
      problems.push({ path: site.path, message: `unresolvable $ref ${quote(site.ref)}: not a valid URI reference here` })
      continue
    }
    const target = withoutFragment(site.resolved)
    if (!own.has(target)) {
      // A metaschema is built into the validator: referring to it fetches nothing.
      if (metas.has(target.replace(/^https:\/\/json-schema\.org\/draft-0/, 'http://json-schema.org/draft-0'))) continue
      problems.push({ path: site.path, message: externalRefMessage(site.ref) })
      continue
    }
    // A plain JSON pointer into the root resource can be checked here, for every reference at once.
    if (site.ref.startsWith('#/') && withoutFragment(site.base) === withoutFragment(rootBase)) {
      const segments = fragmentSegments(site.ref)
      const found = segments === null ? { found: false as const, reason: 'not a valid JSON pointer' } : lookupPointer(doc, segments)
      if (!found.found) problems.push({ path: site.path, message: `unresolvable $ref ${quote(site.ref)}: ${found.reason}` })
    }
  }
  return problems
}

/**
 * Compiles the schema with a fresh validator of its draft and no way to load anything, so every
 * remaining reference problem (a `$ref` into a nested `$id`, an anchor) shows up as ajv's MissingRefError.
 */
function compileProblems(doc: Record<string, unknown>, draft: Draft): ProblemItem[] {
  const ajv = DRAFTS[draft].create({
    strict: false,
    logger: false,
    validateSchema: false,
    validateFormats: false,
    inlineRefs: false,
    unicodeRegExp: false,
    addUsedSchema: false,
  })
  try {
    ajv.compile(doc)
    return []
  } catch (err) {
    if (isMissingRefError(err)) {
      return [{ path: [], message: `unresolvable $ref ${quote(err.missingRef)}: no schema in this document has that URI` }]
    }
    const message = err instanceof Error ? err.message : String(err)
    return [{ path: [], message: `the schema cannot be compiled: ${message.split('\n')[0]}` }]
  }
}

/**
 * Validates a JSON Schema document. Throws `invalid_document` for an unknown `$schema`; returns the
 * problems (metaschema violations, then references) otherwise — empty when the schema is valid.
 */
export function validateJsonSchema(doc: unknown): ProblemItem[] {
  if (!isObject(doc)) {
    // JSON Schema allows `true`/`false` as schemas, but the registry stores objects only.
    throw new RegistryError('invalid_document', 'the document must be an object', [{ message: 'the document must be an object', path: [] }])
  }
  let draft: Draft = '2020-12'
  if (doc.$schema !== undefined) {
    const named = typeof doc.$schema === 'string' ? draftOf(doc.$schema) : null
    if (named === null) {
      const shown = typeof doc.$schema === 'string' ? quote(doc.$schema) : JSON.stringify(doc.$schema)
      const detail = `$schema ${shown} is not supported: use one of ${SUPPORTED_SCHEMA_URIS.join(', ')} (or leave it out for 2020-12)`
      throw new RegistryError('invalid_document', detail, [{ message: detail, path: ['$schema'] }])
    }
    draft = named
  }
  const validate = metaValidator(draft)
  if (!validate(doc)) return ajvProblems(doc, validate.errors)
  const problems = refProblems(doc, draft)
  if (problems.length > 0) return problems
  return compileProblems(doc, draft)
}
