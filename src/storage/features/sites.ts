/**
 * The port's sites section (issue 16): documentation sites, their guides, the registry-wide domain
 * map and the API → sites reverse index, inside a transaction (`SiteStore`) or from the committed
 * state (`SiteReader`).
 *
 * What the adapters enforce whatever the code above does: a site belongs to an existing organization
 * (404), one slug per organization (409), one site per domain across the whole registry (409, naming
 * the domain's place in `domains`), every `api_ids` entry names an API of the site's organization
 * (422 `invalid_reference`, naming the entry), a guide belongs to an existing site (404) and goes with
 * it. What stays in the domain: choosing a free derived slug (`-2`, `-3`…), decided in the transaction.
 */
import { RegistryError, type ProblemItem } from '../../errors.js'
import type { GuideRecord, Page, PageRequest, SiteRecord } from '../records.js'

export interface SiteReader {
  get(id: string): Promise<SiteRecord | undefined>
  bySlug(organizationId: string, slug: string): Promise<SiteRecord | undefined>
  /** An organization's sites by name (ties by id), with the total. */
  list(organizationId: string, page: PageRequest): Promise<Page<SiteRecord>>
  /** Every (domain, site id) pair of the registry, in domain order: the in-memory host map is built from it. */
  domains(): Promise<[domain: string, siteId: string][]>
  /**
   * A number that changes with every committed change of the domain map (a domain added, moved or
   * removed, a site with domains removed): a replica compares it with the one its in-memory map was
   * read at, and reads `domains` again only when it moved. Only equality means anything.
   */
  domainsStamp(): Promise<number>
  /** The ids of the sites whose `api_ids` list the API, in id order. */
  listing(apiId: string): Promise<string[]>
  guide(siteId: string, slug: string): Promise<GuideRecord | undefined>
  /** A site's guides by position, then slug, with the total. */
  guides(siteId: string, page: PageRequest): Promise<Page<GuideRecord>>
  /** One past the highest position of the site's guides; 0 when it has none. */
  nextGuidePosition(siteId: string): Promise<number>
}

export interface SiteStore extends SiteReader {
  /**
   * Inserts a new site with its slug, listing, domains and API references. 404 when its organization
   * does not exist; 409 `conflict` when the slug is taken in the organization or a domain by another
   * site; 422 `invalid_reference` when an `api_ids` entry names no API of the organization.
   */
  create(site: SiteRecord): Promise<void>
  /**
   * Replaces a stored site (same id and organization), moving its slug, listing, domains and API
   * references; 404 when it is gone, 409 and 422 as `create` (only entries added to `api_ids` are checked).
   */
  update(site: SiteRecord): Promise<void>
  /** Removes a site with its guides, slug, listing, domains and API references; undefined when it was not there. */
  remove(id: string): Promise<SiteRecord | undefined>
  /**
   * Removes an API from every site listing it (each such site's `updated_at` becomes `at`): what an API's
   * delete calls in its own transaction, so that no site is left listing a deleted API.
   */
  dropApi(apiId: string, at: string): Promise<void>
  /** Inserts or replaces a guide by (site, slug), moving it in the order when its position changed; 404 when the site does not exist. */
  putGuide(guide: GuideRecord): Promise<void>
  /** False when there was no such guide. */
  removeGuide(siteId: string, slug: string): Promise<boolean>
}

// The refusals both adapters answer, in the words the sites API has always used (same problem details).

export const slugTaken = (slug: string): RegistryError => new RegistryError('conflict', `slug '${slug}' is already used by another site`)

export const domainTaken = (domain: string, index: number): RegistryError =>
  new RegistryError('conflict', `domain '${domain}' is already used by another site`,
    [{ path: ['domains', index], message: 'this domain belongs to another site' }])

/** `errors` name the bad entries of a site's `api_ids` (of `of` entries). */
export const invalidApis = (errors: ProblemItem[], of: number): RegistryError =>
  new RegistryError('invalid_reference', `api_ids: ${errors.length} of ${of} name no API of this organization`, errors)

export const noSuchApi = (id: string, index: number): ProblemItem => ({ path: ['api_ids', index], message: `'${id}' names no API of this organization` })
