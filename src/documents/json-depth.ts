/**
 * Whether JSON text nests objects and arrays deeper than `limit`, found by one pass over its
 * characters (brackets inside strings do not count), before any of it is parsed: a payload that is
 * only brackets would otherwise be parsed into as many nested objects first.
 */
export function jsonDeeperThan(text: string, limit: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // a backslash escapes the next character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) {
      inString = true
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true
    } else if (c === 0x7d || c === 0x5d) {
      depth--
    }
  }
  return false
}
