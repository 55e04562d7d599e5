/**
 * Freezes a decoded record and the objects and arrays in it (byte arrays cannot be frozen: left as they
 * are). Records that readers share are frozen: a caller copies to change (`{ ...record, field }`).
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !ArrayBuffer.isView(value) && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const inner of Object.values(value)) deepFreeze(inner)
  }
  return value
}
