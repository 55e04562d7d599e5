import { RegistryError, notFound } from '../../errors.js'
import type { ResourceLookup, Storage, Stores } from '../../storage/port.js'
import { KEY_ROLES, type KeyRecord, type KeyRole, type OrganizationRecord } from '../../storage/registry-records.js'
import type { ResourceKind, ResourceRecord } from '../../storage/records.js'
import { generateKey, hashKey, isKeyFormat } from './keys.js'
import { isUlid, newId, now } from '../resources/ids.js'
import { SLUG_MAX_LENGTH, SLUG_PATTERN } from '../resources/slugs.js'
import type { Tenant } from '../documents.js'

/** An organization's slug and a resource's: the same rule (resources/slugs.ts). */
const SLUG = new RegExp(SLUG_PATTERN)

/** Who is calling: the organization a valid key belongs to, and what the key may do. */
export interface Actor {
  organization: OrganizationRecord
  keyId: string
  role: KeyRole
  /** Set when the request came with a console session cookie instead of the key itself. */
  session?: { id: string; expiresAt: string }
  /**
   * The resource the request names, read with the key (`authenticate`'s `along`) from the same
   * committed state a read right after would see; `Resources.require` answers it without reading again.
   */
  readAlong?: { kind: ResourceKind; ref: string; resource: ResourceRecord }
}

/** The tenant an actor's document work counts for (the workers are shared fairly between them). */
export const tenantOf = (actor: Actor): Tenant => ({ organization: actor.organization.id, key: actor.keyId })

/** The resource a read request names by id or slug (`GET /v1/apis/{api}`): read with its key. */
export interface ResourceNamed {
  kind: ResourceKind
  ref: string
}

/** How the storage finds a named resource; none for a name no resource can have (the route answers it). */
function lookupOf(named: ResourceNamed): ResourceLookup | undefined {
  if (isUlid(named.ref)) return { kind: named.kind, by: 'id', ref: named.ref }
  if (named.ref.length <= SLUG_MAX_LENGTH && SLUG.test(named.ref)) return { kind: named.kind, by: 'slug', ref: named.ref }
  return undefined
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

  constructor(private readonly storage: Storage) {}

  list(): Promise<OrganizationRecord[]> {
    return this.storage.read.organizations.list()
  }

  bySlug(slug: string): Promise<OrganizationRecord | undefined> {
    return this.storage.read.organizations.bySlug(slug)
  }

  async requireBySlug(slug: string): Promise<OrganizationRecord> {
    const org = await this.bySlug(slug)
    if (!org) throw notFound('organization')
    return org
  }

  /** Creates an organization with its first key; `secret` may be given (bootstrap), else it is generated. */
  async create(slug: string, name?: string, secret?: string): Promise<{ organization: OrganizationRecord } & IssuedKey> {
    const created = await this.createUnless(async () => false, slug, name, secret)
    return created!
  }

  /** First start on empty storage: the `default` organization and one key. */
  async bootstrap(secret?: string): Promise<IssuedKey | undefined> {
    // Decided in the transaction: replicas or a CLI starting at once create one default organization.
    const created = await this.createUnless(async (tx) => (await tx.organizations.list()).length > 0, 'default', 'Default organization', secret)
    return created && { key: created.key, secret: created.secret }
  }

  /** Creates the organization and its first key in one transaction, unless `skip` says otherwise there. */
  private async createUnless(
    skip: (tx: Stores) => Promise<boolean>, slug: string, name?: string, secret?: string,
  ): Promise<({ organization: OrganizationRecord } & IssuedKey) | undefined> {
    if (!SLUG.test(slug) || slug.length > SLUG_MAX_LENGTH) {
      throw new RegistryError('invalid_request', `organization slug '${slug}' must match ${SLUG.source} (at most 64 characters)`)
    }
    const at = now()
    const organization: OrganizationRecord = { id: newId(), slug, name: name ?? slug, created_at: at, updated_at: at }
    const issued = this.newKey(organization.id, 'first key', secret)
    return this.storage.transaction(async (tx) => {
      if (await skip(tx)) return undefined
      // The adapter refuses a taken slug (409).
      await tx.organizations.put(organization)
      await tx.keys.put(issued.key)
      return { organization, ...issued }
    })
  }

  /** A new key of an organization (the command-line tool's `key create`; `admin` unless told). */
  async createKey(orgSlug: string, name?: string, role: KeyRole = 'admin'): Promise<IssuedKey> {
    return this.issueKey((await this.requireBySlug(orgSlug)).id, name ?? null, role)
  }

  async issueKey(organizationId: string, name: string | null, role: KeyRole): Promise<IssuedKey> {
    const issued = this.newKey(organizationId, name, undefined, role)
    // 404 when the organization does not exist (the adapter checks it in the transaction).
    await this.storage.transaction((tx) => tx.keys.put(issued.key))
    return issued
  }

  async listKeys(orgSlug: string): Promise<KeyRecord[]> {
    return this.keysOf((await this.requireBySlug(orgSlug)).id)
  }

  /** Newest first. */
  async keysOf(organizationId: string): Promise<KeyRecord[]> {
    return (await this.storage.read.keys.list(organizationId)).sort((a, b) => (a.id < b.id ? 1 : -1))
  }

  /** One key of an organization; 404 when unknown or another organization's. */
  async keyOf(organizationId: string, keyId: string): Promise<KeyRecord> {
    const key = await this.storage.read.keys.get(keyId)
    if (!key || key.organization_id !== organizationId) throw notFound('key')
    return key
  }

  /** A key by id, whatever its organization (the caller knows whose it is). */
  key(keyId: string): Promise<KeyRecord | undefined> {
    return this.storage.read.keys.get(keyId)
  }

  async revokeKey(keyId: string): Promise<KeyRecord> {
    return this.revoke(keyId, async () => undefined)
  }

  /**
   * Revokes a key of the actor's organization (the API's `DELETE /v1/keys/{key}`). The organization's
   * last active admin key is refused, checked inside the revoking transaction: without it, nobody
   * could manage keys through the API any more (the command-line tool still can).
   */
  async revokeKeyOf(organizationId: string, keyId: string): Promise<KeyRecord> {
    return this.revoke(keyId, async (tx, current) => {
      if (current.organization_id !== organizationId) throw notFound('key')
      if (current.revoked_at || roleOf(current) !== 'admin') return
      const admins = (await tx.keys.list(organizationId)).filter((k) => !k.revoked_at && roleOf(k) === 'admin')
      if (admins.length <= 1) {
        throw new RegistryError('conflict', "this is the organization's last admin key: create another admin key before revoking it")
      }
    })
  }

  /** Sets `revoked_at` on the key as stored, once; `guard` may refuse, on what the transaction read. */
  private revoke(keyId: string, guard: (tx: Stores, key: KeyRecord) => Promise<void>): Promise<KeyRecord> {
    const at = now()
    return this.storage.transaction(async (tx) => {
      const key = await tx.keys.get(keyId)
      if (!key) throw notFound('key')
      await guard(tx, key)
      if (key.revoked_at) return key
      const revoked = { ...key, revoked_at: at }
      await tx.keys.put(revoked)
      return revoked
    })
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

  /**
   * Resolves an `Authorization` header to an actor; any failure is the same 401. The key is read from
   * the committed state on every request (no cache), so a revocation by any process acts at once.
   */
  async authenticate(header: string | undefined, named?: ResourceNamed): Promise<Actor> {
    if (header === undefined) throw unauthorized()
    const remembered = this.hashOfHeader.get(header)
    const hash = remembered ?? hashOfBearer(header)
    const found = await this.storage.read.keys.byHashWithOrganization(hash, named && lookupOf(named))
    const actor = this.actorOf(found)
    if (named && found?.resource) actor.readAlong = { ...named, resource: found.resource }
    if (remembered === undefined) {
      if (this.hashOfHeader.size >= HASH_MEMO_SIZE) this.hashOfHeader.clear()
      this.hashOfHeader.set(header, hash)
    }
    return actor
  }

  /** The actor of a key found by id (a console session names its key); revoked or unknown: 401. */
  async actorOfKey(keyId: string): Promise<Actor> {
    const key = await this.storage.read.keys.get(keyId)
    return this.actorOf(key && { key, organization: await this.storage.read.organizations.get(key.organization_id) })
  }

  private actorOf(found: { key: KeyRecord; organization: OrganizationRecord | undefined } | undefined): Actor {
    if (!found || found.key.revoked_at || !found.organization) throw unauthorized()
    const { key, organization } = found
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
    await this.storage.transaction((tx) => recordUses(tx, uses)).catch(() => undefined)
  }
}

/**
 * Sets `last_used_at` and nothing else, on each key as the transaction read it: a revocation committed
 * meanwhile by any process makes the transaction run again on the revoked record, which it keeps.
 * Older times never replace newer ones.
 */
async function recordUses(tx: Stores, uses: Map<string, string>): Promise<void> {
  for (const [id, at] of uses) {
    const key = await tx.keys.get(id)
    if (!key || (key.last_used_at !== null && key.last_used_at >= at)) continue
    await tx.keys.put({ ...key, last_used_at: at })
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
