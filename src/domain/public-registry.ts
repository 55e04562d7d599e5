import { notFound } from '../errors.js'
import type { RegistryIndex } from '../store/interfaces.js'
import type { OrganizationRecord, Page, PageRequest, ResourceKind, ResourceRecord } from '../store/records.js'
import type { Actor } from './organizations.js'
import type { Search, SearchHit, SearchQuery } from './search.js'

/**
 * The public registry: public resources of an organization by slug, readable without a key. A key of
 * the same organization also sees its private ones; anything else answers the same 404.
 */
export class PublicRegistry {
  constructor(private readonly index: RegistryIndex, private readonly searchIndex: Search) {}

  organization(slug: string): OrganizationRecord {
    const org = this.index.getOrganizationBySlug(slug)
    if (!org) throw notFound('organization')
    return org
  }

  list(orgSlug: string, kind: ResourceKind, page: PageRequest, actor?: Actor): Page<ResourceRecord> {
    const org = this.organization(orgSlug)
    return this.index.listResources(org.id, kind, page, !this.isMember(org, actor))
  }

  get(orgSlug: string, kind: ResourceKind, slug: string, actor?: Actor): ResourceRecord {
    const org = this.organization(orgSlug)
    const resource = this.index.getResourceBySlug(org.id, kind, slug)
    if (!resource || (resource.visibility !== 'public' && !this.isMember(org, actor))) throw notFound(kind)
    return resource
  }

  /** The organization's search (issue 17, item 11) over what this caller may read here. */
  search(orgSlug: string, query: Omit<SearchQuery, 'publicOnly'>, page: PageRequest, actor?: Actor): Promise<Page<SearchHit>> {
    const org = this.organization(orgSlug)
    return this.searchIndex.search(org.id, { ...query, publicOnly: !this.isMember(org, actor) }, page)
  }

  private isMember(org: OrganizationRecord, actor: Actor | undefined): boolean {
    return actor?.organization.id === org.id
  }
}
