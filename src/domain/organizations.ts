import { RegistryError, notFound } from '../errors.js'
import type { RegistryIndex } from '../store/interfaces.js'
import { KEY_ROLES, type KeyRecord, type KeyRole, type OrganizationRecord } from '../store/records.js'
import { generateKey, hashKey, isKeyFormat } from './keys.js'
import { newId, now } from './ids.js'
import { SLUG_MAX_LENGTH } from './slugs.js'

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

/** Who is calling: the organization a valid key belongs to, and what the key may do. */
export interface Actor {
  organization: OrganizationRecord
  keyId: string
  role: KeyRole
  /** Set when the request came with a console session cookie instead of the key itself. */
  session?: { id: string; expiresAt: string }
}

/** Keys issued before roles existed are `admin`: they could do everything. */
export const roleOf = (key: KeyRecord): KeyRole => key.role ?? 'admin'

/** Whether `role` covers what `needed` allows (read < write < admin). */
export const allows = (role: KeyRole, needed: KeyRole): boolean => KEY_ROLES.indexOf(role) >= KEY_ROLES.indexOf(needed)

export interface IssuedKey {
  key: KeyRecord
  secret: string
}

/** How often a key's `last_used_at` is written at most: reads must not become write transactions. */
const LAST_USE_RESOLUTION_MS = 60_000
const LAST_USE_FLUSH_MS = 5_000
/** How many `Authorization` values the hash memo holds before it starts over. */
const HASH_MEMO_SIZE = 10_000

/** Organizations and their keys; authentication of requests. */
export class Organizations {
  private readonly lastRecorded = new Map<string, number>()
  private readonly pendingUse = new Map<string, string>()
  /**
   * `Authorization` header → the hash of its key, for headers that authenticated once. Hashing and the
   * two format checks were the largest cost of a small authenticated GET; the memo is a pure function
   * of the header, so revocation still acts at once (the key record is read on every request).
   * Only headers that authenticated are added, so unknown keys cannot fill it.
   */
  private readonly hashOfHeader = new Map<string, string>()
  private flushTimer: NodeJS.Timeout | undefined

  constructor(private readonly index: RegistryIndex) {}

  list(): OrganizationRecord[] {
    return this.index.listOrganizations()
  }

  bySlug(slug: string): OrganizationRecord | undefined {
    return this.index.getOrganizationBySlug(slug)
  }

  requireBySlug(slug: string): OrganizationRecord {
    const org = this.bySlug(slug)
    if (!org) throw notFound('organization')
    return org
  }

  /** Creates an organization with its first key; `secret` may be given (bootstrap), else it is generated. */
  async create(slug: string, name?: string, secret?: string): Promise<{ organization: OrganizationRecord } & IssuedKey> {
    if (!SLUG.test(slug) || slug.length > SLUG_MAX_LENGTH) {
      throw new RegistryError('invalid_request', `organization slug '${slug}' must match ${SLUG.source} (at most 64 characters)`)
    }
    const at = now()
    const organization: OrganizationRecord = { id: newId(), slug, name: name ?? slug, created_at: at, updated_at: at }
    const issued = this.newKey(organization.id, 'first key', secret)
    await this.index.createOrganization(organization, issued.key)
    return { organization, ...issued }
  }

  /** First start on empty storage: the `default` organization and one key. */
  async bootstrap(secret?: string): Promise<IssuedKey | undefined> {
    if (this.list().length > 0) return undefined
    const { key, secret: issued } = await this.create('default', 'Default organization', secret)
    return { key, secret: issued }
  }

  /** A new key of an organization (the command-line tool's `key create`; `admin` unless told). */
  async createKey(orgSlug: string, name?: string, role: KeyRole = 'admin'): Promise<IssuedKey> {
    return this.issueKey(this.requireBySlug(orgSlug).id, name ?? null, role)
  }

  async issueKey(organizationId: string, name: string | null, role: KeyRole): Promise<IssuedKey> {
    const issued = this.newKey(organizationId, name, undefined, role)
    await this.index.createKey(issued.key)
    return issued
  }

  listKeys(orgSlug: string): KeyRecord[] {
    return this.keysOf(this.requireBySlug(orgSlug).id)
  }

  /** Newest first. */
  keysOf(organizationId: string): KeyRecord[] {
    return this.index.listKeys(organizationId).sort((a, b) => (a.id < b.id ? 1 : -1))
  }

  async revokeKey(keyId: string): Promise<KeyRecord> {
    const key = await this.index.revokeKey(keyId, now())
    if (!key) throw notFound('key')
    return key
  }

  /**
   * Revokes a key of the actor's organization (the API's `DELETE /v1/keys/{key}`). The organization's
   * last active admin key is refused, checked inside the revoking transaction: without it, nobody
   * could manage keys through the API any more (the command-line tool still can).
   */
  async revokeKeyOf(organizationId: string, keyId: string): Promise<KeyRecord> {
    const key = await this.index.revokeKey(keyId, now(), (current) => {
      if (current.organization_id !== organizationId) throw notFound('key')
      if (current.revoked_at || roleOf(current) !== 'admin') return
      const admins = this.index.listKeys(organizationId).filter((k) => !k.revoked_at && roleOf(k) === 'admin')
      if (admins.length <= 1) {
        throw new RegistryError('conflict', "this is the organization's last admin key: create another admin key before revoking it")
      }
    })
    if (!key || key.organization_id !== organizationId) throw notFound('key')
    return key
  }

  private newKey(organizationId: string, name: string | null, secret?: string, role: KeyRole = 'admin'): IssuedKey {
    if (secret !== undefined && !isKeyFormat(secret)) {
      throw new RegistryError('invalid_request', 'a key must be sk_ followed by at least 32 characters of A-Z a-z 0-9 _ -')
    }
    const value = secret ?? generateKey()
    const key: KeyRecord = {
      id: newId(), organization_id: organizationId, name, role, hash: hashKey(value),
      created_at: now(), last_used_at: null, revoked_at: null,
    }
    return { key, secret: value }
  }

  /** Resolves an `Authorization` header to an actor; any failure is the same 401. */
  authenticate(header: string | undefined): Actor {
    if (header === undefined) throw unauthorized()
    const remembered = this.hashOfHeader.get(header)
    const hash = remembered ?? hashOfBearer(header)
    const actor = this.actorOf(this.index.getKeyByHash(hash))
    if (remembered === undefined) {
      if (this.hashOfHeader.size >= HASH_MEMO_SIZE) this.hashOfHeader.clear()
      this.hashOfHeader.set(header, hash)
    }
    return actor
  }

  /** The actor of a key found by id (a console session names its key); revoked or unknown: 401. */
  actorOfKey(keyId: string): Actor {
    return this.actorOf(this.index.getKey(keyId))
  }

  private actorOf(key: KeyRecord | undefined): Actor {
    if (!key || key.revoked_at) throw unauthorized()
    const organization = this.index.getOrganization(key.organization_id)
    if (!organization) throw unauthorized()
    this.noteUse(key.id)
    return { organization, keyId: key.id, role: roleOf(key) }
  }

  private noteUse(keyId: string): void {
    const nowMs = Date.now()
    if (nowMs - (this.lastRecorded.get(keyId) ?? 0) < LAST_USE_RESOLUTION_MS) return
    this.lastRecorded.set(keyId, nowMs)
    this.pendingUse.set(keyId, new Date(nowMs).toISOString())
    this.flushTimer ??= setTimeout(() => void this.flushUse(), LAST_USE_FLUSH_MS).unref()
  }

  async flushUse(): Promise<void> {
    clearTimeout(this.flushTimer)
    this.flushTimer = undefined
    if (this.pendingUse.size === 0) return
    const uses = new Map(this.pendingUse)
    this.pendingUse.clear()
    await this.index.recordKeyUse(uses).catch(() => undefined)
  }
}

function hashOfBearer(header: string): string {
  const secret = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1]
  if (!secret || !isKeyFormat(secret)) throw unauthorized()
  return hashKey(secret)
}

export function unauthorized(detail = 'a valid API key is required: Authorization: Bearer sk_…'): RegistryError {
  return new RegistryError('unauthorized', detail, undefined, {
    'www-authenticate': 'Bearer',
  })
}
