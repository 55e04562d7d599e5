import { Ajv } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

// Bodies are checked exactly: no type coercion and no silent removal of unknown fields (they answer
// 400). Query strings and path parameters arrive as text, so those coerce ("2" → 2).
const exact = addFormats(new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, strict: false, allErrors: true }))
const coercing = addFormats(new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: false, strict: false, allErrors: true }))

export const compileValidator: FastifySchemaCompiler<any> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? exact : coercing).compile(schema as object) as ReturnType<FastifySchemaCompiler<any>>

/** Upload bodies are data for a worker to parse and check, never request shape for Fastify. */
export const uploadValidatorCompiler: FastifySchemaCompiler<any> = (route) =>
  route.httpPart === 'body' ? () => true : compileValidator(route)
