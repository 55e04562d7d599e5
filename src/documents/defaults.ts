/**
 * Constants the main thread needs without loading Spectral (kept apart from ruleset.ts, which loads
 * the whole of Spectral and only ever runs inside the worker threads).
 */

/** The ruleset used when a ruleset is created without a document. */
export const DEFAULT_RULESET: { extends: [string, 'recommended'][] } = Object.freeze({
  extends: [['spectral:oas', 'recommended']],
}) as { extends: [string, 'recommended'][] }
