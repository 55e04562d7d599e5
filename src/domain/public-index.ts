/**
 * The public index: what anyone may read, gathered for the pages that present the registry to a
 * browser (`/` and `/@{org}`, docs/api.md "Browsers"). Public resources and public sites only, whatever
 * key the request carries: it is the index a visitor sees.
 */
import type { RegistryIndex } from '../store/interfaces.js'
import type { OrganizationRecord, PageRequest, ResourceKind, ResourceRecord, VersionRecord } from '../store/records.js'
import type { SiteRecord } from '../store/site-store.js'
import type { PublicRegistry } from './public-registry.js'
import type { Sites } from './sites.js'

export interface PublicCounts {
  apis: number
  schemas: number
  rulesets: number
  sites: number
}

export interface PublicOrganization {
  organization: OrganizationRecord
  counts: PublicCounts
}

export interface PublicResource {
  resource: ResourceRecord
  current: VersionRecord | undefined
}

export interface OrganizationSearch {
  organization: OrganizationRecord
  q: string
  hits: PublicResource[]
  /** Every hit, of which `hits` is one page. */
  total: number
  page: PageRequest
}

export interface OrganizationIndex extends PublicOrganization {
  apis: PublicResource[]
  schemas: PublicResource[]
  rulesets: PublicResource[]
  sites: SiteRecord[]
}

/** Most organizations `/` lists; most resources of each kind, and sites, `/@{org}` lists. */
export const INDEX_LIMIT = 100

const KINDS: [ResourceKind, 'apis' | 'schemas' | 'rulesets'][] = [['api', 'apis'], ['schema', 'schemas'], ['ruleset', 'rulesets']]

export class PublicIndex {
  constructor(private readonly index: RegistryIndex, private readonly sites: Sites, private readonly registry: PublicRegistry) {}

  /** Organizations with anything public, by slug (the first INDEX_LIMIT of them). */
  organizations(): PublicOrganization[] {
    const shown: PublicOrganization[] = []
    const all = [...this.index.listOrganizations()].sort((a, b) => (a.slug < b.slug ? -1 : 1))
    for (const organization of all) {
      const counts = this.counts(organization)
      if (counts.apis + counts.schemas + counts.rulesets + counts.sites === 0) continue
      shown.push({ organization, counts })
      if (shown.length >= INDEX_LIMIT) break
    }
    return shown
  }

  /** An organization's public APIs, schemas and rulesets (the first INDEX_LIMIT of each, by name) and public sites. */
  organization(slug: string): OrganizationIndex {
    const organization = this.registry.organization(slug)
    const sites = this.sites.publicSites(organization.id)
    const listed = Object.fromEntries(KINDS.map(([kind, plural]) => [plural, this.index
      .listResources(organization.id, kind, { offset: 0, limit: INDEX_LIMIT }, true).items
      .map((resource) => ({ resource, current: this.index.getCurrentVersion(resource.id) }))])) as Record<'apis' | 'schemas' | 'rulesets', PublicResource[]>
    return { organization, counts: this.counts(organization, sites.length), ...listed, sites: sites.slice(0, INDEX_LIMIT) }
  }

  /** One page of the organization's public APIs, schemas and rulesets that match `q`, best first. */
  async search(slug: string, q: string, page: PageRequest): Promise<OrganizationSearch> {
    const organization = this.registry.organization(slug)
    const found = await this.registry.search(slug, { q }, page)
    const hits = found.items.map(({ resource }) => ({ resource, current: this.index.getCurrentVersion(resource.id) }))
    return { organization, q, hits, total: found.total, page }
  }

  private counts(organization: OrganizationRecord, sites = this.sites.publicSites(organization.id).length): PublicCounts {
    const total = (kind: ResourceKind) => this.index.listResources(organization.id, kind, { offset: 0, limit: 1 }, true).total
    return { apis: total('api'), schemas: total('schema'), rulesets: total('ruleset'), sites }
  }
}
