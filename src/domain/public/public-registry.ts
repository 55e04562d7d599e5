import { notFound } from '../../errors.js'
import type { Storage } from '../../storage/port.js'
import type { OrganizationRecord, Page, PageRequest, ResourceKind, ResourceRecord } from '../../storage/registry-records.js'
import type { Actor } from '../accounts/organizations.js'
import type { Search, SearchHit, SearchQuery } from '../resources/search.js'

/**
 * The public registry: public resources of an organization by slug, readable without a key. A key of
 * the same organization also sees its private ones; anything else answers the same 404.
 */
export class PublicRegistry {
  constructor(private readonly storage: Storage, private readonly searchIndex: Search) {}

  async organization(slug: string): Promise<OrganizationRecord> {
    const org = await this.storage.read.organizations.bySlug(slug)
    if (!org) throw notFound('organization')
    return org
  }

  async list(orgSlug: string, kind: ResourceKind, page: PageRequest, actor?: Actor): Promise<Page<ResourceRecord>> {
    const org = await this.organization(orgSlug)
    return this.storage.read.resources.list(org.id, kind, page, !this.isMember(org, actor))
  }

  async get(orgSlug: string, kind: ResourceKind, slug: string, actor?: Actor): Promise<ResourceRecord> {
    const org = await this.organization(orgSlug)
    const resource = await this.storage.read.resources.bySlug(org.id, kind, slug)
    if (!resource || (resource.visibility !== 'public' && !this.isMember(org, actor))) throw notFound(kind)
    return resource
  }

  /** The organization's search (issue 17, item 11) over what this caller may read here. */
  async search(orgSlug: string, query: Omit<SearchQuery, 'publicOnly'>, page: PageRequest, actor?: Actor): Promise<Page<SearchHit>> {
    const org = await this.organization(orgSlug)
    return this.searchIndex.search(org.id, { ...query, publicOnly: !this.isMember(org, actor) }, page)
  }

  private isMember(org: OrganizationRecord, actor: Actor | undefined): boolean {
    return actor?.organization.id === org.id
  }
}
