/**
 * Compiled JSON Schema validators of Spectral's `schema` function, kept by the schema's canonical text
 * (issue 19; docs/lint.md). Spectral caches them by schema object in Ajv instances it makes for every
 * document, so every lint compiled every example's schema again, once per resolved copy: 57 % of a
 * 500 KB lint was Ajv's code generation. A validator is a pure function of the schema, its dialect and
 * the Ajv options, so one kept by text gives the same findings.
 *
 * Spectral's `createAjvInstances` (which its `schema` function calls once per document) is wrapped:
 * schemas are looked up by dialect, `allErrors` and canonical JSON in a bounded cache, compiled on a miss
 * with Spectral's own instances kept for the worker. A schema that names itself (`$id`, or draft-04's
 * `id`) is left to the document's own instances, as before: a shared Ajv would answer an id it saw in
 * another document. So is a schema that refers to another by URI (a `$ref` not starting with `#`, or a
 * `$schema`): the document's instances resolve it to the schema of that `$id` when they compiled that
 * one earlier in the same lint, which a shared Ajv (never given a schema with an id) cannot; the lint
 * differential found this (an OpenAPI 3.1 `$ref` to a component's `$id`). So is a schema that contains itself (it has no
 * text). The shared instances are replaced every ROTATE compilations: Ajv keeps every schema
 * it compiled, so they would otherwise grow without end (a validator keeps its own instance alive).
 */
import { createRequire } from 'node:module'
import stableStringify from 'fast-json-stable-stringify'
import { LRUCache } from 'lru-cache'
import { withUniqueItemsFastPath } from './unique-items-fast-path.js'

type Validator = ((data: unknown) => boolean) & { errors?: unknown }
type Compile = (schema: object, dialect: string, allErrors: boolean) => Validator
interface SpectralAjv { createAjvInstances: () => Compile }

/** Validators kept, at most. */
const KEPT = 5000
/** Compilations after which the shared Ajv instances are replaced. */
const ROTATE = 1000

const require = createRequire(import.meta.url)
let spectralRequire: NodeJS.Require | undefined
/** `require` as Spectral's functions have it: their copy of Ajv, and from there what that Ajv loads. */
const requireFromSpectral = (): NodeJS.Require => (spectralRequire ??= createRequire(require.resolve('@stoplight/spectral-functions')))
const validators = new LRUCache<string, Validator>({ max: KEPT })
let enabled = true
let installed = false
let compiled = 0

/** Validators compiled and kept since the worker started (a warm lint adds none). */
export const compiledValidators = (): number => compiled

/** Turns the cache off and on (the differential test compares the findings both ways). */
export function useValidatorCache(on: boolean): void {
  enabled = on
  validators.clear()
}

/** Wraps Spectral's Ajv instances once per worker; call before Spectral lints. */
export function installValidatorCache(): void {
  if (installed) return
  installed = true
  const spectralAjv = require('@stoplight/spectral-functions/dist/schema/ajv.js') as SpectralAjv
  compileSharedUnoptimized()
  const original = spectralAjv.createAjvInstances
  let shared: Compile | undefined
  let rotateAt = 0
  spectralAjv.createAjvInstances = () => {
    const perDocument = original()
    return (schema, dialect, allErrors) => {
      if (!enabled) return perDocument(schema, dialect, allErrors)
      const text = canonicalText(schema)
      if (text === undefined) return perDocument(schema, dialect, allErrors)
      const key = `${dialect}\n${allErrors ? 1 : 0}\n${text}`
      // Only a schema that names nothing and refers to nothing by URI is ever kept (a function of its text).
      let validator = validators.get(key)
      if (!validator) {
        if (namesItself(schema, text, dialect) || refersByUri(text)) return perDocument(schema, dialect, allErrors)
        if (shared === undefined || compiled >= rotateAt) {
          shared = original()
          rotateAt = compiled + ROTATE
        }
        // A schema Ajv cannot compile (a $ref into the document) throws as before, and Spectral handles
        // it as before: nothing is kept, so it throws again next time.
        compilingShared = true
        try {
          validator = withUniqueItemsFastPath(text, shared(schema, dialect, allErrors))
        } finally {
          compilingShared = false
        }
        compiled += 1
        validators.set(key, validator)
      }
      return validator
    }
  }
}

interface AjvCore {
  opts: { code: { optimize?: number | boolean } }
  compile(schema: unknown, meta?: boolean): unknown
}

/** True while the cache's own Ajv instances compile (never while Spectral's per-document ones do). */
let compilingShared = false

/**
 * The cache's Ajv instances compile with Ajv's `code.optimize` at 0: Ajv's passes that tidy the
 * generated code (dropping unused names, folding constants) are skipped, and the validator checks
 * the same things with the same errors. Those passes were 4.2 s of the 9.1 s Ajv spent compiling in
 * a 40 s lint of the 5 MB document (docs/lint.md). Spectral makes its instances with fixed options,
 * so the option is set on an instance when it first compiles for the cache, through Ajv's `compile`
 * (Spectral's copy of Ajv: every dialect's class extends its core).
 */
function compileSharedUnoptimized(): void {
  const core = (requireFromSpectral()('ajv/dist/core') as { default: { prototype: AjvCore } }).default.prototype
  const compile = core.compile
  core.compile = function (this: AjvCore, schema: unknown, meta?: boolean) {
    if (compilingShared) this.opts.code.optimize = 0
    return compile.call(this, schema, meta)
  }
}

/** The schema's canonical JSON; undefined for a schema that contains itself (a resolved recursive one). */
function canonicalText(schema: object): string | undefined {
  try {
    return stableStringify(schema)
  } catch {
    return undefined
  }
}

/**
 * True when the schema text holds `$id` as a member name anywhere, or, in draft-04, when Ajv would
 * read an `id` of it as a name (hasAjvId). A property called `id` (`"properties":{"id":{…}}`), which
 * half the schemas of an API have, names nothing: such schemas went to the document's own instances,
 * compiled again at every lint with a draft-04 instance made for it (its meta-schema compiled too).
 */
function namesItself(schema: object, text: string, dialect: string): boolean {
  return text.includes('"$id":') || (dialect === 'draft4' && text.includes('"id":') && hasAjvId(schema))
}

type Traverse = (schema: unknown, options: { allKeys: boolean }, visit: (schema: Record<string, unknown>) => void) => void
let traverse: Traverse | undefined

/**
 * Whether Ajv finds a draft-04 `id` in the schema: a string `id` of the root or of an object its
 * reading of a schema's names visits (ajv/dist/compile/resolve.js getSchemaRefs), found with the very
 * json-schema-traverse it uses, with its `allKeys`. So an `example` object with a string `id` counts
 * (Ajv reads it as a schema with a name), and a property called `id` does not.
 */
function hasAjvId(schema: object): boolean {
  traverse ??= createRequire(requireFromSpectral().resolve('ajv'))('json-schema-traverse') as Traverse
  let found = false
  traverse(schema, { allKeys: true }, (visited) => { if (typeof visited.id === 'string') found = true })
  return found
}

/**
 * True when the schema text holds a `$ref` (or `$dynamicRef`, `$recursiveRef`) whose value is not a
 * fragment of the schema itself (`#…`), or a `$schema`: a URI, looked up among the ids the Ajv
 * instance has seen.
 */
function refersByUri(text: string): boolean {
  return /"\$(?:ref|dynamicRef|recursiveRef)":"(?!#)|"\$schema":"/.test(text)
}
