import { RegistryError, notFound } from '../errors.js'
import type { RegistryIndex } from '../store/interfaces.js'
import type { KeyRecord, OrganizationRecord } from '../store/records.js'
import { generateKey, hashKey, isKeyFormat } from './keys.js'
import { newId, now } from './ids.js'
import { SLUG_MAX_LENGTH } from './slugs.js'

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

/** Who is calling: the organization a valid key belongs to. */
export interface Actor {
  organization: OrganizationRecord
  keyId: string
}

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

  async createKey(orgSlug: string, name?: string): Promise<IssuedKey> {
    const org = this.requireBySlug(orgSlug)
    const issued = this.newKey(org.id, name ?? null)
    await this.index.createKey(issued.key)
    return issued
  }

  listKeys(orgSlug: string): KeyRecord[] {
    return this.index.listKeys(this.requireBySlug(orgSlug).id)
  }

  async revokeKey(keyId: string): Promise<KeyRecord> {
    const key = await this.index.revokeKey(keyId, now())
    if (!key) throw notFound('key')
    return key
  }

  private newKey(organizationId: string, name: string | null, secret?: string): IssuedKey {
    if (secret !== undefined && !isKeyFormat(secret)) {
      throw new RegistryError('invalid_request', 'a key must be sk_ followed by at least 32 characters of A-Z a-z 0-9 _ -')
    }
    const value = secret ?? generateKey()
    const key: KeyRecord = {
      id: newId(), organization_id: organizationId, name, hash: hashKey(value),
      created_at: now(), last_used_at: null, revoked_at: null,
    }
    return { key, secret: value }
  }

  /** Resolves an `Authorization` header to an actor; any failure is the same 401. */
  authenticate(header: string | undefined): Actor {
    if (header === undefined) throw unauthorized()
    const remembered = this.hashOfHeader.get(header)
    const hash = remembered ?? hashOfBearer(header)
    const key = this.index.getKeyByHash(hash)
    if (!key || key.revoked_at) throw unauthorized()
    const organization = this.index.getOrganization(key.organization_id)
    if (!organization) throw unauthorized()
    if (remembered === undefined) {
      if (this.hashOfHeader.size >= HASH_MEMO_SIZE) this.hashOfHeader.clear()
      this.hashOfHeader.set(header, hash)
    }
    this.noteUse(key.id)
    return { organization, keyId: key.id }
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

function unauthorized(): RegistryError {
  return new RegistryError('unauthorized', 'a valid API key is required: Authorization: Bearer sk_…', undefined, {
    'www-authenticate': 'Bearer',
  })
}
