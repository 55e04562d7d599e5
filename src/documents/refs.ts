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
 * Iterative, so depth is no risk.
 */
export function collectRefs(doc: unknown): RefSite[] {
  const sites: RefSite[] = []
  forEachRef(doc, (ref, path) => sites.push({ ref, path: path() }))
  return sites
}

/**
 * Calls `visit` for every object member named `$ref` whose value is a string, in document order.
 * A node's path is kept as a link to its parent's, and written out only when `path` is called
 * (copying it for every object of a large document cost more than the walk).
 */
function forEachRef(doc: unknown, visit: (ref: string, path: () => PathSegment[]) => void): void {
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
      if (Object.prototype.hasOwnProperty.call(obj, '$ref') && typeof obj.$ref === 'string') visit(obj.$ref, () => pathOf(frame))
      for (let i = keys.length - 1; i >= 0; i--) {
        const v = obj[keys[i]]
        if (v !== null && typeof v === 'object') stack.push({ node: v, parent: frame, key: keys[i] })
      }
    }
  }
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
  /** What is wrong with a `$ref`, or undefined when it resolves. */
  const problemOf = (ref: string): string | undefined => {
    if (!ref.startsWith('#')) return externalRefMessage(ref)
    const raw = ref.slice(1)
    if (raw !== '' && !raw.startsWith('/') && !raw.startsWith('%2F') && !raw.startsWith('%2f')) {
      anchors ??= collectAnchors(doc)
      let name = raw
      try {
        name = decodeURIComponent(raw)
      } catch {
        /* keep raw */
      }
      return anchors.has(name) ? undefined : `unresolved $ref ${quote(ref)}: no $anchor named ${quote(name)}`
    }
    const segments = fragmentSegments(ref)
    if (segments === null) return `unresolved $ref ${quote(ref)}: not a valid JSON pointer`
    const found = lookupPointer(doc, segments, follow)
    return found.found ? undefined : `unresolved $ref ${quote(ref)}: ${found.reason}`
  }
  // A document writes the same few references thousands of times (14,531 sites, 3,031 references, in
  // a 4.7 MB one): each is looked up once.
  const verdicts = new Map<string, string | undefined>()
  forEachRef(doc, (ref, path) => {
    if (problems.length >= MAX_PROBLEMS) return
    let message = verdicts.get(ref)
    if (message === undefined && !verdicts.has(ref)) verdicts.set(ref, (message = problemOf(ref)))
    if (message !== undefined) problems.push({ path: path(), message })
  })
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
