/** Limits of the documents layer, in one place so the docs and the tests agree. */

/** Deepest nesting of objects/arrays accepted in any document. */
export const MAX_DEPTH = 256

/**
 * YAML aliases allowed per document (the `yaml` package's `maxAliasCount`, which also weighs aliases
 * nested in aliased nodes): enough for real documents, far too few for an alias bomb.
 */
export const MAX_ALIAS_COUNT = 100

/** Most problems reported for one document (validators can produce thousands). */
export const MAX_PROBLEMS = 50

/**
 * YAML aliases may make the parsed document at most this many times larger (in nodes) than the
 * YAML text's own nodes; documents of up to MIN_EXPANSION_ALLOWANCE nodes after expansion always pass.
 */
export const MAX_EXPANSION = 20
export const MIN_EXPANSION_ALLOWANCE = 1_000_000
