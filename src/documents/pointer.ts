/** JSON pointers (RFC 6901) over untrusted documents: decoding, resolving, and problem paths. */

export type PathSegment = string | number

function hasOwn(obj: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key)
}

/** Decodes one pointer segment (`~1` is `/`, `~0` is `~`, in that order). */
export function unescapeSegment(segment: string): string {
  return segment.indexOf('~') === -1 ? segment : segment.replace(/~1/g, '/').replace(/~0/g, '~')
}

/** Splits a JSON pointer (`/a/b~1c`, or `` for the whole document) into raw string segments. */
export function pointerSegments(pointer: string): string[] | null {
  if (pointer === '') return []
  if (!pointer.startsWith('/')) return null
  return pointer.slice(1).split('/').map(unescapeSegment)
}

/**
 * Turns pointer segments into problem-path segments: a segment that indexes an array in `doc`
 * becomes a number, everything else stays a string. Walks `doc` alongside, as far as it goes.
 */
export function toProblemPath(doc: unknown, segments: readonly string[]): PathSegment[] {
  const path: PathSegment[] = []
  let node: unknown = doc
  for (const segment of segments) {
    if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(segment)) {
      path.push(Number(segment))
      node = node[Number(segment)]
    } else {
      path.push(segment)
      node = node !== null && typeof node === 'object' && hasOwn(node, segment) ? (node as Record<string, unknown>)[segment] : undefined
    }
  }
  return path
}

/** `toProblemPath` for an ajv `instancePath` (a JSON pointer). */
export function instancePathToPath(doc: unknown, instancePath: string): PathSegment[] {
  const segments = pointerSegments(instancePath)
  return segments === null ? [] : toProblemPath(doc, segments)
}

export type Lookup = { found: true; value: unknown } | { found: false; reason: string }

/**
 * Looks a pointer's segments up in `doc`, using own properties only (a `__proto__` or `toString`
 * segment never reaches Object.prototype). When a segment is missing and the node it was looked up in
 * is itself a `$ref` object, the reference is followed (at most `maxHops` times in all), as resolvers do.
 */
export function lookupPointer(
  doc: unknown,
  segments: readonly string[],
  followRef?: (ref: string) => string[] | null,
  maxHops = 32,
): Lookup {
  let node: unknown = doc
  let hops = 0
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]
    if (Array.isArray(node)) {
      if (!/^(0|[1-9]\d*)$/.test(segment) || Number(segment) >= node.length) {
        return { found: false, reason: `'${segment}' is not an index of the array at '/${encodePointer(segments.slice(0, i))}'` }
      }
      node = node[Number(segment)]
      continue
    }
    if (node !== null && typeof node === 'object') {
      if (hasOwn(node, segment)) {
        node = (node as Record<string, unknown>)[segment]
        continue
      }
      const ref = (node as Record<string, unknown>).$ref
      if (followRef && hasOwn(node, '$ref') && typeof ref === 'string' && hops < maxHops) {
        const target = followRef(ref)
        if (target !== null) {
          hops++
          const via = lookupPointer(doc, target, followRef, maxHops - hops)
          if (via.found) {
            node = via.value
            i-- // look the same segment up again in the referenced node
            continue
          }
        }
      }
      return { found: false, reason: `'${segment}' does not exist` }
    }
    return { found: false, reason: `'${segment}' does not exist` }
  }
  return { found: true, value: node }
}

export function encodePointer(segments: readonly PathSegment[]): string {
  return segments.map((s) => String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')
}
