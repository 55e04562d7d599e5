import { RegistryError, notFound } from '../../errors.js'
import type { ResourceStore } from '../port.js'
import type { ListFilter, Page, PageRequest, ResourceKind, ResourceRecord } from '../records.js'
import { json, recordOf, recordsOf, type Prepared, type Sql } from './sql.js'

// Read on every request that names a resource: prepared once per connection (sql.ts).
const RESOURCE_BY_ID: Prepared = { name: 'resource-by-id', text: 'SELECT record FROM resources WHERE id = $1' }
const RESOURCE_BY_SLUG: Prepared = {
  name: 'resource-by-slug', text: 'SELECT record FROM resources WHERE organization_id = $1 AND kind = $2 AND slug = $3',
}

export class PgResources implements ResourceStore {
  constructor(private readonly sql: Sql) {}

  get(id: string): Promise<ResourceRecord | undefined> {
    return recordOf(this.sql, RESOURCE_BY_ID, [id])
  }

  bySlug(organizationId: string, kind: ResourceKind, slug: string): Promise<ResourceRecord | undefined> {
    return recordOf(this.sql, RESOURCE_BY_SLUG, [organizationId, kind, slug])
  }

  async list(
    organizationId: string, kind: ResourceKind, page: PageRequest, publicOnly = false, filter: ListFilter = {},
  ): Promise<Page<ResourceRecord>> {
    const parameters: unknown[] = [organizationId, kind]
    let where = `organization_id = $1 AND kind = $2${publicOnly ? " AND visibility = 'public'" : ''}`
    if (filter.nameContains) {
      parameters.push(filter.nameContains.toLowerCase())
      // Names are COLLATE "C" (byte order, as LMDB sorts), under which lower() folds ASCII only: the
      // root ICU locale folds as JavaScript's toLowerCase does (Ä, Ø, Σ), which the LMDB adapter uses.
      where += ` AND strpos(lower(name COLLATE "und-x-icu"), $${parameters.length}) > 0`
    }
    const { rows: [{ total }] } = await this.sql.query<{ total: string }>(`SELECT count(*) AS total FROM resources WHERE ${where}`, parameters)
    const order = filter.descending ? 'name DESC, id DESC' : 'name, id'
    const items = await recordsOf<ResourceRecord>(this.sql,
      `SELECT record FROM resources WHERE ${where} ORDER BY ${order} OFFSET $${parameters.length + 1} LIMIT $${parameters.length + 2}`,
      [...parameters, page.offset, page.limit])
    return { items, total: Number(total) }
  }

  async countApisUsingRuleset(rulesetId: string): Promise<number> {
    const { rows: [{ count }] } = await this.sql.query<{ count: string }>(
      "SELECT count(*) AS count FROM resources WHERE ruleset_id = $1 AND kind = 'api'", [rulesetId])
    return Number(count)
  }

  async create(resource: ResourceRecord): Promise<void> {
    if (resource.last_number !== 0) throw new Error('a resource is created without versions: append them')
    const { rowCount } = await this.sql.query('SELECT 1 FROM organizations WHERE id = $1', [resource.organization_id])
    if (!rowCount) throw notFound('organization')
    await this.checkSlugFree(resource)
    await this.sql.query(
      `INSERT INTO resources (id, organization_id, kind, slug, name, visibility, ruleset_id, last_number, record)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8)`,
      [resource.id, resource.organization_id, resource.kind, resource.slug, resource.name, resource.visibility, rulesetOf(resource), json(resource)],
    )
  }

  async update(after: ResourceRecord): Promise<void> {
    const before = await this.get(after.id)
    if (!before) throw notFound()
    if (after.last_number !== before.last_number) throw new Error('last_number changes only through versions.append')
    if (after.slug !== before.slug) await this.checkSlugFree(after)
    await this.sql.query(
      'UPDATE resources SET slug = $2, name = $3, visibility = $4, ruleset_id = $5, record = $6 WHERE id = $1',
      [after.id, after.slug, after.name, after.visibility, rulesetOf(after), json(after)],
    )
  }

  async remove(id: string): Promise<ResourceRecord | undefined> {
    // Its versions go with it (ON DELETE CASCADE).
    return recordOf(this.sql, 'DELETE FROM resources WHERE id = $1 RETURNING record', [id])
  }

  /** The unique constraint holds whatever happens; this says which slug, in the registry's words. */
  private async checkSlugFree(resource: ResourceRecord): Promise<void> {
    const owner = await this.bySlug(resource.organization_id, resource.kind, resource.slug)
    if (owner && owner.id !== resource.id) {
      throw new RegistryError('conflict', `slug '${resource.slug}' is already used by another ${resource.kind}`)
    }
  }
}

const rulesetOf = (resource: ResourceRecord): string | null => (resource.kind === 'api' ? resource.ruleset_id ?? null : null)
