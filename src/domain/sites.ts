import { RegistryError, invalidRequest, notFound, type ProblemItem } from '../errors.js'
import type { RegistryIndex } from '../store/interfaces.js'
import type { Page, PageRequest, ResourceRecord, VersionRecord, Visibility } from '../store/records.js'
import type { GuideRecord, SiteRecord, SiteStore } from '../store/site-store.js'
import { newId, now, resolveRef } from './ids.js'
import type { Actor } from './organizations.js'
import type { Resources } from './resources.js'
import { checkSlug, deriveSlug } from './slugs.js'

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
 * may show. Keeps the registry-wide domain → site map in memory (built at start, changed after every
 * committed write) so that routing a request by its Host costs one Map lookup.
 */
export class Sites {
  /** domain → site id */
  private readonly hosts = new Map<string, string>()
  /** Host header as sent → site id, or '' for none: what routing a request costs is one lookup here. */
  private readonly hostHeaders = new Map<string, string>()

  constructor(
    private readonly store: SiteStore,
    private readonly index: RegistryIndex,
    resources: Resources,
  ) {
    for (const [domain, siteId] of store.domains()) this.hosts.set(domain, siteId)
    // Inside the API's delete transaction: the API leaves every site that listed it, atomically.
    resources.deleteHooks.push((resource) => {
      if (resource.kind === 'api') store.dropApi(resource.id, now())
    })
  }

  // ---------------------------------------------------------------- sites

  /** A site of the actor's organization, by id or slug (see resolveRef); anything else is the same 404. */
  require(actor: Pick<Actor, 'organization'>, ref: string): SiteRecord {
    const org = actor.organization.id
    const site = resolveRef(ref, (id) => {
      const found = this.store.get(id)
      return found?.organization_id === org ? found : undefined
    }, (slug) => this.store.getBySlug(org, slug))
    if (!site) throw notFound('site')
    return site
  }

  list(actor: Actor, page: PageRequest): Page<SiteRecord> {
    return this.store.list(actor.organization.id, page)
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
    // The references are checked inside the transaction: an API deleted meanwhile is refused.
    const site = await this.store.create(record, input.slug === undefined ? 'derived' : 'explicit',
      (r) => this.requireApis(org, r.api_ids))
    this.rehost(undefined, site)
    return site
  }

  async update(actor: Actor, id: string, input: SiteUpdate): Promise<SiteRecord> {
    this.require(actor, id)
    checkSlug(input.slug)
    const domains = input.domains === undefined ? undefined : normalizeDomains(input.domains)
    let before: SiteRecord | undefined
    const after = await this.store.update(id, (current) => {
      before = current
      if (input.api_ids !== undefined) this.requireApis(current.organization_id, input.api_ids)
      const next: SiteRecord = { ...current, updated_at: now() }
      if (input.name !== undefined) next.name = input.name
      if (input.slug !== undefined) next.slug = input.slug
      if (input.title !== undefined) next.title = input.title
      if (input.api_ids !== undefined) next.api_ids = input.api_ids
      if (input.visibility !== undefined) next.visibility = input.visibility
      if (domains !== undefined) next.domains = domains
      return next
    })
    this.rehost(before, after)
    return after
  }

  async remove(actor: Actor, id: string): Promise<void> {
    this.require(actor, id)
    this.rehost(await this.store.remove(id), undefined)
  }

  /** 422 `invalid_reference` unless every id names an API of the organization (inside a transaction). */
  private requireApis(org: string, apiIds: string[]): void {
    const errors: ProblemItem[] = []
    apiIds.forEach((id, i) => {
      const api = this.index.getResource(id)
      if (!api || api.kind !== 'api' || api.organization_id !== org) {
        errors.push({ path: ['api_ids', i], message: `'${id}' names no API of this organization` })
      }
    })
    if (errors.length > 0) {
      throw new RegistryError('invalid_reference', `api_ids: ${errors.length} of ${apiIds.length} name no API of this organization`, errors)
    }
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
    const site = this.require(actor, siteId)
    return this.store.putGuide(site.id, slug, (current, nextPosition) => {
      const at = now()
      return {
        id: current?.id ?? newId(),
        organization_id: site.organization_id,
        site_id: site.id,
        slug,
        title: input.title,
        markdown: input.markdown,
        // A new guide goes after the others unless placed; a replaced one keeps its place unless moved.
        position: input.position ?? current?.position ?? nextPosition,
        created_at: current?.created_at ?? at,
        updated_at: at,
      }
    })
  }

  getGuide(actor: Actor, siteId: string, slug: string): GuideRecord {
    const guide = this.store.getGuide(this.require(actor, siteId).id, slug)
    if (!guide) throw notFound('guide')
    return guide
  }

  listGuides(actor: Actor, siteId: string, page: PageRequest): Page<GuideRecord> {
    return this.store.listGuides(this.require(actor, siteId).id, page)
  }

  async removeGuide(actor: Actor, siteId: string, slug: string): Promise<void> {
    if (!await this.store.removeGuide(this.require(actor, siteId).id, slug)) throw notFound('guide')
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
  publicSite(orgSlug: string, slug: string): SiteRecord {
    const org = this.index.getOrganizationBySlug(orgSlug)
    const site = org && this.store.getBySlug(org.id, slug)
    if (!site || site.visibility !== 'public') throw notFound('site')
    return site
  }

  /** An organization's public sites, by name (sites are few: at most the first 1,000 are looked at). */
  publicSites(organizationId: string): SiteRecord[] {
    return this.store.list(organizationId, { offset: 0, limit: 1000 }).items.filter((site) => site.visibility === 'public')
  }

  /** A public site by id (a domain's site). */
  publicSiteById(id: string): SiteRecord {
    const site = this.store.get(id)
    if (!site || site.visibility !== 'public') throw notFound('site')
    return site
  }

  /** The slug of the site's organization, for its page addresses. */
  organizationSlug(site: SiteRecord): string {
    const org = this.index.getOrganization(site.organization_id)
    if (!org) throw notFound('organization')
    return org.slug
  }

  /** The site's APIs that pages show, in the site's order: public ones with a current document. */
  publishedApis(site: SiteRecord): PublishedApi[] {
    const shown: PublishedApi[] = []
    for (const id of site.api_ids) {
      const published = this.published(site, this.index.getResource(id))
      if (published) shown.push(published)
    }
    return shown
  }

  /** One API of the site by its slug, as its reference page shows it; otherwise 404. */
  publishedApi(site: SiteRecord, apiSlug: string): PublishedApi {
    const published = this.published(site, this.index.getResourceBySlug(site.organization_id, 'api', apiSlug))
    if (!published) throw notFound('api')
    return published
  }

  publicGuides(site: SiteRecord): GuideRecord[] {
    return this.store.listGuides(site.id, { offset: 0, limit: PAGE_GUIDES }).items
  }

  publicGuide(site: SiteRecord, slug: string): GuideRecord {
    const guide = this.store.getGuide(site.id, slug)
    if (!guide) throw notFound('guide')
    return guide
  }

  private published(site: SiteRecord, api: ResourceRecord | undefined): PublishedApi | undefined {
    if (!api || api.kind !== 'api' || api.visibility !== 'public' || !site.api_ids.includes(api.id)) return undefined
    const current = this.index.getCurrentVersion(api.id)
    return current && { api, current }
  }
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
