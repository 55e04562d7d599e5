/**
 * Encryption of the secrets the index holds (repository tokens and webhook secrets, output repository
 * tokens, the mirror token): AES-256-GCM from node:crypto, a random 12-byte IV per value, the record's
 * identity and field as additional authenticated data (a value copied into another record does not
 * open), and the id of the key that sealed it, so that keys can rotate. The keys themselves never live
 * in the storage directory (see src/secret-key-source.ts); API keys are not here at all, they are stored
 * as hashes.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

/** A value as sealed: base64 IV and ciphertext followed by its 16-byte tag. */
export interface SealedSecret {
  alg: 'A256GCM'
  /** The id of the key that sealed it (keyId). */
  kid: string
  iv: string
  data: string
}

/**
 * A secret as the index stores it: sealed, or the plaintext a version before encryption wrote (sealed
 * when the server starts).
 */
export type StoredSecret = SealedSecret | string

export const SECRET_KEY_BYTES = 32
const IV_BYTES = 12
const TAG_BYTES = 16

export function isSealed(value: unknown): value is SealedSecret {
  const v = value as SealedSecret | null
  return typeof v === 'object' && v !== null && v.alg === 'A256GCM' && typeof v.kid === 'string'
    && typeof v.iv === 'string' && typeof v.data === 'string'
}

/** A key's public name: the start of a SHA-256 of it (says which key sealed a value, reveals nothing of it). */
export function keyId(key: Buffer): string {
  return createHash('sha256').update('api-registry secret key id\0').update(key).digest('hex').slice(0, 16)
}

/** Why a stored secret cannot be opened. */
export type UnavailableReason =
  /** Sealed with a key this process does not hold (storage restored elsewhere, a key dropped). */
  | 'unknown_key'
  /** The key is held but the value does not open: it belongs to another record, or was altered. */
  | 'refused'

export class SecretUnavailable extends Error {
  constructor(readonly reason: UnavailableReason, readonly kid: string) {
    super(reason === 'unknown_key'
      ? `sealed with secret key ${kid}, which this process does not hold`
      : `does not open with secret key ${kid}: it was sealed for another record or altered`)
    this.name = 'SecretUnavailable'
  }
}

/**
 * The keys a process holds, the first of which seals. `reload` (a key file's reader) is asked again
 * before sealing and when a value names a key not held: `registry secrets rotate` can change the key
 * file while the server runs, and the server follows without a restart.
 */
export class SecretKeyring {
  #keys = new Map<string, Buffer>()
  #primary: string | undefined

  constructor(keys: Buffer[], private readonly reload?: () => Buffer[] | undefined) {
    this.#use(keys)
  }

  /** A keyring of one random key that lives only in memory (tests, throwaway registries). */
  static ephemeral(): SecretKeyring {
    return new SecretKeyring([randomBytes(SECRET_KEY_BYTES)])
  }

  /** The id of the key that seals; undefined when no key is held. */
  get primaryId(): string | undefined {
    this.#refresh()
    return this.#primary
  }

  /** Ids of every key held, the sealing one first. */
  get ids(): string[] {
    this.#refresh()
    return [...this.#keys.keys()]
  }

  seal(plaintext: string, aad: string): SealedSecret {
    this.#refresh()
    if (this.#primary === undefined) throw new Error('no secret key is configured to seal secrets with')
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.#keys.get(this.#primary)!, iv)
    cipher.setAAD(Buffer.from(aad, 'utf8'))
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()])
    return { alg: 'A256GCM', kid: this.#primary, iv: iv.toString('base64'), data: data.toString('base64') }
  }

  /** The plaintext of a stored secret (plaintext passes through); throws SecretUnavailable. */
  open(stored: StoredSecret, aad: string): string {
    if (typeof stored === 'string') return stored
    let key = this.#keys.get(stored.kid)
    if (!key && this.#refresh()) key = this.#keys.get(stored.kid)
    if (!key) throw new SecretUnavailable('unknown_key', stored.kid)
    const data = Buffer.from(stored.data, 'base64')
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(stored.iv, 'base64'), { authTagLength: TAG_BYTES })
      decipher.setAAD(Buffer.from(aad, 'utf8'))
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES))
      return Buffer.concat([decipher.update(data.subarray(0, data.length - TAG_BYTES)), decipher.final()]).toString('utf8')
    } catch {
      throw new SecretUnavailable('refused', stored.kid)
    }
  }

  /** True when a stored secret is sealed with the sealing key (nothing for a rotation to do). */
  isCurrent(stored: StoredSecret): boolean {
    return isSealed(stored) && stored.kid === this.primaryId
  }

  /** Asks the source for changed keys; answers whether they changed. */
  #refresh(): boolean {
    const keys = this.reload?.()
    if (!keys) return false
    this.#use(keys)
    return true
  }

  #use(keys: Buffer[]): void {
    for (const key of keys) if (key.length !== SECRET_KEY_BYTES) throw new Error(`a secret key must be ${SECRET_KEY_BYTES} bytes`)
    this.#keys = new Map(keys.map((key) => [keyId(key), key]))
    this.#primary = keys.length > 0 ? keyId(keys[0]) : undefined
  }
}
