/**
 * The documents layer as the rest of the service sees it. Light to import: Spectral and the
 * validators load only inside the worker threads.
 */
export { DocumentWorkers } from './pool.js'
export type { DocumentWorkersOptions } from './pool.js'
export { DEFAULT_RULESET } from './defaults.js'
export { parseDocumentText, assertDocumentShape } from './parse.js'
export { canonicalJson, checksumOf } from './canonical.js'
export * from './types.js'
