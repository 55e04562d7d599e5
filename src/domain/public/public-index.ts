/**
 * The public index: what anyone may read, gathered for the pages that present the registry to a
 * browser (`/` and `/@{org}`, docs/api.md "Browsers"). Public resources and public sites only, whatever
 * key the request carries: it is the index a visitor sees.
 */
import type { Storage } from '../../storage/port.js'
import type { OrganizationRecord, PageRequest, ResourceKind, ResourceRecord, VersionRecord } from '../../storage/registry-records.js'
import type { SiteRecord } from '../../storage/records.js'
import type { PublicRegistry } from './public-registry.js'
import type { Sites } from '../sites/sites.js'

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
  constructor(private readonly storage: Storage, private readonly sites: Sites, private readonly registry: PublicRegistry) {}

  /** Organizations with anything public, by slug (the first INDEX_LIMIT of them). */
  async organizations(): Promise<PublicOrganization[]> {
    const shown: PublicOrganization[] = []
    const all = [...await this.storage.read.organizations.list()].sort((a, b) => (a.slug < b.slug ? -1 : 1))
    for (const organization of all) {
      const counts = await this.counts(organization)
      if (counts.apis + counts.schemas + counts.rulesets + counts.sites === 0) continue
      shown.push({ organization, counts })
      if (shown.length >= INDEX_LIMIT) break
    }
    return shown
  }

  /** An organization's public APIs, schemas and rulesets (the first INDEX_LIMIT of each, by name) and public sites. */
  async organization(slug: string): Promise<OrganizationIndex> {
    const organization = await this.registry.organization(slug)
    const sites = await this.sites.publicSites(organization.id)
    const listed = {} as Record<'apis' | 'schemas' | 'rulesets', PublicResource[]>
    for (const [kind, plural] of KINDS) {
      const { items } = await this.storage.read.resources.list(organization.id, kind, { offset: 0, limit: INDEX_LIMIT }, true)
      listed[plural] = await this.withCurrent(items)
    }
    return { organization, counts: await this.counts(organization, sites.length), ...listed, sites: sites.slice(0, INDEX_LIMIT) }
  }

  /** One page of the organization's public APIs, schemas and rulesets that match `q`, best first. */
  async search(slug: string, q: string, page: PageRequest): Promise<OrganizationSearch> {
    const organization = await this.registry.organization(slug)
    const found = await this.registry.search(slug, { q }, page)
    const hits = await this.withCurrent(found.items.map(({ resource }) => resource))
    return { organization, q, hits, total: found.total, page }
  }

  private async counts(organization: OrganizationRecord, sites?: number): Promise<PublicCounts> {
    const total = async (kind: ResourceKind) => (await this.storage.read.resources.list(organization.id, kind, { offset: 0, limit: 1 }, true)).total
    return {
      apis: await total('api'), schemas: await total('schema'), rulesets: await total('ruleset'),
      sites: sites ?? (await this.sites.publicSites(organization.id)).length,
    }
  }

  private withCurrent(resources: ResourceRecord[]): Promise<PublicResource[]> {
    return Promise.all(resources.map(async (resource) => ({ resource, current: await this.storage.read.versions.current(resource.id) })))
  }
}
