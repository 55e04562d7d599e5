import { RegistryError, notFound } from '../../errors.js'
import type { KeyStore, OrganizationStore } from '../port.js'
import type { KeyRecord, OrganizationRecord } from '../records.js'
import { json, recordOf, recordsOf, type Sql } from './sql.js'

export class PgOrganizations implements OrganizationStore {
  constructor(private readonly sql: Sql) {}

  get(id: string): Promise<OrganizationRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM organizations WHERE id = $1', [id])
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
    return recordOf(this.sql, 'SELECT record FROM keys WHERE id = $1', [id])
  }

  byHash(hash: string): Promise<KeyRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM keys WHERE hash = $1', [hash])
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
