/** OpenAPI 3.0 / 3.1 / 3.2 validation against the official schemas, plus `$ref` checks (CONTRACT §5). */
import type { ValidateFunction } from 'ajv'
import { RegistryError } from '../errors.js'
import type { ProblemItem } from '../errors.js'
import { ajvProblems } from './ajv-problems.js'
import { Ajv04, Ajv2020, addFormats, openApiMetaschema } from './ajv.js'
import type { AjvInstance, OpenApiLine } from './ajv.js'
import { MAX_PROBLEMS } from './limits.js'
import { checkOpenApiRefs, quote } from './refs.js'

export interface OpenApiSummary {
  openapi: string
  title: string
  version: string
}

export interface OpenApiValidation {
  problems: ProblemItem[]
  summary: OpenApiSummary
}

type Json = Record<string, unknown>

function clone<T>(value: T): T {
  return structuredClone(value)
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function configure(ajv: AjvInstance): AjvInstance {
  addFormats(ajv)
  // OpenAPI's own format for media-type ranges (`application/*`): any string.
  ajv.addFormat('media-range', true)
  return ajv
}

/**
 * ajv resolves the Schema Object's `$dynamicRef: "#meta"` (the 3.1 and 3.2 schemas' hook for another
 * JSON Schema dialect) wrongly: it rejects every schema with `type` or `properties`. A plain `$ref` to
 * the same `$defs/schema` (an object or a boolean) is what the default dialect means, as
 * swagger-parser and Redocly do too. The other hand repairs the first published 3.1 schema needed are
 * gone: the current schemas fixed them.
 */
function resolveDynamicMeta(schema: Json): Json {
  const stack: unknown[] = [schema]
  while (stack.length > 0) {
    const node = stack.pop()
    if (!isObject(node) && !Array.isArray(node)) continue
    for (const value of Object.values(node)) {
      if (isObject(value) && value.$dynamicRef === '#meta') {
        delete value.$dynamicRef
        value.$ref = '#/$defs/schema'
      }
      if (value !== null && typeof value === 'object') stack.push(value)
    }
  }
  const defs = schema.$defs as Record<string, Json>
  delete defs.schema.$dynamicAnchor
  return schema
}

const validators = new Map<OpenApiLine, ValidateFunction>()

function validatorFor(line: OpenApiLine): ValidateFunction {
  let validate = validators.get(line)
  if (!validate) {
    const schema = clone(openApiMetaschema(line) as Json)
    // verbose: a failed `not` carries its schema, so that the problem can name the members it forbids.
    const options = { allErrors: true, strict: false, logger: false as const, verbose: true }
    validate = line === '3.0'
      ? configure(new (Ajv04())(options)).compile(schema)
      : configure(new (Ajv2020())(options)).compile(resolveDynamicMeta(schema))
    validators.set(line, validate)
  }
  return validate
}

/** Compiles the schemas now (a worker does this when it starts, so the first upload is not slow). */
export function warmOpenApi(line: OpenApiLine): void {
  validatorFor(line)
}

/** The OpenAPI line of an `openapi` value (`3.1.1` → `3.1`), or undefined when not supported. */
export function openApiLine(version: string): OpenApiLine | undefined {
  const match = /^3\.([012])\.\d+(-.+)?$/.exec(version)
  return match ? (`3.${match[1]}` as OpenApiLine) : undefined
}

function refuse(detail: string, path: (string | number)[] = []): never {
  throw new RegistryError('invalid_document', detail, [{ message: detail, path }])
}

/**
 * Validates an OpenAPI document (already parsed and shape-checked). Throws `invalid_document` when it
 * is not OpenAPI 3.0/3.1/3.2 at all (Swagger 2.0, a missing or unsupported `openapi`); otherwise returns the
 * problems (schema violations first, then `$ref` problems) and the summary.
 *
 * `changedPart`: the document without the members of `paths`, `webhooks` and the `components` maps that
 * an earlier valid version with the same rest held as they are (incremental-lint.ts, `unitsNotIn`). The
 * official schemas check each of those members on its own (no constraint between two paths or two
 * components), so the document is valid against them when this part is; when it is not, the whole
 * document is validated, for the problems a whole validation reports. `$ref`s are checked whole.
 */
export function validateOpenApi(doc: unknown, changedPart?: Json): OpenApiValidation {
  if (!isObject(doc)) refuse('the document must be an object')
  const version = doc.openapi
  if (version === undefined) {
    if (doc.swagger !== undefined) {
      refuse(
        `Swagger ${typeof doc.swagger === 'string' ? doc.swagger : '2.0'} is not supported: convert the document to OpenAPI 3 (3.0, 3.1 or 3.2) first`,
        ['swagger'],
      )
    }
    refuse("not an OpenAPI document: the 'openapi' member (e.g. \"3.1.0\") is missing")
  }
  if (typeof version !== 'string') refuse(`'openapi' must be a string such as "3.1.0", not ${JSON.stringify(version)}`, ['openapi'])
  const line = openApiLine(version)
  if (!line) refuse(`OpenAPI version ${quote(version)} is not supported: use 3.0.x, 3.1.x or 3.2.x`, ['openapi'])
  const validate = validatorFor(line)

  const problems: ProblemItem[] = []
  if (!(changedPart && validate(changedPart)) && !validate(doc)) problems.push(...ajvProblems(doc, validate.errors))
  if (problems.length < MAX_PROBLEMS) problems.push(...checkOpenApiRefs(doc).slice(0, MAX_PROBLEMS - problems.length))

  const info = isObject(doc.info) ? doc.info : {}
  return {
    problems,
    summary: {
      openapi: version,
      title: typeof info.title === 'string' ? info.title : '',
      version: typeof info.version === 'string' ? info.version : '',
    },
  }
}
