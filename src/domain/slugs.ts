export const SLUG_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$'
export const SLUG_MAX_LENGTH = 64

/**
 * Derives a slug from a display name: accents dropped, lowercase, every run of other characters
 * becomes one `-`, at most 64 characters. A name with nothing usable falls back to `fallback`.
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
  return slug || fallback
}
