import { notFound } from '../errors.js'
import type { RegistryIndex } from '../store/interfaces.js'
import type { OrganizationRecord, Page, PageRequest, ResourceKind, ResourceRecord } from '../store/records.js'
import type { Actor } from './organizations.js'

/**
 * The public registry: public resources of an organization by slug, readable without a key. A key of
 * the same organization also sees its private ones; anything else answers the same 404.
 */
export class PublicRegistry {
  constructor(private readonly index: RegistryIndex) {}

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

  private isMember(org: OrganizationRecord, actor: Actor | undefined): boolean {
    return actor?.organization.id === org.id
  }
}
