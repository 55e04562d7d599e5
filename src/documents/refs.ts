/** Finding and checking `$ref`s in untrusted documents, without ever fetching or reading anything. */
import type { ProblemItem } from '../errors.js'
import { MAX_PROBLEMS } from './limits.js'
import { lookupPointer, pointerSegments } from './pointer.js'
import type { PathSegment } from './pointer.js'

export interface RefSite {
  ref: string
  /** Where the `$ref` member sits (the path of the object that holds it). */
  path: PathSegment[]
}

/**
 * Every object member named `$ref` whose value is a string, in document order, with its path.
 * Iterative, so depth is no risk. A node's path is kept as a link to its parent's, and written out only
 * for a `$ref` (copying it for every object of a large document cost more than the walk).
 */
export function collectRefs(doc: unknown): RefSite[] {
  const sites: RefSite[] = []
  interface Frame {
    node: unknown
    parent: Frame | undefined
    key: PathSegment
  }
  const pathOf = (frame: Frame): PathSegment[] => {
    const path: PathSegment[] = []
    for (let at: Frame | undefined = frame; at?.parent; at = at.parent) path.push(at.key)
    return path.reverse()
  }
  const stack: Frame[] = [{ node: doc, parent: undefined, key: '' }]
  while (stack.length > 0) {
    const frame = stack.pop()!
    const node = frame.node
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) {
        const v: unknown = node[i]
        if (v !== null && typeof v === 'object') stack.push({ node: v, parent: frame, key: i })
      }
    } else if (node !== null && typeof node === 'object') {
      const obj = node as Record<string, unknown>
      const keys = Object.keys(obj)
      if (Object.prototype.hasOwnProperty.call(obj, '$ref') && typeof obj.$ref === 'string') sites.push({ ref: obj.$ref, path: pathOf(frame) })
      for (let i = keys.length - 1; i >= 0; i--) {
        const v = obj[keys[i]]
        if (v !== null && typeof v === 'object') stack.push({ node: v, parent: frame, key: keys[i] })
      }
    }
  }
  return sites
}

/** Quotes a value for a message, shortened so a hostile 1 MB `$ref` does not fill the response. */
export function quote(value: string, max = 200): string {
  const shown = value.length > max ? value.slice(0, max) + '…' : value
  return `'${shown}'`
}

export function externalRefMessage(ref: string): string {
  return `external $ref ${quote(ref)} is not allowed: the registry never fetches files or URLs; bundle the document first`
}

/** Segments of the JSON pointer in a `#…` fragment (percent-decoded), or null when it is not a pointer. */
export function fragmentSegments(ref: string): string[] | null {
  if (!ref.startsWith('#')) return null
  let fragment: string
  try {
    fragment = decodeURIComponent(ref.slice(1))
  } catch {
    return null
  }
  return pointerSegments(fragment)
}

/**
 * Checks the `$ref`s of an OpenAPI document: anything not starting with `#` is external and refused;
 * a `#/json/pointer` must resolve in the document; `#name` must name a `$anchor` (OpenAPI 3.1 schemas).
 */
export function checkOpenApiRefs(doc: unknown): ProblemItem[] {
  const problems: ProblemItem[] = []
  let anchors: Set<string> | undefined
  const follow = (ref: string): string[] | null => fragmentSegments(ref)
  for (const site of collectRefs(doc)) {
    if (problems.length >= MAX_PROBLEMS) break
    const { ref, path } = site
    if (!ref.startsWith('#')) {
      problems.push({ path, message: externalRefMessage(ref) })
      continue
    }
    const raw = ref.slice(1)
    if (raw !== '' && !raw.startsWith('/') && !raw.startsWith('%2F') && !raw.startsWith('%2f')) {
      anchors ??= collectAnchors(doc)
      let name = raw
      try {
        name = decodeURIComponent(raw)
      } catch {
        /* keep raw */
      }
      if (!anchors.has(name)) problems.push({ path, message: `unresolved $ref ${quote(ref)}: no $anchor named ${quote(name)}` })
      continue
    }
    const segments = fragmentSegments(ref)
    if (segments === null) {
      problems.push({ path, message: `unresolved $ref ${quote(ref)}: not a valid JSON pointer` })
      continue
    }
    const found = lookupPointer(doc, segments, follow)
    if (!found.found) problems.push({ path, message: `unresolved $ref ${quote(ref)}: ${found.reason}` })
  }
  return problems
}

function collectAnchors(doc: unknown): Set<string> {
  const anchors = new Set<string>()
  const stack: unknown[] = [doc]
  while (stack.length > 0) {
    const node = stack.pop()
    if (Array.isArray(node)) {
      for (const v of node) if (v !== null && typeof v === 'object') stack.push(v)
    } else if (node !== null && typeof node === 'object') {
      const obj = node as Record<string, unknown>
      for (const key of Object.keys(obj)) {
        const v = obj[key]
        if ((key === '$anchor' || key === '$dynamicAnchor') && typeof v === 'string') anchors.add(v)
        if (v !== null && typeof v === 'object') stack.push(v)
      }
    }
  }
  return anchors
}
