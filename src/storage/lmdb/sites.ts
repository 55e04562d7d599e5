import { RegistryError, notFound, type ProblemItem } from '../../errors.js'
import { siteKeys } from './layout.js'
import { domainTaken, invalidApis, noSuchApi, slugTaken } from '../features/sites.js'
import type { SiteStore } from '../port.js'
import type { GuideRecord, Page, PageRequest, ResourceRecord, SiteRecord } from '../records.js'
import type { LmdbEnvironment } from './databases.js'
import type { LmdbAccess } from './transaction-view.js'

const DOMAIN_STAMP = 'stamp'

/**
 * The sites section on today's LMDB databases of the feature (`environment.sites`: `SITE_DATABASES` and
 * `siteKeys` of layout.ts), read and written as src/store/site-store.ts did, so an existing
 * `./storage` is read as it is.
 */
export class LmdbSites implements SiteStore {
  constructor(readonly access: LmdbAccess, readonly environment: LmdbEnvironment) {}

  private get db() {
    return this.environment.sites
  }

  // ---------------------------------------------------------------- sites

  async get(id: string): Promise<SiteRecord | undefined> {
    return this.access.get(this.db.sites, id)
  }

  async bySlug(organizationId: string, slug: string): Promise<SiteRecord | undefined> {
    const id: string | undefined = this.access.get(this.db.siteSlugs, siteKeys.siteSlug(organizationId, slug))
    return id === undefined ? undefined : this.access.get(this.db.sites, id)
  }

  async list(organizationId: string, page: PageRequest): Promise<Page<SiteRecord>> {
    const total: number = this.access.get(this.db.siteCounts, organizationId) ?? 0
    if (page.offset >= total) return { items: [], total }
    const items: SiteRecord[] = []
    for (const { key } of this.access.range(this.db.siteNames, { ...siteKeys.siteNameRange(organizationId), offset: page.offset, limit: page.limit })) {
      const site: SiteRecord | undefined = this.access.get(this.db.sites, (key as string[])[2])
      if (site) items.push(site)
    }
    return { items, total }
  }

  async domains(): Promise<[string, string][]> {
    return this.access.range<string>(this.db.siteDomains).map(({ key, value }) => [key as string, value])
  }

  async domainsStamp(): Promise<number> {
    return this.access.get(this.db.siteDomainStamp, DOMAIN_STAMP) ?? 0
  }

  async listing(apiId: string): Promise<string[]> {
    return this.access.range(this.db.siteApis, siteKeys.siteApiRange(apiId)).map(({ key }) => (key as string[])[1])
  }

  async create(site: SiteRecord): Promise<void> {
    if (this.access.get(this.environment.index.organizations, site.organization_id) === undefined) throw notFound('organization')
    if (this.access.get(this.db.sites, site.id) !== undefined) throw new RegistryError('conflict', `site ${site.id} exists`)
    this.requireApis(site, site.api_ids)
    this.claimSlug(site)
    this.claimDomains(site)
    this.access.put(this.db.sites, site.id, site)
    this.access.put(this.db.siteNames, siteKeys.siteName(site.organization_id, site.name, site.id), null)
    this.adjustCount(site.organization_id, 1)
    if (site.domains.length > 0) this.raiseDomainStamp()
    for (const apiId of site.api_ids) this.access.put(this.db.siteApis, siteKeys.siteApi(apiId, site.id), null)
  }

  async update(after: SiteRecord): Promise<void> {
    const before = await this.get(after.id)
    if (!before) throw notFound('site')
    if (after.organization_id !== before.organization_id) throw new Error('a site stays in its organization')
    this.requireApis(after, after.api_ids.filter((id) => !before.api_ids.includes(id)))
    if (after.slug !== before.slug) {
      this.claimSlug(after)
      this.access.remove(this.db.siteSlugs, siteKeys.siteSlug(before.organization_id, before.slug))
    }
    this.claimDomains(after)
    for (const domain of before.domains) {
      if (!after.domains.includes(domain)) this.access.remove(this.db.siteDomains, domain)
    }
    if (after.domains.length !== before.domains.length || after.domains.some((domain) => !before.domains.includes(domain))) this.raiseDomainStamp()
    if (after.name !== before.name) {
      this.access.remove(this.db.siteNames, siteKeys.siteName(before.organization_id, before.name, before.id))
      this.access.put(this.db.siteNames, siteKeys.siteName(after.organization_id, after.name, after.id), null)
    }
    for (const apiId of before.api_ids) {
      if (!after.api_ids.includes(apiId)) this.access.remove(this.db.siteApis, siteKeys.siteApi(apiId, after.id))
    }
    for (const apiId of after.api_ids) this.access.put(this.db.siteApis, siteKeys.siteApi(apiId, after.id), null)
    this.access.put(this.db.sites, after.id, after)
  }

  async remove(id: string): Promise<SiteRecord | undefined> {
    const site = await this.get(id)
    if (!site) return undefined
    this.access.remove(this.db.siteSlugs, siteKeys.siteSlug(site.organization_id, site.slug))
    this.access.remove(this.db.siteNames, siteKeys.siteName(site.organization_id, site.name, id))
    this.adjustCount(site.organization_id, -1)
    for (const domain of site.domains) this.access.remove(this.db.siteDomains, domain)
    if (site.domains.length > 0) this.raiseDomainStamp()
    for (const apiId of site.api_ids) this.access.remove(this.db.siteApis, siteKeys.siteApi(apiId, id))
    for (const { key } of this.access.range(this.db.siteGuideOrder, siteKeys.guideOrderRange(id))) this.access.remove(this.db.siteGuideOrder, key)
    for (const { key } of this.access.range(this.db.siteGuides, siteKeys.guideRange(id))) this.access.remove(this.db.siteGuides, key)
    this.access.remove(this.db.sites, id)
    return site
  }

  async dropApi(apiId: string, at: string): Promise<void> {
    for (const siteId of await this.listing(apiId)) {
      const site = await this.get(siteId)
      if (site) this.access.put(this.db.sites, siteId, { ...site, api_ids: site.api_ids.filter((id) => id !== apiId), updated_at: at })
      this.access.remove(this.db.siteApis, siteKeys.siteApi(apiId, siteId))
    }
  }

  /** 422 `invalid_reference` unless every id names an API of the site's organization. */
  private requireApis(site: SiteRecord, apiIds: string[]): void {
    const errors: ProblemItem[] = []
    for (const id of apiIds) {
      const api: ResourceRecord | undefined = this.access.get(this.environment.index.resources, id)
      if (!api || api.kind !== 'api' || api.organization_id !== site.organization_id) {
        errors.push(noSuchApi(id, site.api_ids.indexOf(id)))
      }
    }
    if (errors.length > 0) throw invalidApis(errors, site.api_ids.length)
  }

  private claimSlug(site: SiteRecord): void {
    const key = siteKeys.siteSlug(site.organization_id, site.slug)
    const owner: string | undefined = this.access.get(this.db.siteSlugs, key)
    if (owner !== undefined && owner !== site.id) throw slugTaken(site.slug)
    this.access.put(this.db.siteSlugs, key, site.id)
  }

  /** 409 when another site holds one of the site's domains; else they are the site's. */
  private claimDomains(site: SiteRecord): void {
    site.domains.forEach((domain, i) => {
      const owner: string | undefined = this.access.get(this.db.siteDomains, domain)
      if (owner !== undefined && owner !== site.id) throw domainTaken(domain, i)
    })
    for (const domain of site.domains) this.access.put(this.db.siteDomains, domain, site.id)
  }

  /** Commutative, as resources' counts: concurrent creates in one organization do not conflict over the count. */
  private adjustCount(organizationId: string, delta: number): void {
    const counts = this.db.siteCounts
    this.access.atCommit(() => {
      const next = (counts.get(organizationId) ?? 0) + delta
      if (next > 0) counts.put(organizationId, next)
      else counts.remove(organizationId)
    })
  }

  /** Commutative: concurrent domain changes (by any process on the environment) never conflict over the stamp. */
  private raiseDomainStamp(): void {
    const stamps = this.db.siteDomainStamp
    this.access.atCommit(() => stamps.put(DOMAIN_STAMP, (stamps.get(DOMAIN_STAMP) ?? 0) + 1))
  }

  // ---------------------------------------------------------------- guides

  async guide(siteId: string, slug: string): Promise<GuideRecord | undefined> {
    return this.access.get(this.db.siteGuides, siteKeys.guide(siteId, slug))
  }

  async guides(siteId: string, page: PageRequest): Promise<Page<GuideRecord>> {
    const range = siteKeys.guideOrderRange(siteId)
    const total = this.access.count(this.db.siteGuideOrder, range)
    const items: GuideRecord[] = []
    for (const { key } of this.access.range(this.db.siteGuideOrder, { ...range, offset: page.offset, limit: page.limit })) {
      const guide = await this.guide(siteId, (key as [string, number, string])[2])
      if (guide) items.push(guide)
    }
    return { items, total }
  }

  async nextGuidePosition(siteId: string): Promise<number> {
    const range = siteKeys.guideOrderRange(siteId)
    const [last] = this.access.range(this.db.siteGuideOrder, { start: range.end, end: range.start, reverse: true, limit: 1 })
    return last === undefined ? 0 : (last.key as [string, number, string])[1] + 1
  }

  async putGuide(guide: GuideRecord): Promise<void> {
    if (!(await this.get(guide.site_id))) throw notFound('site')
    const current = await this.guide(guide.site_id, guide.slug)
    if (current) this.access.remove(this.db.siteGuideOrder, siteKeys.guideOrder(guide.site_id, current.position, guide.slug))
    this.access.put(this.db.siteGuideOrder, siteKeys.guideOrder(guide.site_id, guide.position, guide.slug), null)
    this.access.put(this.db.siteGuides, siteKeys.guide(guide.site_id, guide.slug), guide)
  }

  async removeGuide(siteId: string, slug: string): Promise<boolean> {
    const current = await this.guide(siteId, slug)
    if (!current) return false
    this.access.remove(this.db.siteGuideOrder, siteKeys.guideOrder(siteId, current.position, slug))
    this.access.remove(this.db.siteGuides, siteKeys.guide(siteId, slug))
    return true
  }
}
