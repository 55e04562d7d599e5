import { RegistryError, notFound } from '../../errors.js'
import { keys, type Scope } from './layout.js'
import type { ResourceStore } from '../port.js'
import type { ListFilter, Page, PageRequest, ResourceKind, ResourceRecord, VersionRecord } from '../records.js'
import type { IndexDatabases } from './databases.js'
import type { Key, LmdbAccess } from './transaction-view.js'

/** Resources with their slug index, name-ordered listings, counts for `total` and ruleset attachments. */
export class LmdbResources implements ResourceStore {
  constructor(private readonly access: LmdbAccess, private readonly db: IndexDatabases) {}

  async get(id: string): Promise<ResourceRecord | undefined> {
    return this.access.get(this.db.resources, id)
  }

  async bySlug(organizationId: string, kind: ResourceKind, slug: string): Promise<ResourceRecord | undefined> {
    const id: string | undefined = this.access.get(this.db.resourceSlugs, keys.resourceSlug(organizationId, kind, slug))
    return id === undefined ? undefined : this.access.get(this.db.resources, id)
  }

  async list(
    organizationId: string, kind: ResourceKind, page: PageRequest, publicOnly = false, filter: ListFilter = {},
  ): Promise<Page<ResourceRecord>> {
    const scope: Scope = publicOnly ? 'public' : 'all'
    const bounds = keys.resourceNameRange(organizationId, kind, scope)
    const range = filter.descending ? { start: bounds.end, end: bounds.start, reverse: true } : bounds
    let names: { key: Key }[]
    let total: number
    if (filter.nameContains) {
      // One pass over the names' keys (no record is read but the page's).
      const needle = filter.nameContains.toLowerCase()
      const matching = this.access.range(this.db.resourceNames, range)
        .filter(({ key }) => (key as string[])[3].toLowerCase().includes(needle))
      total = matching.length
      names = matching.slice(page.offset, page.offset + page.limit)
    } else {
      total = this.access.get(this.db.counts, keys.count(organizationId, kind, scope)) ?? 0
      names = page.offset >= total ? [] : this.access.range(this.db.resourceNames, { ...range, offset: page.offset, limit: page.limit })
    }
    const items: ResourceRecord[] = []
    for (const { key } of names) {
      const record: ResourceRecord | undefined = this.access.get(this.db.resources, (key as string[])[4])
      if (record) items.push(record)
    }
    return { items, total }
  }

  async countApisUsingRuleset(rulesetId: string): Promise<number> {
    return this.access.count(this.db.rulesetApis, keys.rulesetApiRange(rulesetId))
  }

  async create(resource: ResourceRecord): Promise<void> {
    if (resource.last_number !== 0) throw new Error('a resource is created without versions: append them')
    if (this.access.get(this.db.organizations, resource.organization_id) === undefined) throw notFound('organization')
    if (this.access.get(this.db.resources, resource.id) !== undefined) throw new RegistryError('conflict', `resource ${resource.id} exists`)
    this.claimSlug(resource)
    this.access.put(this.db.resources, resource.id, resource)
    this.addToListings(resource)
    this.attachRuleset(resource)
  }

  async update(after: ResourceRecord): Promise<void> {
    const before: ResourceRecord | undefined = this.access.get(this.db.resources, after.id)
    if (!before) throw notFound()
    if (after.last_number !== before.last_number) throw new Error('last_number changes only through versions.append')
    if (after.slug !== before.slug) {
      this.claimSlug(after)
      this.access.remove(this.db.resourceSlugs, keys.resourceSlug(before.organization_id, before.kind, before.slug))
    }
    if (after.name !== before.name || after.visibility !== before.visibility) {
      this.removeFromListings(before)
      this.addToListings(after)
    }
    if (after.ruleset_id !== before.ruleset_id) {
      this.detachRuleset(before)
      this.attachRuleset(after)
    }
    this.access.put(this.db.resources, after.id, after)
  }

  async remove(id: string): Promise<ResourceRecord | undefined> {
    const resource: ResourceRecord | undefined = this.access.get(this.db.resources, id)
    if (!resource) return undefined
    this.access.remove(this.db.resourceSlugs, keys.resourceSlug(resource.organization_id, resource.kind, resource.slug))
    this.removeFromListings(resource)
    this.detachRuleset(resource)
    for (const { key, value } of this.access.range<VersionRecord>(this.db.versions, keys.versionRange(id))) {
      this.access.remove(this.db.versionIds, value.id)
      this.access.remove(this.db.organizationVersions, keys.organizationVersion(resource.organization_id, value.id))
      this.access.remove(this.db.versions, key)
    }
    this.access.remove(this.db.current, id)
    this.access.remove(this.db.resources, id)
    return resource
  }

  private claimSlug(resource: ResourceRecord): void {
    const slugKey = keys.resourceSlug(resource.organization_id, resource.kind, resource.slug)
    const owner: string | undefined = this.access.get(this.db.resourceSlugs, slugKey)
    if (owner !== undefined && owner !== resource.id) {
      throw new RegistryError('conflict', `slug '${resource.slug}' is already used by another ${resource.kind}`)
    }
    this.access.put(this.db.resourceSlugs, slugKey, resource.id)
  }

  private attachRuleset(resource: ResourceRecord): void {
    if (resource.kind === 'api' && resource.ruleset_id) {
      this.access.put(this.db.rulesetApis, keys.rulesetApi(resource.ruleset_id, resource.id), null)
    }
  }

  private detachRuleset(resource: ResourceRecord): void {
    if (resource.kind === 'api' && resource.ruleset_id) {
      this.access.remove(this.db.rulesetApis, keys.rulesetApi(resource.ruleset_id, resource.id))
    }
  }

  private scopes(resource: ResourceRecord): Scope[] {
    return resource.visibility === 'public' ? ['all', 'public'] : ['all']
  }

  private addToListings(resource: ResourceRecord): void {
    for (const scope of this.scopes(resource)) {
      this.access.put(this.db.resourceNames, keys.resourceName(resource.organization_id, resource.kind, scope, resource.name, resource.id), null)
      this.adjustCount(keys.count(resource.organization_id, resource.kind, scope), 1)
    }
  }

  private removeFromListings(resource: ResourceRecord): void {
    for (const scope of this.scopes(resource)) {
      this.access.remove(this.db.resourceNames, keys.resourceName(resource.organization_id, resource.kind, scope, resource.name, resource.id))
      this.adjustCount(keys.count(resource.organization_id, resource.kind, scope), -1)
    }
  }

  /** Commutative: concurrent creates in one organization and kind do not conflict over the count. */
  private adjustCount(key: Key, delta: number): void {
    const counts = this.db.counts
    this.access.atCommit(() => {
      const next = (counts.get(key) ?? 0) + delta
      if (next > 0) counts.put(key, next)
      else counts.remove(key)
    })
  }
}
