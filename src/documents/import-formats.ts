/**
 * Which documents an API takes besides OpenAPI 3 and converts on upload (docs/api.md, "Uploading a
 * document"): a Swagger 2.0 document, or a Postman collection v2.0 or v2.1. Only the recognition is
 * here, with no dependency, so that the CLI can tell too; the conversion is import.ts (in a worker).
 */

/** What an API version was converted from (`converted_from` in its record and view). */
export type ConvertedFrom = 'swagger-2.0' | 'postman-2.0' | 'postman-2.1'

export const CONVERTED_FROM: readonly ConvertedFrom[] = ['swagger-2.0', 'postman-2.0', 'postman-2.1']

/** What the user would call each (messages). */
export const CONVERTED_FROM_NAMES: Record<ConvertedFrom, string> = {
  'swagger-2.0': 'Swagger 2.0',
  'postman-2.0': 'Postman collection v2.0',
  'postman-2.1': 'Postman collection v2.1',
}

/** `info.schema` of a Postman collection v2.0.x or v2.1.x (schema.getpostman.com, or schema.postman.com). */
const POSTMAN_SCHEMA = /^https?:\/\/schema\.(?:get)?postman\.com\/json\/collection\/v2\.([01])\.\d+(?:\/|$)/

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/**
 * What a parsed document is when it is one of those an API converts: a document with no `openapi`
 * whose `swagger` is "2.0" (or the number 2, as YAML reads an unquoted `swagger: 2.0`), or whose
 * `info.schema` names the Postman collection format v2.0 or v2.1. Anything else (OpenAPI 3, Swagger
 * 1.x, a Postman v1 collection, not an API description at all) is undefined: validated as it is.
 */
export function convertibleFormatOf(document: unknown): ConvertedFrom | undefined {
  if (!isObject(document) || document.openapi !== undefined) return undefined
  if (document.swagger === '2.0' || document.swagger === 2) return 'swagger-2.0'
  if (document.swagger !== undefined || !isObject(document.info) || typeof document.info.schema !== 'string') return undefined
  const postman = POSTMAN_SCHEMA.exec(document.info.schema)
  return postman ? (postman[1] === '0' ? 'postman-2.0' : 'postman-2.1') : undefined
}
