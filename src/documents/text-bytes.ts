/**
 * Large texts cross between the server's thread and the document workers as UTF-8 bytes that move
 * (see TextBytes in types.ts): the sender gives its buffer up, and nothing is copied or re-encoded.
 */
import { move, transferableSymbol, valueSymbol } from 'piscina'
import type { TextBytes } from './types.js'

/** A worker's answer whose buffers move to the pool instead of being copied (piscina's Transferable). */
export interface Movable<T> {
  readonly [transferableSymbol]: ArrayBuffer[]
  readonly [valueSymbol]: T
}

/** `value` answered by a worker with `buffers` moved, not copied: the worker must not touch them after. */
export function moving<T extends object>(value: T, buffers: ArrayBuffer[]): Movable<T> {
  return move({ [transferableSymbol]: buffers, [valueSymbol]: value }) as unknown as Movable<T>
}

/**
 * UTF-8 bytes that own their whole buffer, so that the buffer can move: small Buffers share a pool
 * slab with others, and a view may be part of a larger buffer; those are copied.
 */
export function ownBytes(value: string | Uint8Array): TextBytes & { buffer: ArrayBuffer } {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value
  return ownsItsBuffer(bytes) ? bytes : new Uint8Array(bytes)
}

/** True when `bytes` span their whole (unshared) buffer, which can then move to another thread. */
export function ownsItsBuffer(bytes: Uint8Array): bytes is Uint8Array & { buffer: ArrayBuffer } {
  return bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
}

/** Bytes as a Buffer, without copying them (for writing or hashing). */
export function bufferOf(bytes: TextBytes): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/** The text that `value` holds: a string as it is, bytes decoded as UTF-8. */
export function textOf(value: string | TextBytes): string {
  return typeof value === 'string' ? value : bufferOf(value).toString('utf8')
}
