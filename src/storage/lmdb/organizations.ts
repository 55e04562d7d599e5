import { RegistryError, notFound } from '../../errors.js'
import type { KeyStore, KeyWithOrganization, OrganizationStore } from '../port.js'
import type { KeyRecord, OrganizationRecord } from '../records.js'
import type { IndexDatabases } from './databases.js'
import type { LmdbAccess } from './transaction-view.js'

export class LmdbOrganizations implements OrganizationStore {
  constructor(private readonly access: LmdbAccess, private readonly db: IndexDatabases) {}

  async get(id: string): Promise<OrganizationRecord | undefined> {
    return this.access.get(this.db.organizations, id)
  }

  async bySlug(slug: string): Promise<OrganizationRecord | undefined> {
    const id: string | undefined = this.access.get(this.db.organizationSlugs, slug)
    return id === undefined ? undefined : this.access.get(this.db.organizations, id)
  }

  async list(): Promise<OrganizationRecord[]> {
    return this.access.range<OrganizationRecord>(this.db.organizations).map(({ value }) => value)
  }

  async put(organization: OrganizationRecord): Promise<void> {
    const owner: string | undefined = this.access.get(this.db.organizationSlugs, organization.slug)
    if (owner !== undefined && owner !== organization.id) {
      throw new RegistryError('conflict', `organization slug '${organization.slug}' is already taken`)
    }
    const before: OrganizationRecord | undefined = this.access.get(this.db.organizations, organization.id)
    if (before && before.slug !== organization.slug) this.access.remove(this.db.organizationSlugs, before.slug)
    this.access.put(this.db.organizations, organization.id, organization)
    this.access.put(this.db.organizationSlugs, organization.slug, organization.id)
  }
}

export class LmdbKeys implements KeyStore {
  constructor(private readonly access: LmdbAccess, private readonly db: IndexDatabases) {}

  async get(id: string): Promise<KeyRecord | undefined> {
    return this.access.get(this.db.keys, id)
  }

  async byHash(hash: string): Promise<KeyRecord | undefined> {
    const id: string | undefined = this.access.get(this.db.keyHashes, hash)
    return id === undefined ? undefined : this.access.get(this.db.keys, id)
  }

  /** `along` is left to the caller: a local read costs the same either way. */
  async byHashWithOrganization(hash: string): Promise<KeyWithOrganization | undefined> {
    const key = await this.byHash(hash)
    return key && { key, organization: this.access.get(this.db.organizations, key.organization_id) }
  }

  async list(organizationId: string): Promise<KeyRecord[]> {
    // The layout has no index of keys by organization (they are few): the whole database, filtered.
    return this.access.range<KeyRecord>(this.db.keys).map(({ value }) => value)
      .filter((key) => key.organization_id === organizationId)
  }

  async put(key: KeyRecord): Promise<void> {
    if (this.access.get(this.db.organizations, key.organization_id) === undefined) throw notFound('organization')
    const owner: string | undefined = this.access.get(this.db.keyHashes, key.hash)
    if (owner !== undefined && owner !== key.id) throw new RegistryError('conflict', 'a key with this hash already exists')
    const before: KeyRecord | undefined = this.access.get(this.db.keys, key.id)
    if (before && before.hash !== key.hash) this.access.remove(this.db.keyHashes, before.hash)
    this.access.put(this.db.keys, key.id, key)
    this.access.put(this.db.keyHashes, key.hash, key.id)
  }
}
