import { invalidRequest, notFound } from '../../errors.js'
import type { Storage, Stores } from '../../storage/port.js'
import type { GuideRecord, Page, PageRequest, ResourceRecord, SiteRecord, VersionRecord } from '../../storage/records.js'
import type { Visibility } from '../../storage/registry-records.js'
import { isUlid, newId, now } from '../resources/ids.js'
import type { Actor } from '../accounts/organizations.js'
import { checkSlug, deriveSlug } from '../resources/slugs.js'

export type { GuideRecord, SiteRecord }

/**
 * A host name as a site domain: dot-separated labels of letters, digits and inner hyphens, the last
 * starting with a letter (so no IP address), no port, no scheme, no trailing dot. Stored lowercase.
 */
export const DOMAIN_PATTERN = '^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$'
export const DOMAIN_MAX_LENGTH = 253

export interface SiteInput {
  name: string
  slug?: string
  title?: string | null
  api_ids?: string[]
  visibility?: Visibility
  domains?: string[]
}

export type SiteUpdate = Partial<SiteInput>

export interface GuideInput {
  title: string
  markdown: string
  position?: number
}

/** An attached API as a public page shows it: public, with a current document. */
export interface PublishedApi {
  api: ResourceRecord
  current: VersionRecord
}

/** Host headers remembered at most (any client can send any header; the memo starts over beyond). */
const HOST_HEADER_MEMO = 4096

/** The most guides a site's pages list (the API lists them all, by page). */
const PAGE_GUIDES = 1000

/**
 * Hosted documentation sites: the sites and guides of an organization, and what their public pages
 * may show, on the storage port (docs/storage.md). Keeps the registry-wide domain → site map in memory
 * so that routing a request by its Host costs one Map lookup, synchronously (Fastify's rewriteUrl): read
 * from storage by `load`, which the app awaits before it serves, changed after every write this process
 * commits, and brought up to date by `refreshed` before each request is routed, so that a domain
 * changed by another process (another replica on the database, or the CLI) routes on the next request.
 */
export class Sites {
  /** domain → site id */
  private readonly hosts = new Map<string, string>()
  /** Host header as sent → site id, or '' for none: what routing a request costs is one lookup here. */
  private readonly hostHeaders = new Map<string, string>()
  /** The storage's domain stamp when `hosts` was last read whole (undefined before `load`). */
  private stamp: number | undefined
  /** The check of the stamp running now, and the one that waits for it (see `refreshed`). */
  private checking: Promise<void> | undefined
  private nextCheck: Promise<void> | undefined

  constructor(private readonly storage: Storage) {}

  /** (Re)builds the domain map from the committed state: before the app answers its first request. */
  async load(): Promise<void> {
    // The stamp first: a change between the two reads makes the next check read the map again.
    const stamp = await this.storage.read.sites.domainsStamp()
    const domains = await this.storage.read.sites.domains()
    this.hosts.clear()
    this.hostHeaders.clear()
    for (const [domain, siteId] of domains) this.hosts.set(domain, siteId)
    this.stamp = stamp
  }

  /**
   * Resolves once the domain map holds every domain change committed before the call, by any process:
   * one read of the storage's domain stamp, and of the whole map only when the stamp moved. Calls that
   * arrive while a check runs share the one after it (that check may have read the stamp before a
   * commit the caller already saw acknowledged), so at most one check runs and one waits whatever the
   * load. Never rejects: when storage cannot be read, the request is routed on the map as it is.
   */
  refreshed(): Promise<void> {
    if (this.nextCheck) return this.nextCheck
    if (!this.checking) return this.startCheck()
    const next = this.checking.then(() => {
      this.nextCheck = undefined
      return this.startCheck()
    })
    this.nextCheck = next
    return next
  }

  private startCheck(): Promise<void> {
    const check = this.checkStamp().finally(() => {
      if (this.checking === check) this.checking = undefined
    })
    this.checking = check
    return check
  }

  private async checkStamp(): Promise<void> {
    try {
      if (await this.storage.read.sites.domainsStamp() !== this.stamp) await this.load()
    } catch {
      // Storage is unreachable: /readyz says so, and the request's own reads fail on their own.
    }
  }

  // ---------------------------------------------------------------- sites

  /** A site of the actor's organization, by id or slug (see resolveRef); anything else is the same 404. */
  async require(actor: Pick<Actor, 'organization'>, ref: string): Promise<SiteRecord> {
    const org = actor.organization.id
    const { sites } = this.storage.read
    const found = isUlid(ref) ? await sites.get(ref) : undefined
    const site = found?.organization_id === org ? found : await sites.bySlug(org, ref)
    if (!site) throw notFound('site')
    return site
  }

  list(actor: Actor, page: PageRequest): Promise<Page<SiteRecord>> {
    return this.storage.read.sites.list(actor.organization.id, page)
  }

  async create(actor: Actor, input: SiteInput): Promise<SiteRecord> {
    const org = actor.organization.id
    checkSlug(input.slug)
    const at = now()
    const record: SiteRecord = {
      id: newId(),
      organization_id: org,
      name: input.name,
      slug: input.slug ?? deriveSlug(input.name, 'site'),
      title: input.title ?? null,
      api_ids: input.api_ids ?? [],
      visibility: input.visibility ?? 'private',
      domains: normalizeDomains(input.domains ?? []),
      created_at: at,
      updated_at: at,
    }
    const derived = input.slug === undefined
    // Decided on what the transaction reads: the free slug; the adapter refuses (and names) an API
    // that is not the organization's (422), a taken explicit slug or a domain of another site (409).
    const site = await this.storage.transaction(async (tx) => {
      const free = { ...record, slug: derived ? await freeSlug(tx, org, record.slug) : record.slug }
      await tx.sites.create(free)
      return free
    })
    this.rehost(undefined, site)
    return site
  }

  async update(actor: Actor, id: string, input: SiteUpdate): Promise<SiteRecord> {
    await this.require(actor, id)
    checkSlug(input.slug)
    const domains = input.domains === undefined ? undefined : normalizeDomains(input.domains)
    const { before, after } = await this.storage.transaction(async (tx) => {
      const current = await tx.sites.get(id)
      if (!current) throw notFound('site')
      const next: SiteRecord = { ...current, updated_at: now() }
      if (input.name !== undefined) next.name = input.name
      if (input.slug !== undefined) next.slug = input.slug
      if (input.title !== undefined) next.title = input.title
      if (input.api_ids !== undefined) next.api_ids = input.api_ids
      if (input.visibility !== undefined) next.visibility = input.visibility
      if (domains !== undefined) next.domains = domains
      // 404, 409 (slug, domain) and 422 (api_ids) as on create.
      await tx.sites.update(next)
      return { before: current, after: next }
    })
    this.rehost(before, after)
    return after
  }

  async remove(actor: Actor, id: string): Promise<void> {
    await this.require(actor, id)
    const removed = await this.storage.transaction((tx) => tx.sites.remove(id))
    if (!removed) throw notFound('site')
    this.rehost(removed, undefined)
  }

  /** Brings the host map in line with a committed change (after the commit: a refused write changes nothing). */
  private rehost(before: SiteRecord | undefined, after: SiteRecord | undefined): void {
    this.hostHeaders.clear()
    for (const domain of before?.domains ?? []) {
      if (this.hosts.get(domain) === before!.id) this.hosts.delete(domain)
    }
    for (const domain of after?.domains ?? []) this.hosts.set(domain, after!.id)
  }

  // ---------------------------------------------------------------- guides

  async putGuide(actor: Actor, siteId: string, slug: string, input: GuideInput): Promise<{ guide: GuideRecord; created: boolean }> {
    const site = await this.require(actor, siteId)
    return this.storage.transaction(async (tx) => {
      const current = await tx.sites.guide(site.id, slug)
      const at = now()
      const guide: GuideRecord = {
        id: current?.id ?? newId(),
        organization_id: site.organization_id,
        site_id: site.id,
        slug,
        title: input.title,
        markdown: input.markdown,
        // A new guide goes after the others unless placed; a replaced one keeps its place unless moved.
        position: input.position ?? current?.position ?? await tx.sites.nextGuidePosition(site.id),
        created_at: current?.created_at ?? at,
        updated_at: at,
      }
      // 404 when the site was deleted meanwhile.
      await tx.sites.putGuide(guide)
      return { guide, created: current === undefined }
    })
  }

  async getGuide(actor: Actor, siteId: string, slug: string): Promise<GuideRecord> {
    const guide = await this.storage.read.sites.guide((await this.require(actor, siteId)).id, slug)
    if (!guide) throw notFound('guide')
    return guide
  }

  async listGuides(actor: Actor, siteId: string, page: PageRequest): Promise<Page<GuideRecord>> {
    return this.storage.read.sites.guides((await this.require(actor, siteId)).id, page)
  }

  async removeGuide(actor: Actor, siteId: string, slug: string): Promise<void> {
    const site = await this.require(actor, siteId)
    if (!await this.storage.transaction((tx) => tx.sites.removeGuide(site.id, slug))) throw notFound('guide')
  }

  // ---------------------------------------------------------------- public pages

  /** The site a request's Host header names, if any: no lookup while no site has a domain, else one. */
  siteForHost(host: string | undefined): string | undefined {
    if (host === undefined || this.hosts.size === 0) return undefined
    const known = this.hostHeaders.get(host)
    if (known !== undefined) return known || undefined
    // A header not seen since the last change: normalize it (port, case, trailing dot) once.
    if (this.hostHeaders.size >= HOST_HEADER_MEMO) this.hostHeaders.clear()
    const siteId = this.hosts.get(normalizeHost(host))
    this.hostHeaders.set(host, siteId ?? '')
    return siteId
  }

  /** A public site by organization and site slug; a private or unknown one is the same 404. */
  async publicSite(orgSlug: string, slug: string): Promise<SiteRecord> {
    const org = await this.storage.read.organizations.bySlug(orgSlug)
    const site = org && await this.storage.read.sites.bySlug(org.id, slug)
    if (!site || site.visibility !== 'public') throw notFound('site')
    return site
  }

  /** An organization's public sites, by name (sites are few: at most the first 1,000 are looked at). */
  async publicSites(organizationId: string): Promise<SiteRecord[]> {
    const { items } = await this.storage.read.sites.list(organizationId, { offset: 0, limit: 1000 })
    return items.filter((site) => site.visibility === 'public')
  }

  /** A public site by id (a domain's site). */
  async publicSiteById(id: string): Promise<SiteRecord> {
    const site = await this.storage.read.sites.get(id)
    if (!site || site.visibility !== 'public') throw notFound('site')
    return site
  }

  /** The site's APIs that pages show, in the site's order: public ones with a current document. */
  async publishedApis(site: SiteRecord): Promise<PublishedApi[]> {
    const { resources } = this.storage.read
    const shown = await Promise.all(site.api_ids.map(async (id) => this.published(site, await resources.get(id))))
    return shown.filter((published) => published !== undefined)
  }

  /** One API of the site by its slug, as its reference page shows it; otherwise 404. */
  async publishedApi(site: SiteRecord, apiSlug: string): Promise<PublishedApi> {
    const published = await this.published(site, await this.storage.read.resources.bySlug(site.organization_id, 'api', apiSlug))
    if (!published) throw notFound('api')
    return published
  }

  async publicGuides(site: SiteRecord): Promise<GuideRecord[]> {
    return (await this.storage.read.sites.guides(site.id, { offset: 0, limit: PAGE_GUIDES })).items
  }

  async publicGuide(site: SiteRecord, slug: string): Promise<GuideRecord> {
    const guide = await this.storage.read.sites.guide(site.id, slug)
    if (!guide) throw notFound('guide')
    return guide
  }

  private async published(site: SiteRecord, api: ResourceRecord | undefined): Promise<PublishedApi | undefined> {
    if (!api || api.kind !== 'api' || api.visibility !== 'public' || !site.api_ids.includes(api.id)) return undefined
    const current = await this.storage.read.versions.current(api.id)
    return current && { api, current }
  }
}

/** The wanted slug when free in the organization, else the first free of `-2`, `-3`… (inside the transaction). */
async function freeSlug(tx: Stores, organizationId: string, wanted: string): Promise<string> {
  const taken = async (slug: string) => (await tx.sites.bySlug(organizationId, slug)) !== undefined
  if (!(await taken(wanted))) return wanted
  for (let n = 2; ; n++) {
    const suffix = `-${n}`
    const candidate = wanted.slice(0, 64 - suffix.length).replace(/-+$/, '') + suffix
    if (!(await taken(candidate))) return candidate
  }
}

const DOMAIN = new RegExp(DOMAIN_PATTERN)

/**
 * Whether a request with this `Host` header could be routed to a site at all: only when it names a
 * domain a site may have (DOMAIN_PATTERN), so never an IP address or a name without a dot (a load
 * balancer's health check, a service name, the bench's 127.0.0.1), and never the registry's own
 * public host (`registryHost`, REGISTRY_PUBLIC_HOST as `normalizeHost` gives it), which no site is
 * routed on whatever it claims.
 * Such requests need no look at the domain map, nor its check against storage before routing.
 */
export function couldBeSiteHost(host: string | undefined, registryHost?: string): boolean {
  if (host === undefined) return false
  const name = normalizeHost(host)
  return name.length <= DOMAIN_MAX_LENGTH && DOMAIN.test(name) && name !== registryHost
}

/** Lowercase, without a port or a trailing dot. */
export function normalizeHost(host: string): string {
  const lower = host.toLowerCase()
  const colon = lower.lastIndexOf(':')
  const name = colon === -1 || lower.includes(']', colon) ? lower : lower.slice(0, colon)
  return name.endsWith('.') ? name.slice(0, -1) : name
}

/** Lowercases the domains of a request; the same domain twice is a 400. */
function normalizeDomains(domains: string[]): string[] {
  const seen = new Set<string>()
  domains.forEach((domain, i) => {
    const lower = domain.toLowerCase()
    if (seen.has(lower)) throw invalidRequest(`domain '${lower}' is listed twice`, [{ path: ['domains', i], message: 'listed twice' }])
    seen.add(lower)
  })
  return [...seen]
}

/** The object clients see (CONTRACT §3: id, organization_id, created_at, updated_at and the fields). */
export function siteView(site: SiteRecord): Record<string, unknown> {
  return {
    id: site.id,
    organization_id: site.organization_id,
    name: site.name,
    slug: site.slug,
    title: site.title,
    api_ids: site.api_ids,
    visibility: site.visibility,
    domains: site.domains,
    created_at: site.created_at,
    updated_at: site.updated_at,
  }
}

export function guideView(guide: GuideRecord): Record<string, unknown> {
  return {
    id: guide.id,
    organization_id: guide.organization_id,
    site_id: guide.site_id,
    slug: guide.slug,
    title: guide.title,
    markdown: guide.markdown,
    position: guide.position,
    created_at: guide.created_at,
    updated_at: guide.updated_at,
  }
}
