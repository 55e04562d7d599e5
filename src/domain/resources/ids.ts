import { monotonicFactory } from 'ulid'

const ulid = monotonicFactory()

export const ULID_PATTERN = '^[0-9A-HJKMNP-TV-Z]{26}$'
const ULID = new RegExp(ULID_PATTERN)

export const newId = (): string => ulid()
/** RFC 3339 UTC with milliseconds. */
export const now = (): string => new Date().toISOString()

export const isUlid = (value: string): boolean => ULID.test(value)

/**
 * A resource named in a path by its id or its slug (docs/api.md, "Ids and slugs"). A ULID-shaped value
 * is looked up as an id first; anything else, and an id that names nothing, as a slug. Only a string of
 * 26 digits is both shapes, and no new slug may be one (see `checkSlug`): the fallback finds slugs
 * stored before that rule.
 */
export function resolveRef<T>(ref: string, byId: (id: string) => T | undefined, bySlug: (slug: string) => T | undefined): T | undefined {
  return (isUlid(ref) ? byId(ref) : undefined) ?? bySlug(ref)
}
