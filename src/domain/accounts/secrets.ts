/**
 * The secrets the registry keeps for its users (issue 14, item 6): repository tokens and webhook
 * secrets, output repository tokens, push mirror tokens. They are sealed when stored (AES-256-GCM under
 * the secret key, bound to their record: storage/secret-keyring.ts) and opened only where they are used.
 *
 * A secret that does not open (the storage was restored without its key, or a value was moved to
 * another record) "needs re-entry": the rest of the registry works, the API shows
 * `token_status: "needs_reentry"` on the connection, target or mirror, and the owner sets it again.
 *
 * The stored values are read and replaced through the storage port's secrets section (each feature's
 * records, on either adapter); each replacement is its own transaction, conditional on the value read.
 */
import { RegistryError } from '../../errors.js'
import type { Storage } from '../../storage/port.js'
import { SecretUnavailable, isSealed, type SecretKeyring, type StoredSecret, type UnavailableReason } from '../../storage/secret-keyring.js'
import { describeSecret, secretAad, type SecretRef, type SecretSlot } from '../../storage/secret-slots.js'

/** What a view shows of a secret: none set, set and usable, or set but to be entered again. */
export type SecretStatus = 'none' | 'stored' | 'needs_reentry'

export interface SecretToReenter {
  ref: SecretRef
  organization_id: string
  /** Which secret, for people. */
  what: string
  reason: UnavailableReason
  /** The key that sealed it. */
  kid: string
}

export interface SecretInventory {
  /** Sealed and opening with a key held, by the id of the key that sealed them. */
  sealed: Record<string, number>
  /** Stored in plaintext by an earlier version: sealed at the server's next start. */
  plaintext: number
  needs_reentry: SecretToReenter[]
}

export interface RotationResult {
  /** The key every secret is sealed with now. */
  key_id: string
  /** Secrets sealed again (or sealed for the first time, when they were plaintext). */
  resealed: number
  /** Secrets already sealed with that key. */
  current: number
  needs_reentry: SecretToReenter[]
}

/** One line for people: which secret, why it does not open, and how to enter it again. */
export function reentryLine(secret: SecretToReenter): string {
  const how = secret.reason === 'unknown_key' ? `sealed with key ${secret.kid}, not held` : `refused by key ${secret.kid} (sealed for another record, or altered)`
  return `${secret.what} (${how}); ${howToReenter(secret)}`
}

function howToReenter(secret: SecretToReenter): string {
  switch (secret.ref.holder) {
    case 'repository-connection': return `PUT /v1/apis/${secret.ref.api_id}/repository with it`
    case 'sdk-output-repository': return `PUT /v1/sdks/${secret.ref.sdk_id}/targets/${secret.ref.target}/repository with it`
    case 'mirror-remote': return 'PUT /v1/mirror (or registry mirror set-remote) with it'
    case 'webhook-endpoint': return `POST /v1/webhooks/${secret.ref.endpoint_id}/secret for a new one`
  }
}

/** Passes over every secret a rotation makes at most: each pass after the first catches writes made meanwhile. */
const MAX_PASSES = 5

export class Secrets {
  constructor(private readonly storage: Storage, readonly keyring: SecretKeyring) {}

  /** The stored form of a secret given to the registry (null stays null). */
  seal(ref: SecretRef, plaintext: string | null | undefined): StoredSecret | null {
    return plaintext === null || plaintext === undefined ? null : this.keyring.seal(plaintext, secretAad(ref))
  }

  /** The secret to use; 409 `secret_needs_reentry` when it does not open. */
  open(ref: SecretRef, stored: StoredSecret | null): string | null {
    if (stored === null) return null
    try {
      return this.keyring.open(stored, secretAad(ref))
    } catch (error) {
      if (!(error instanceof SecretUnavailable)) throw error
      throw new RegistryError('secret_needs_reentry',
        `${describeSecret(ref)} must be entered again: it ${error.message}`)
    }
  }

  /**
   * The secret if it opens, else null: what a redaction takes out of texts. One that does not open
   * was never sent anywhere, so there is nothing of it to take out.
   */
  reveal(ref: SecretRef, stored: StoredSecret | null): string | null {
    if (stored === null || this.#unavailable(ref, stored)) return null
    return this.keyring.open(stored, secretAad(ref))
  }

  status(ref: SecretRef, stored: StoredSecret | null): SecretStatus {
    if (stored === null) return 'none'
    return this.#unavailable(ref, stored) ? 'needs_reentry' : 'stored'
  }

  /** Every stored secret, counted by state; the ones to enter again listed. */
  async inventory(): Promise<SecretInventory> {
    const inventory: SecretInventory = { sealed: {}, plaintext: 0, needs_reentry: [] }
    for (const slot of await this.storage.read.secrets.slots()) {
      if (!isSealed(slot.value)) {
        inventory.plaintext += 1
        continue
      }
      const problem = this.#unavailable(slot.ref, slot.value)
      if (problem) inventory.needs_reentry.push(this.#toReenter(slot, problem))
      else inventory.sealed[slot.value.kid] = (inventory.sealed[slot.value.kid] ?? 0) + 1
    }
    return inventory
  }

  /** Seals the secrets an earlier version stored in plaintext (at start); answers how many. */
  async sealPlaintext(): Promise<number> {
    let sealed = 0
    for (const slot of await this.storage.read.secrets.slots()) {
      if (isSealed(slot.value)) continue
      if (await this.#replace(slot, this.keyring.seal(slot.value, secretAad(slot.ref)))) sealed += 1
    }
    return sealed
  }

  /**
   * Seals every secret with the keyring's first key, one conditional update per record (a secret that
   * the server changed meanwhile is left as it now is, and looked at again by the next pass), until a
   * pass finds nothing left to do. Secrets that do not open are left alone and reported.
   */
  async rotate(): Promise<RotationResult> {
    const keyId = this.keyring.primaryId
    if (keyId === undefined) throw new Error('no secret key is configured to rotate to')
    let resealed = 0
    for (let pass = 1; pass <= MAX_PASSES; pass++) {
      let changed = 0
      for (const slot of await this.storage.read.secrets.slots()) {
        if (this.keyring.isCurrent(slot.value) || this.#unavailable(slot.ref, slot.value)) continue
        const aad = secretAad(slot.ref)
        const next = this.keyring.seal(this.keyring.open(slot.value, aad), aad)
        if (await this.#replace(slot, next)) changed += 1
      }
      resealed += changed
      if (changed === 0) break
    }
    const inventory = await this.inventory()
    return { key_id: keyId, resealed, current: inventory.sealed[keyId] ?? 0, needs_reentry: inventory.needs_reentry }
  }

  #unavailable(ref: SecretRef, stored: StoredSecret): SecretUnavailable | undefined {
    try {
      this.keyring.open(stored, secretAad(ref))
      return undefined
    } catch (error) {
      if (error instanceof SecretUnavailable) return error
      throw error
    }
  }

  #toReenter(slot: SecretSlot, problem: SecretUnavailable): SecretToReenter {
    return { ref: slot.ref, organization_id: slot.organization_id, what: describeSecret(slot.ref), reason: problem.reason, kid: problem.kid }
  }

  /** The slot's value becomes `next` if it is still the one read (false: changed meanwhile, left as it now is). */
  #replace(slot: SecretSlot, next: StoredSecret): Promise<boolean> {
    return this.storage.transaction((tx) => tx.secrets.replace(slot.ref, slot.value, next))
  }
}
