import { invalidRequest } from '../../errors.js'
import { isUlid } from './ids.js'

export const SLUG_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$'
export const SLUG_MAX_LENGTH = 64

/**
 * A slug names a resource in paths where its id does too, so it may not look like an id: 26 digits
 * would (ULIDs are 26 Crockford base32 characters, slugs lowercase; only digits are both).
 */
export function checkSlug(slug: string | undefined, field = 'slug'): void {
  if (slug !== undefined && isUlid(slug)) {
    throw invalidRequest(`a ${field} of 26 digits would read as an id; add a letter or a hyphen`, [
      { path: [field], message: 'looks like an id (ULID)' },
    ])
  }
}

/**
 * Derives a slug from a display name: accents dropped, lowercase, every run of other characters
 * becomes one `-`, at most 64 characters. A name with nothing usable falls back to `fallback`; one
 * that gives 26 digits (an id's shape) gets `-<fallback>` after them.
 */
export function deriveSlug(name: string, fallback: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX_LENGTH)
    .replace(/-+$/, '')
  if (isUlid(slug)) return `${slug}-${fallback}`
  return slug || fallback
}
