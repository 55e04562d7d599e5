import { createHash, randomBytes } from 'node:crypto'

const KEY_FORMAT = /^sk_[A-Za-z0-9_-]{32,200}$/

/** A new organization key: `sk_` and 43 random base64url characters (256 bits). */
export const generateKey = (): string => `sk_${randomBytes(32).toString('base64url')}`
export const isKeyFormat = (value: string): boolean => KEY_FORMAT.test(value)
/** Keys are stored only as this hash; lookups go by hash, so no stored secret is ever compared. */
export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex')
