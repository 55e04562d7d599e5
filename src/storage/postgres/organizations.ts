import { RegistryError, notFound } from '../../errors.js'
import type { KeyStore, KeyWithOrganization, OrganizationStore, ResourceLookup } from '../port.js'
import type { KeyRecord, OrganizationRecord, ResourceRecord } from '../records.js'
import { json, recordOf, recordsOf, run, type Prepared, type Sql } from './sql.js'

// Read on every request with a key (or a console session): prepared once per connection (sql.ts).
const ORGANIZATION_BY_ID: Prepared = { name: 'organization-by-id', text: 'SELECT record FROM organizations WHERE id = $1' }
const KEY_BY_ID: Prepared = { name: 'key-by-id', text: 'SELECT record FROM keys WHERE id = $1' }
const KEY_BY_HASH_WITH_ORGANIZATION: Prepared = {
  name: 'key-by-hash-with-organization',
  text: 'SELECT k.record AS key, o.record AS organization FROM keys k LEFT JOIN organizations o ON o.id = k.organization_id WHERE k.hash = $1',
}
// The same with the resource a read names, so that `GET /v1/apis/{api}` makes one round trip, not two.
const withResource = (by: 'id' | 'slug'): Prepared => ({
  name: `key-by-hash-with-organization-and-resource-by-${by}`,
  text: `SELECT k.record AS key, o.record AS organization, r.record AS resource FROM keys k
    LEFT JOIN organizations o ON o.id = k.organization_id
    LEFT JOIN resources r ON r.${by} = $3 AND r.organization_id = k.organization_id AND r.kind = $2
    WHERE k.hash = $1`,
})
const KEY_WITH_RESOURCE = { id: withResource('id'), slug: withResource('slug') }

export class PgOrganizations implements OrganizationStore {
  constructor(private readonly sql: Sql) {}

  get(id: string): Promise<OrganizationRecord | undefined> {
    return recordOf(this.sql, ORGANIZATION_BY_ID, [id])
  }

  bySlug(slug: string): Promise<OrganizationRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM organizations WHERE slug = $1', [slug])
  }

  list(): Promise<OrganizationRecord[]> {
    return recordsOf(this.sql, 'SELECT record FROM organizations ORDER BY id', [])
  }

  async put(organization: OrganizationRecord): Promise<void> {
    const owner = await this.bySlug(organization.slug)
    if (owner && owner.id !== organization.id) {
      throw new RegistryError('conflict', `organization slug '${organization.slug}' is already taken`)
    }
    await this.sql.query(
      `INSERT INTO organizations (id, slug, record) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET slug = excluded.slug, record = excluded.record`,
      [organization.id, organization.slug, json(organization)],
    )
  }
}

export class PgKeys implements KeyStore {
  constructor(private readonly sql: Sql) {}

  get(id: string): Promise<KeyRecord | undefined> {
    return recordOf(this.sql, KEY_BY_ID, [id])
  }

  byHash(hash: string): Promise<KeyRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM keys WHERE hash = $1', [hash])
  }

  async byHashWithOrganization(hash: string, along?: ResourceLookup): Promise<KeyWithOrganization | undefined> {
    if (along) {
      const { rows: [found] } = await run<{ key: KeyRecord; organization: OrganizationRecord | null; resource: ResourceRecord | null }>(
        this.sql, KEY_WITH_RESOURCE[along.by], [hash, along.kind, along.ref])
      return found && { key: found.key, organization: found.organization ?? undefined, ...(found.resource ? { resource: found.resource } : {}) }
    }
    const { rows: [found] } = await run<{ key: KeyRecord; organization: OrganizationRecord | null }>(this.sql, KEY_BY_HASH_WITH_ORGANIZATION, [hash])
    return found && { key: found.key, organization: found.organization ?? undefined }
  }

  list(organizationId: string): Promise<KeyRecord[]> {
    return recordsOf(this.sql, 'SELECT record FROM keys WHERE organization_id = $1 ORDER BY id', [organizationId])
  }

  async put(key: KeyRecord): Promise<void> {
    const { rowCount } = await this.sql.query('SELECT 1 FROM organizations WHERE id = $1', [key.organization_id])
    if (!rowCount) throw notFound('organization')
    const owner = await this.byHash(key.hash)
    if (owner && owner.id !== key.id) throw new RegistryError('conflict', 'a key with this hash already exists')
    await this.sql.query(
      `INSERT INTO keys (id, organization_id, hash, record) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET hash = excluded.hash, record = excluded.record`,
      [key.id, key.organization_id, key.hash, json(key)],
    )
  }
}
