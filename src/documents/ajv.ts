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

function load(id: string): AjvClass {
  const mod = require(id) as AjvClass & { default?: AjvClass }
  return mod.default ?? mod
}

export const Ajv07 = (): AjvClass => load('ajv')
export const Ajv04 = (): AjvClass => load('ajv-draft-04')
export const Ajv2019 = (): AjvClass => load('ajv/dist/2019')
export const Ajv2020 = (): AjvClass => load('ajv/dist/2020')

type AddFormats = (ajv: AjvInstance, options?: FormatsPluginOptions) => AjvInstance

export function addFormats(ajv: AjvInstance): AjvInstance {
  const mod = require('ajv-formats') as AddFormats & { default?: AddFormats }
  return (mod.default ?? mod)(ajv)
}

export function loadJson<T = unknown>(id: string): T {
  return require(id) as T
}

export interface MissingRefErrorLike extends Error {
  missingRef: string
  missingSchema: string
}

export function isMissingRefError(err: unknown): err is MissingRefErrorLike {
  return err instanceof Error && typeof (err as Partial<MissingRefErrorLike>).missingRef === 'string'
}
