import { RegistryError, notFound } from '../../errors.js'
import type { KeyStore, KeyWithOrganization, OrganizationStore, ResourceLookup } from '../port.js'
import type { KeyRecord, OrganizationRecord, ResourceRecord } from '../records.js'
import { json, recordOf, recordsOf, run, type Prepared, type Sql } from './sql.js'
import type { CommittedRecords } from './committed-records.js'
import { readKey, type KeyReads } from './key-reads.js'

// Read on every request with a key (or a console session): prepared once per connection (sql.ts).
const ORGANIZATION_BY_ID: Prepared = { name: 'organization-by-id', text: 'SELECT record FROM organizations WHERE id = $1' }
const KEY_BY_ID: Prepared = { name: 'key-by-id', text: 'SELECT record FROM keys WHERE id = $1' }

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
  /**
   * `committed` and `together`: outside transactions only (inside one, each read is its own statement and
   * parsed anew: its records are the caller's).
   */
  constructor(private readonly sql: Sql, private readonly committed?: CommittedRecords, private readonly together?: KeyReads) {}

  get(id: string): Promise<KeyRecord | undefined> {
    return recordOf(this.sql, KEY_BY_ID, [id])
  }

  byHash(hash: string): Promise<KeyRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM keys WHERE hash = $1', [hash])
  }

  async byHashWithOrganization(hash: string, along?: ResourceLookup): Promise<KeyWithOrganization | undefined> {
    const found = this.together ? await this.together.read(hash, along) : await readKey(this.sql, hash, along)
    if (!found) return undefined
    const parse = <T>(slot: string, text: string | null | undefined): T | undefined =>
      text == null ? undefined : this.committed ? this.committed.of<T>(slot, text) : JSON.parse(text) as T
    const key = parse<KeyRecord>(`k${hash}`, found.key)!
    const organization = parse<OrganizationRecord>(`o${key.organization_id}`, found.organization)
    const resource = along && parse<ResourceRecord>(`r${along.kind}/${along.by}/${along.ref}\n${key.organization_id}`, found.resource)
    return { key, organization, ...(resource ? { resource } : {}) }
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
