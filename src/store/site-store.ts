/**
 * The sites feature's store: sites, their guides, the registry-wide domain map and the API → sites
 * reverse index, in named databases of the index's LMDB environment (`SITE_DATABASES`). Every change
 * is one transaction of the index; `dropApi` runs inside the transaction of an API's delete.
 *
 * Each change checks everything that can refuse it before its first write: lmdb's batched
 * `transaction()` keeps the writes a callback made before it threw.
 */
import type { Database } from 'lmdb'
import { RegistryError, notFound } from '../errors.js'
import type { RegistryIndex, SlugMode } from './interfaces.js'
import { SITE_DATABASES, siteKeys } from './layout.js'
import { LmdbIndex, type IndexKey } from './lmdb-index.js'
import type { Page, PageRequest, Visibility } from './records.js'

export interface SiteRecord {
  id: string
  organization_id: string
  name: string
  slug: string
  /** Public title shown on the pages; null: the name is shown. */
  title: string | null
  /** APIs of the same organization, in the order the landing page lists them. */
  api_ids: string[]
  visibility: Visibility
  /** Lowercase host names the site answers on. */
  domains: string[]
  created_at: string
  updated_at: string
}

export interface GuideRecord {
  id: string
  organization_id: string
  site_id: string
  slug: string
  title: string
  markdown: string
  position: number
  created_at: string
  updated_at: string
}

/** What the domain needs of the store. */
export interface SiteStore {
  get(id: string): SiteRecord | undefined
  getBySlug(org: string, slug: string): SiteRecord | undefined
  /** By name, ties by id. */
  list(org: string, page: PageRequest): Page<SiteRecord>
  /** Every (domain, site id) pair: the in-memory host map is built from it at start. */
  domains(): Iterable<[string, string]>
  /**
   * Stores a new site. Inside the transaction: `guard` runs first (reference checks), a taken derived
   * slug gets `-2`, `-3`…, a taken explicit slug or a domain of another site answers 409.
   */
  create(record: SiteRecord, slugMode: SlugMode, guard?: (record: SiteRecord) => void): Promise<SiteRecord>
  /** Applies `change` to the stored record in one transaction (404 when gone, 409 on a taken slug or domain). */
  update(id: string, change: (current: SiteRecord) => SiteRecord): Promise<SiteRecord>
  /** Removes a site, its guides, slug, listing, domains and references in one transaction. */
  remove(id: string): Promise<SiteRecord>
  /** Drops an API from every site listing it; must run inside a write transaction (an API's delete). */
  dropApi(apiId: string, at: string): void
  getGuide(siteId: string, slug: string): GuideRecord | undefined
  /** By position, then slug. */
  listGuides(siteId: string, page: PageRequest): Page<GuideRecord>
  /**
   * Creates or replaces a guide in one transaction (404 when the site is gone). `build` gets the
   * stored guide (if any) and the position after the last guide.
   */
  putGuide(siteId: string, slug: string, build: (current: GuideRecord | undefined, nextPosition: number) => GuideRecord):
    Promise<{ guide: GuideRecord; created: boolean }>
  /** Answers false when there was no such guide. */
  removeGuide(siteId: string, slug: string): Promise<boolean>
}

type Key = IndexKey
type Databases = { -readonly [name in keyof typeof SITE_DATABASES]: Database<any, Key> }

/** The LMDB implementation: the index's environment, its transactions. */
export class LmdbSiteStore implements SiteStore {
  private readonly db: Databases

  constructor(private readonly index: LmdbIndex) {
    this.db = index.databases(SITE_DATABASES)
  }

  /** The store of a registry index; sites need the LMDB index (named databases, shared transactions). */
  static of(index: RegistryIndex): LmdbSiteStore {
    return new LmdbSiteStore(LmdbIndex.require(index, 'sites'))
  }

  // ---------------------------------------------------------------- sites

  get(id: string): SiteRecord | undefined {
    return this.db.sites.get(id)
  }

  getBySlug(org: string, slug: string): SiteRecord | undefined {
    const id: string | undefined = this.db.siteSlugs.get(siteKeys.siteSlug(org, slug))
    return id === undefined ? undefined : this.get(id)
  }

  list(org: string, page: PageRequest): Page<SiteRecord> {
    const total: number = this.db.siteCounts.get(org) ?? 0
    if (page.offset >= total) return { items: [], total }
    const items: SiteRecord[] = []
    const range = siteKeys.siteNameRange(org)
    for (const key of this.db.siteNames.getKeys({ ...range, offset: page.offset, limit: page.limit })) {
      const site = this.get((key as string[])[2])
      if (site) items.push(site)
    }
    return { items, total }
  }

  *domains(): Iterable<[string, string]> {
    for (const { key, value } of this.db.siteDomains.getRange()) yield [key as string, value as string]
  }

  create(record: SiteRecord, slugMode: SlugMode, guard?: (record: SiteRecord) => void): Promise<SiteRecord> {
    return this.index.transaction(() => {
      guard?.(record)
      const site = { ...record, slug: this.freeSlug(record.organization_id, record.slug, slugMode) }
      this.requireFreeDomains(site.id, site.domains)
      for (const domain of site.domains) this.db.siteDomains.put(domain, site.id)
      this.db.sites.put(site.id, site)
      this.db.siteSlugs.put(siteKeys.siteSlug(site.organization_id, site.slug), site.id)
      this.db.siteNames.put(siteKeys.siteName(site.organization_id, site.name, site.id), null)
      this.adjustCount(site.organization_id, 1)
      for (const apiId of site.api_ids) this.db.siteApis.put(siteKeys.siteApi(apiId, site.id), null)
      return site
    })
  }

  update(id: string, change: (current: SiteRecord) => SiteRecord): Promise<SiteRecord> {
    return this.index.transaction(() => {
      const before = this.get(id)
      if (!before) throw notFound('site')
      const after = change(before)
      if (after.slug !== before.slug) this.freeSlug(after.organization_id, after.slug, 'explicit')
      this.requireFreeDomains(id, after.domains)
      if (after.slug !== before.slug) {
        this.db.siteSlugs.remove(siteKeys.siteSlug(before.organization_id, before.slug))
        this.db.siteSlugs.put(siteKeys.siteSlug(after.organization_id, after.slug), id)
      }
      if (after.name !== before.name) {
        this.db.siteNames.remove(siteKeys.siteName(before.organization_id, before.name, id))
        this.db.siteNames.put(siteKeys.siteName(after.organization_id, after.name, id), null)
      }
      for (const domain of before.domains) {
        if (!after.domains.includes(domain)) this.db.siteDomains.remove(domain)
      }
      for (const domain of after.domains) this.db.siteDomains.put(domain, id)
      for (const apiId of before.api_ids) {
        if (!after.api_ids.includes(apiId)) this.db.siteApis.remove(siteKeys.siteApi(apiId, id))
      }
      for (const apiId of after.api_ids) this.db.siteApis.put(siteKeys.siteApi(apiId, id), null)
      this.db.sites.put(id, after)
      return after
    })
  }

  remove(id: string): Promise<SiteRecord> {
    return this.index.transaction(() => {
      const site = this.get(id)
      if (!site) throw notFound('site')
      this.db.siteSlugs.remove(siteKeys.siteSlug(site.organization_id, site.slug))
      this.db.siteNames.remove(siteKeys.siteName(site.organization_id, site.name, id))
      this.adjustCount(site.organization_id, -1)
      for (const domain of site.domains) this.db.siteDomains.remove(domain)
      for (const apiId of site.api_ids) this.db.siteApis.remove(siteKeys.siteApi(apiId, id))
      for (const key of this.db.siteGuideOrder.getKeys(siteKeys.guideOrderRange(id))) this.db.siteGuideOrder.remove(key)
      for (const key of this.db.siteGuides.getKeys(siteKeys.guideRange(id))) this.db.siteGuides.remove(key)
      this.db.sites.remove(id)
      return site
    })
  }

  dropApi(apiId: string, at: string): void {
    for (const key of [...this.db.siteApis.getKeys(siteKeys.siteApiRange(apiId))]) {
      const siteId = (key as string[])[1]
      const site = this.get(siteId)
      if (site) this.db.sites.put(siteId, { ...site, api_ids: site.api_ids.filter((id) => id !== apiId), updated_at: at })
      this.db.siteApis.remove(key)
    }
  }

  /** Answers a free slug (inside a write transaction). */
  private freeSlug(org: string, wanted: string, mode: SlugMode): string {
    const taken = (slug: string) => this.db.siteSlugs.get(siteKeys.siteSlug(org, slug)) !== undefined
    if (!taken(wanted)) return wanted
    if (mode === 'explicit') throw new RegistryError('conflict', `slug '${wanted}' is already used by another site`)
    for (let n = 2; ; n++) {
      const suffix = `-${n}`
      const candidate = wanted.slice(0, 64 - suffix.length).replace(/-+$/, '') + suffix
      if (!taken(candidate)) return candidate
    }
  }

  /** 409 when another site holds one of `domains` (inside a write transaction, so the answer holds at the commit). */
  private requireFreeDomains(siteId: string, domains: string[]): void {
    domains.forEach((domain, i) => {
      const owner: string | undefined = this.db.siteDomains.get(domain)
      if (owner !== undefined && owner !== siteId) {
        throw new RegistryError('conflict', `domain '${domain}' is already used by another site`,
          [{ path: ['domains', i], message: 'this domain belongs to another site' }])
      }
    })
  }

  private adjustCount(org: string, delta: number): void {
    const next = (this.db.siteCounts.get(org) ?? 0) + delta
    if (next > 0) this.db.siteCounts.put(org, next)
    else this.db.siteCounts.remove(org)
  }

  // ---------------------------------------------------------------- guides

  getGuide(siteId: string, slug: string): GuideRecord | undefined {
    return this.db.siteGuides.get(siteKeys.guide(siteId, slug))
  }

  listGuides(siteId: string, page: PageRequest): Page<GuideRecord> {
    const range = siteKeys.guideOrderRange(siteId)
    // getCount marks the options object it is given as a count: it gets its own copy.
    const total = this.db.siteGuideOrder.getCount({ ...range })
    const items: GuideRecord[] = []
    for (const key of this.db.siteGuideOrder.getKeys({ ...range, offset: page.offset, limit: page.limit })) {
      const guide = this.getGuide(siteId, (key as [string, number, string])[2])
      if (guide) items.push(guide)
    }
    return { items, total }
  }

  putGuide(siteId: string, slug: string, build: (current: GuideRecord | undefined, nextPosition: number) => GuideRecord) {
    return this.index.transaction(() => {
      if (!this.get(siteId)) throw notFound('site')
      const current = this.getGuide(siteId, slug)
      const guide = build(current, this.nextPosition(siteId))
      if (current) this.db.siteGuideOrder.remove(siteKeys.guideOrder(siteId, current.position, slug))
      this.db.siteGuideOrder.put(siteKeys.guideOrder(siteId, guide.position, slug), null)
      this.db.siteGuides.put(siteKeys.guide(siteId, slug), guide)
      return { guide, created: current === undefined }
    })
  }

  removeGuide(siteId: string, slug: string): Promise<boolean> {
    return this.index.transaction(() => {
      const current = this.getGuide(siteId, slug)
      if (!current) return false
      this.db.siteGuideOrder.remove(siteKeys.guideOrder(siteId, current.position, slug))
      this.db.siteGuides.remove(siteKeys.guide(siteId, slug))
      return true
    })
  }

  /** One past the highest position in use (0 for the first guide). */
  private nextPosition(siteId: string): number {
    const range = siteKeys.guideOrderRange(siteId)
    for (const key of this.db.siteGuideOrder.getKeys({ start: range.end, end: range.start, reverse: true, limit: 1 })) {
      return (key as [string, number, string])[1] + 1
    }
    return 0
  }
}
