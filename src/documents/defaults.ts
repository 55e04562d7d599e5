/**
 * Constants the main thread needs without loading Spectral (kept apart from ruleset.ts, which loads
 * the whole of Spectral and only ever runs inside the worker threads).
 */

export interface DefaultRulesetDocument {
  readonly extends: readonly (readonly [string, 'recommended'])[]
}

/** The ruleset used when a ruleset is created without a document: Spectral's recommended OpenAPI rules. */
export const DEFAULT_RULESET: DefaultRulesetDocument = Object.freeze({
  extends: Object.freeze([Object.freeze(['spectral:oas', 'recommended'] as const)]),
})
