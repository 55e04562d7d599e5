/**
 * An `operationId` for every operation of `/openapi.json` whose route names none (issue 18, item 8):
 * generated clients name their methods after it. It is the method and the path's words, each collection
 * word singular where an id or slug follows it: `GET /v1/apis/{api}/versions` is `getApiVersions`,
 * `POST /v1/apis/{api}/versions/{version}/restore` is `postApiVersionRestore`, and the public registry's
 * `/@{org}/…` reads as `public`: `GET /@{org}/apis/{slug}` is `getPublicApi`. Unique because the paths are.
 */

/** `apis` → `api`, `deliveries` → `delivery`; other words as they are. */
function singular(word: string): string {
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`
  if (word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1)
  return word
}

const capitalized = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1)

/** The words of one path segment: `reference-parts` → `Reference`, `Parts`; `openapi.json` → `Openapi`, `Json`. */
const wordsOf = (segment: string): string[] => segment.split(/[^A-Za-z0-9]+/).filter(Boolean).map(capitalized)

export function operationIdOf(method: string, url: string): string {
  const segments = url.split('/').filter(Boolean)
  const words: string[] = []
  segments.forEach((segment, i) => {
    if (segment === 'v1') return
    if (segment.startsWith('@')) return words.push('Public')
    if (segment.startsWith(':') || segment.startsWith('{')) return
    const next = segments[i + 1]
    const named = next !== undefined && (next.startsWith(':') || next.startsWith('{'))
    const parts = wordsOf(segment.replace(/[:{].*$/, ''))
    if (named && parts.length > 0) parts[parts.length - 1] = capitalized(singular(parts[parts.length - 1].toLowerCase()))
    words.push(...parts)
  })
  return method.toLowerCase() + (words.length > 0 ? words.join('') : 'Root')
}
