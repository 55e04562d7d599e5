/** What a generator is given and what it answers (crosses the worker thread boundary: plain data). */
import type { SdkConfig, SdkTarget } from '../storage/records.js'

export interface GeneratorApi {
  slug: string
  name: string
  /** The parsed OpenAPI document. */
  document: Record<string, unknown>
}

export interface GenerateTask {
  target: SdkTarget
  sdk: { name: string; slug: string }
  config: SdkConfig
  apis: GeneratorApi[]
}

/** One generated file: a path relative to the package root (forward slashes) and its text. */
export interface GeneratedFile {
  path: string
  content: string
}

/** Sorts by path (code unit order) so every consumer sees the same order. */
export const sortFiles = (files: GeneratedFile[]): GeneratedFile[] =>
  [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
