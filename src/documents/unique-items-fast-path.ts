/**
 * A fast path for the one schema Spectral checks on every enum: `{type: 'array', uniqueItems: true}`
 * (spectral:oas's `duplicated-entry-in-enum`, through `oasSchema`). Ajv's validator of it compares
 * every pair of items with a deep equality, so an enum of 700 instance types costs 245,000
 * comparisons, once per place the resolved document reaches it: 0.8 s of a 7 s lint of
 * `amazonaws.com--ec2` (docs/lint.md). An array of scalars whose items are all different is valid:
 * one pass over a Set says so, and the answer is Ajv's (`true`, no errors). Anything else (an item
 * that is an object or an array, a duplicate, not an array) is left to Ajv's validator, whose answer
 * and errors are passed on, so the findings are Ajv's in every case.
 *
 * A Set compares as fast-deep-equal (Ajv's `equal`) does on scalars: `===`, except that NaN equals
 * NaN in both.
 */
type Validator = ((data: unknown) => boolean) & { errors?: unknown }

/** The schema's canonical text (fast-json-stable-stringify). */
export const UNIQUE_ARRAY_SCHEMA = '{"type":"array","uniqueItems":true}'

/** Ajv's validator of the schema of this canonical text, with the fast path when it is the unique-array schema. */
export function withUniqueItemsFastPath(text: string, validator: Validator): Validator {
  if (text !== UNIQUE_ARRAY_SCHEMA) return validator
  const fast: Validator = (data) => {
    if (Array.isArray(data) && distinctScalars(data)) {
      fast.errors = null
      return true
    }
    const valid = validator(data)
    fast.errors = validator.errors
    return valid
  }
  return fast
}

function distinctScalars(items: readonly unknown[]): boolean {
  const seen = new Set<unknown>()
  for (const item of items) {
    if ((item !== null && typeof item === 'object') || seen.has(item)) return false
    seen.add(item)
  }
  return true
}
