import crypto, { createHash, randomBytes } from 'node:crypto'

const KEY_FORMAT = /^sk_[A-Za-z0-9_-]{32,200}$/

/** A new organization key: `sk_` and 43 random base64url characters (256 bits). */
export const generateKey = (): string => `sk_${randomBytes(32).toString('base64url')}`
export const isKeyFormat = (value: string): boolean => KEY_FORMAT.test(value)
/** Keys are stored only as this hash; lookups go by hash, so no stored secret is ever compared. */
export const hashKey: (key: string) => string = typeof (crypto as { hash?: unknown }).hash === 'function'
  // One-shot hashing (Node 20.12+) costs a fraction of a Hash object per request.
  ? (key) => (crypto as unknown as { hash(algorithm: string, data: string): string }).hash('sha256', key)
  : (key) => createHash('sha256').update(key).digest('hex')
