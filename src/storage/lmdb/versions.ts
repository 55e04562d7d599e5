import { RegistryError, notFound } from '../../errors.js'
import { keys } from './layout.js'
import type { VersionStore } from '../port.js'
import type { Page, PageRequest, ResourceKind, ResourceRecord, VersionRecord } from '../records.js'
import type { IndexDatabases } from './databases.js'
import type { LmdbAccess } from './transaction-view.js'

export class LmdbVersions implements VersionStore {
  constructor(private readonly access: LmdbAccess, private readonly db: IndexDatabases) {}

  async current(resourceId: string): Promise<VersionRecord | undefined> {
    // The record itself, read on every GET of a resource; storage written before that holds its id.
    const current: VersionRecord | string | undefined = this.access.get(this.db.current, resourceId)
    return typeof current === 'string' ? this.byId(current) : current
  }

  async currentOf(resource: ResourceRecord): Promise<VersionRecord | undefined> {
    return resource.last_number === 0 ? undefined : this.get(resource.id, resource.last_number)
  }

  async get(resourceId: string, number: number): Promise<VersionRecord | undefined> {
    return this.access.get(this.db.versions, keys.version(resourceId, number))
  }

  async byId(id: string): Promise<VersionRecord | undefined> {
    const at: [string, number] | undefined = this.access.get(this.db.versionIds, id)
    return at === undefined ? undefined : this.access.get(this.db.versions, at)
  }

  async list(resourceId: string, page: PageRequest): Promise<Page<VersionRecord>> {
    const range = keys.versionRange(resourceId)
    const total = this.access.count(this.db.versions, range)
    const items = this.access.range<VersionRecord>(this.db.versions, {
      start: range.end, end: range.start, reverse: true, offset: page.offset, limit: page.limit,
    }).map(({ value }) => value)
    return { items, total }
  }

  async recent(organizationId: string, limit: number): Promise<VersionRecord[]> {
    // The organization's version index (written since the console) may name versions of deleted resources.
    const range = keys.organizationVersionRange(organizationId)
    const found: VersionRecord[] = []
    for (let offset = 0; found.length < limit; offset += limit) {
      const page = this.access.range<[string, number]>(this.db.organizationVersions, { start: range.end, end: range.start, reverse: true, offset, limit })
      for (const { value } of page) {
        const version: VersionRecord | undefined = this.access.get(this.db.versions, value)
        if (version && found.push(version) === limit) break
      }
      if (page.length < limit) break
    }
    return found
  }

  async scan(after: Pick<VersionRecord, 'resource_id' | 'number'> | undefined, limit: number): Promise<VersionRecord[]> {
    return this.access.range<VersionRecord>(this.db.versions, { start: after && keys.version(after.resource_id, after.number + 1), limit })
      .map(({ value }) => value)
  }

  async isKnownValid(kind: ResourceKind, checksum: string): Promise<boolean> {
    return this.access.get(this.db.validDocuments, keys.validDocument(kind, checksum)) === true
  }

  async append(version: VersionRecord): Promise<ResourceRecord> {
    const resource: ResourceRecord | undefined = this.access.get(this.db.resources, version.resource_id)
    if (!resource) throw notFound()
    if (version.number !== resource.last_number + 1) {
      throw new RegistryError('conflict', `version ${version.number} is not the next of ${resource.kind} ${resource.id} (${resource.last_number + 1})`)
    }
    if (this.access.get(this.db.versionIds, version.id) !== undefined) throw new RegistryError('conflict', `version ${version.id} exists`)
    this.access.put(this.db.versions, keys.version(version.resource_id, version.number), version)
    this.access.put(this.db.versionIds, version.id, [version.resource_id, version.number])
    // The organization's versions newest first (the console's overview) and the /metrics tally of
    // versions written, as the registry has always kept them; the tally is commutative (no conflict between uploads).
    this.access.put(this.db.organizationVersions, keys.organizationVersion(version.organization_id, version.id), [version.resource_id, version.number])
    const tallies = this.db.tallies
    const tally = ['versions-written', version.kind, version.source]
    this.access.atCommit(() => { tallies.put(tally, (tallies.get(tally) ?? 0) + 1) })
    this.access.put(this.db.current, version.resource_id, version)
    // A blind write of a fact that only ever becomes true: no read, so no conflict between uploads.
    this.access.put(this.db.validDocuments, keys.validDocument(version.kind, version.checksum), true)
    const updated: ResourceRecord = { ...resource, last_number: version.number, updated_at: version.created_at }
    this.access.put(this.db.resources, resource.id, updated)
    return updated
  }
}
