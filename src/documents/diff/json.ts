/** What the diff needs of parsed JSON documents: equality, pointers, and resolving local `$ref`s. */
import { pointerSegments } from '../pointer.js'
import { fragmentSegments } from '../refs.js'

export type JsonObject = Record<string, unknown>

/** A value in one document and the JSON pointer (RFC 6901) of where it is. */
export interface Loc {
  node: unknown
  ptr: string
}

export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

export function hasOwn(obj: JsonObject, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key)
}

/** An own member, never one inherited from Object.prototype (`constructor`, `__proto__`). */
export function member(obj: JsonObject, key: string): unknown {
  return hasOwn(obj, key) ? obj[key] : undefined
}

export function childPointer(ptr: string, key: string | number): string {
  const segment = String(key)
  return `${ptr}/${segment.indexOf('~') === -1 && segment.indexOf('/') === -1 ? segment : segment.replace(/~/g, '~0').replace(/\//g, '~1')}`
}

export function child(loc: Loc, key: string | number): Loc {
  const node = loc.node
  const value = Array.isArray(node) ? node[key as number] : isObject(node) ? member(node, String(key)) : undefined
  return { node: value, ptr: childPointer(loc.ptr, key) }
}

/**
 * Deep equality of JSON values (key order does not matter). Given `refs`, also collects the `$ref`
 * strings of the objects it compared (of equal values; it stops at the first difference).
 */
export function deepEqual(x: unknown, y: unknown, refs?: Set<string>): boolean {
  if (x === y && refs === undefined) return true
  if (x === null || y === null || typeof x !== 'object' || typeof y !== 'object') return x === y
  if (Array.isArray(x)) {
    if (!Array.isArray(y) || x.length !== y.length) return false
    for (let i = 0; i < x.length; i++) if (!deepEqual(x[i], y[i], refs)) return false
    return true
  }
  if (Array.isArray(y)) return false
  const xo = x as JsonObject
  const yo = y as JsonObject
  const keys = Object.keys(xo)
  if (keys.length !== Object.keys(yo).length) return false
  for (const key of keys) if (!hasOwn(yo, key) || !deepEqual(xo[key], yo[key], refs)) return false
  if (refs !== undefined && typeof xo.$ref === 'string' && hasOwn(xo, '$ref')) refs.add(xo.$ref)
  return true
}

/** A JSON value as a short string for a message. */
export function shown(value: unknown, max = 60): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value) ?? String(value)
  return text.length > max ? `${text.slice(0, max)}…` : text
}

/** The `$ref` of a schema or reference object, when it has one. */
export function refOf(node: unknown): string | undefined {
  if (!isObject(node) || !hasOwn(node, '$ref')) return undefined
  return typeof node.$ref === 'string' ? node.$ref : undefined
}

/** Longest chain of `$ref`s to a `$ref` that is followed. */
const MAX_HOPS = 32

/** One parsed document, with its local `$ref`s resolved once each. */
export class JsonDocument {
  readonly #resolved = new Map<string, Loc | null>()

  constructor(readonly root: unknown) {}

  get rootLoc(): Loc {
    return { node: this.root, ptr: '' }
  }

  /** The value at a JSON pointer, or undefined. */
  at(ptr: string): unknown {
    const segments = pointerSegments(ptr)
    if (segments === null) return undefined
    let node: unknown = this.root
    for (const segment of segments) {
      if (Array.isArray(node)) node = /^(0|[1-9]\d*)$/.test(segment) ? node[Number(segment)] : undefined
      else if (isObject(node)) node = member(node, segment)
      else return undefined
      if (node === undefined) return undefined
    }
    return node
  }

  /**
   * Where a local `$ref` (`#/…`) leads, following chains of references; null for anything else
   * (registry schemas, other documents, anchors) and for references that lead nowhere or in a circle.
   */
  resolve(ref: string): Loc | null {
    let resolved = this.#resolved.get(ref)
    if (resolved !== undefined) return resolved
    resolved = null
    let current = ref
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      if (!current.startsWith('#/') && current !== '#') break
      const segments = fragmentSegments(current)
      if (segments === null) break
      const ptr = segments.reduce(childPointer, '')
      const node = this.at(ptr)
      if (node === undefined) break
      const next = refOf(node)
      if (next === undefined) {
        resolved = { node, ptr }
        break
      }
      current = next
    }
    this.#resolved.set(ref, resolved)
    return resolved
  }

  /** True once `resolve` was asked for this reference (the diff uses that to tell used components). */
  wasResolved(ref: string): boolean {
    return this.#resolved.has(ref)
  }

  /** A location with its `$ref` followed (itself when it has none, or one that cannot be followed). */
  follow(loc: Loc): Loc {
    const ref = refOf(loc.node)
    return ref === undefined ? loc : this.resolve(ref) ?? loc
  }
}
