import { RegistryError, notFound, type ProblemItem } from '../../errors.js'
import { domainTaken, invalidApis, noSuchApi, slugTaken } from '../features/sites.js'
import type { SiteStore } from '../port.js'
import type { GuideRecord, Page, PageRequest, SiteRecord } from '../records.js'
import { json, recordOf, recordsOf, type Sql } from './sql.js'

/**
 * The sites section on PostgreSQL (migrations/005_sites.sql): `sites` with its unique (organization,
 * slug), `site_domains` (one site per domain), `site_apis` (the API → sites index) and `site_guides`,
 * the last three removed with their site. The stores check first so that a refusal says what the
 * sites API has always said; the constraints hold whatever happens.
 */
export class PgSites implements SiteStore {
  constructor(private readonly sql: Sql) {}

  // ---------------------------------------------------------------- sites

  get(id: string): Promise<SiteRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM sites WHERE id = $1', [id])
  }

  bySlug(organizationId: string, slug: string): Promise<SiteRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM sites WHERE organization_id = $1 AND slug = $2', [organizationId, slug])
  }

  async list(organizationId: string, page: PageRequest): Promise<Page<SiteRecord>> {
    const { rows: [{ total }] } = await this.sql.query<{ total: string }>('SELECT count(*) AS total FROM sites WHERE organization_id = $1', [organizationId])
    const items = await recordsOf<SiteRecord>(this.sql,
      'SELECT record FROM sites WHERE organization_id = $1 ORDER BY name, id OFFSET $2 LIMIT $3', [organizationId, page.offset, page.limit])
    return { items, total: Number(total) }
  }

  async domains(): Promise<[string, string][]> {
    const { rows } = await this.sql.query<{ domain: string; site_id: string }>('SELECT domain, site_id FROM site_domains ORDER BY domain')
    return rows.map(({ domain, site_id }) => [domain, site_id])
  }

  async domainsStamp(): Promise<number> {
    // Raised by a trigger on site_domains (010_site_domain_stamp.sql) in the changing transaction.
    // Read before every request is routed: prepared once per connection (sql.ts).
    const { rows: [row] } = await this.sql.query<{ stamp: string }>({ name: 'site-domain-stamp', text: 'SELECT stamp FROM site_domain_stamp', values: [] })
    return Number(row?.stamp ?? 0)
  }

  async listing(apiId: string): Promise<string[]> {
    const { rows } = await this.sql.query<{ site_id: string }>('SELECT site_id FROM site_apis WHERE api_id = $1 ORDER BY site_id', [apiId])
    return rows.map((row) => row.site_id)
  }

  async create(site: SiteRecord): Promise<void> {
    const { rowCount } = await this.sql.query('SELECT 1 FROM organizations WHERE id = $1', [site.organization_id])
    if (!rowCount) throw notFound('organization')
    if (await this.get(site.id)) throw new RegistryError('conflict', `site ${site.id} exists`)
    await this.requireApis(site, site.api_ids)
    await this.checkSlugFree(site)
    await this.checkDomainsFree(site)
    await this.sql.query('INSERT INTO sites (id, organization_id, slug, name, visibility, record) VALUES ($1, $2, $3, $4, $5, $6)',
      [site.id, site.organization_id, site.slug, site.name, site.visibility, json(site)])
    await this.addDomains(site.id, site.domains)
    await this.addApis(site.id, site.api_ids)
  }

  async update(after: SiteRecord): Promise<void> {
    const before = await this.get(after.id)
    if (!before) throw notFound('site')
    if (after.organization_id !== before.organization_id) throw new Error('a site stays in its organization')
    const added = after.api_ids.filter((id) => !before.api_ids.includes(id))
    await this.requireApis(after, added)
    if (after.slug !== before.slug) await this.checkSlugFree(after)
    await this.checkDomainsFree(after)
    await this.sql.query('UPDATE sites SET slug = $2, name = $3, visibility = $4, record = $5 WHERE id = $1',
      [after.id, after.slug, after.name, after.visibility, json(after)])
    await this.sql.query('DELETE FROM site_domains WHERE site_id = $1 AND NOT (domain = ANY($2::text[]))', [after.id, after.domains])
    await this.addDomains(after.id, after.domains.filter((domain) => !before.domains.includes(domain)))
    await this.sql.query('DELETE FROM site_apis WHERE site_id = $1 AND NOT (api_id = ANY($2::text[]))', [after.id, after.api_ids])
    await this.addApis(after.id, added)
  }

  remove(id: string): Promise<SiteRecord | undefined> {
    // Its domains, API references and guides go with it (ON DELETE CASCADE).
    return recordOf(this.sql, 'DELETE FROM sites WHERE id = $1 RETURNING record', [id])
  }

  async dropApi(apiId: string, at: string): Promise<void> {
    const listing = await recordsOf<SiteRecord>(this.sql,
      'SELECT s.record FROM site_apis a JOIN sites s ON s.id = a.site_id WHERE a.api_id = $1 ORDER BY s.id', [apiId])
    for (const site of listing) {
      const after = { ...site, api_ids: site.api_ids.filter((id) => id !== apiId), updated_at: at }
      await this.sql.query('UPDATE sites SET record = $2 WHERE id = $1', [site.id, json(after)])
    }
    await this.sql.query('DELETE FROM site_apis WHERE api_id = $1', [apiId])
  }

  /** 422 `invalid_reference` unless every id names an API of the site's organization (the foreign key holds regardless). */
  private async requireApis(site: SiteRecord, apiIds: string[]): Promise<void> {
    if (apiIds.length === 0) return
    const { rows } = await this.sql.query<{ id: string }>(
      "SELECT id FROM resources WHERE id = ANY($1::text[]) AND kind = 'api' AND organization_id = $2", [apiIds, site.organization_id])
    const found = new Set(rows.map((row) => row.id))
    const errors: ProblemItem[] = apiIds.filter((id) => !found.has(id)).map((id) => noSuchApi(id, site.api_ids.indexOf(id)))
    if (errors.length > 0) throw invalidApis(errors, site.api_ids.length)
  }

  private async checkSlugFree(site: SiteRecord): Promise<void> {
    const owner = await this.bySlug(site.organization_id, site.slug)
    if (owner && owner.id !== site.id) throw slugTaken(site.slug)
  }

  /** 409 naming the first of the site's domains that another site holds. */
  private async checkDomainsFree(site: SiteRecord): Promise<void> {
    if (site.domains.length === 0) return
    const { rows } = await this.sql.query<{ domain: string; site_id: string }>(
      'SELECT domain, site_id FROM site_domains WHERE domain = ANY($1::text[])', [site.domains])
    const owners = new Map(rows.map((row) => [row.domain, row.site_id]))
    site.domains.forEach((domain, i) => {
      const owner = owners.get(domain)
      if (owner !== undefined && owner !== site.id) throw domainTaken(domain, i)
    })
  }

  private async addDomains(siteId: string, domains: string[]): Promise<void> {
    if (domains.length === 0) return
    await this.sql.query('INSERT INTO site_domains (domain, site_id) SELECT unnest($1::text[]), $2', [domains, siteId])
  }

  private async addApis(siteId: string, apiIds: string[]): Promise<void> {
    if (apiIds.length === 0) return
    await this.sql.query('INSERT INTO site_apis (api_id, site_id) SELECT unnest($1::text[]), $2', [apiIds, siteId])
  }

  // ---------------------------------------------------------------- guides

  guide(siteId: string, slug: string): Promise<GuideRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM site_guides WHERE site_id = $1 AND slug = $2', [siteId, slug])
  }

  async guides(siteId: string, page: PageRequest): Promise<Page<GuideRecord>> {
    const { rows: [{ total }] } = await this.sql.query<{ total: string }>('SELECT count(*) AS total FROM site_guides WHERE site_id = $1', [siteId])
    const items = await recordsOf<GuideRecord>(this.sql,
      'SELECT record FROM site_guides WHERE site_id = $1 ORDER BY position, slug OFFSET $2 LIMIT $3', [siteId, page.offset, page.limit])
    return { items, total: Number(total) }
  }

  async nextGuidePosition(siteId: string): Promise<number> {
    const { rows: [{ next }] } = await this.sql.query<{ next: number }>(
      'SELECT coalesce(max(position) + 1, 0) AS next FROM site_guides WHERE site_id = $1', [siteId])
    return Number(next)
  }

  async putGuide(guide: GuideRecord): Promise<void> {
    if (!(await this.get(guide.site_id))) throw notFound('site')
    await this.sql.query(
      `INSERT INTO site_guides (site_id, slug, id, position, record) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (site_id, slug) DO UPDATE SET id = excluded.id, position = excluded.position, record = excluded.record`,
      [guide.site_id, guide.slug, guide.id, guide.position, json(guide)],
    )
  }

  async removeGuide(siteId: string, slug: string): Promise<boolean> {
    const { rowCount } = await this.sql.query('DELETE FROM site_guides WHERE site_id = $1 AND slug = $2', [siteId, slug])
    return rowCount === 1
  }
}
