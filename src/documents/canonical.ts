/** The canonical form of a document: the basis of its checksum (CONTRACT §5). */
import { createHash } from 'node:crypto'
import stableStringify from 'fast-json-stable-stringify'

/** Thrown inside `sortedCopy` when a value is not one it can copy; the caller falls back. */
const UNUSUAL = Symbol('unusual value')

/**
 * A copy of JSON data whose objects hold their keys in sorted order, so that the engine's own
 * JSON.stringify writes fast-json-stable-stringify's text. Throws UNUSUAL for anything where the two
 * could differ: a value that is not JSON data (undefined, a function, a non-finite number, an object
 * that is not plain), a `__proto__` key (assigning it sets the prototype), and an object whose keys the
 * engine would not keep in sorted order (it lists integer keys first, in numeric order: "10" before
 * "9", "200" before "$ref").
 */
function sortedCopy(value: unknown): unknown {
  if (typeof value !== 'object') {
    if (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return value
    throw UNUSUAL
  }
  if (value === null) return null
  if (Array.isArray(value)) return sortedArray(value)
  if (Object.getPrototypeOf(value) !== Object.prototype) throw UNUSUAL
  const source = value as Record<string, unknown>
  const keys = Object.keys(source)
  if (inOrder(keys)) return sortedInPlace(source, keys)
  keys.sort()
  const copy: Record<string, unknown> = {}
  let integerLike = false
  for (const key of keys) {
    if (key === '__proto__') throw UNUSUAL
    const first = key.charCodeAt(0)
    if (first >= 48 && first <= 57) integerLike = true
    copy[key] = sortedCopy(source[key])
  }
  if (integerLike) {
    const order = Object.keys(copy)
    for (let i = 0; i < keys.length; i++) if (order[i] !== keys[i]) throw UNUSUAL
  }
  return copy
}

function inOrder(keys: string[]): boolean {
  for (let i = 1; i < keys.length; i++) if (keys[i - 1] > keys[i]) return false
  return true
}

/**
 * An object whose keys the engine already lists in sorted order (two objects in three of a large
 * document, most with one key): itself when none of its members needed a copy either, which spares
 * allocating, and collecting, most of the copy.
 */
function sortedInPlace(source: Record<string, unknown>, keys: string[]): unknown {
  let copy: Record<string, unknown> | undefined
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]
    if (key === '__proto__') throw UNUSUAL
    const member = source[key]
    const sorted = sortedCopy(member)
    if (copy) {
      copy[key] = sorted
    } else if (sorted !== member) {
      copy = {}
      for (let j = 0; j < i; j++) copy[keys[j]] = source[keys[j]]
      copy[key] = sorted
    }
  }
  return copy ?? source
}

/** An array, itself when none of its items needed a copy. */
function sortedArray(value: unknown[]): unknown[] {
  let copy: unknown[] | undefined
  for (let i = 0; i < value.length; i++) {
    const item = value[i]
    const sorted = sortedCopy(item)
    if (copy) {
      copy[i] = sorted
    } else if (sorted !== item) {
      copy = value.slice(0, i)
      copy[i] = sorted
    }
  }
  return copy ?? value
}

/**
 * JSON with keys sorted at every level and no whitespace. The document must be JSON data (no cycles).
 *
 * The text is fast-json-stable-stringify's, byte for byte (stored checksums depend on it); most
 * documents are written by the engine's JSON.stringify from a sorted copy, which is about twice as
 * fast and gives one flat string (the library's concatenations give a rope that hashing must flatten).
 */
export function canonicalJson(doc: unknown): string {
  let copy: unknown
  try {
    copy = sortedCopy(doc)
  } catch (err) {
    if (err === UNUSUAL) return stableStringify(doc)
    throw err
  }
  return JSON.stringify(copy)
}

/** `sha256:` + 64 lowercase hex digits of the canonical JSON (UTF-8). */
export function checksumOf(canonical: string): string {
  return 'sha256:' + createHash('sha256').update(canonical, 'utf8').digest('hex')
}
