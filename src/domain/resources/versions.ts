import { LRUCache } from 'lru-cache'
import { notFound } from '../../errors.js'
import type { DocumentFormat } from '../../documents/types.js'
import type { BlobStore } from '../../storage/records.js'
import type { Storage, Stores } from '../../storage/port.js'
import type { Page, PageRequest, ResourceRecord, VersionRecord } from '../../storage/registry-records.js'
import type { DocumentProcessor, Tenant } from '../documents.js'
import { emitEvent, versionEventData, versionEventType } from '../events/outbox.js'
import { isUlid, newId, now } from './ids.js'
import { StaleGate, withGateRetries, type CompatibilityGate } from '../changes/compatibility.js'
import { RegistryReferences, type Reader } from './registry-refs.js'

export interface StoredDocument {
  version: VersionRecord
  format: DocumentFormat
  bytes: Buffer
}

/** Version history, restore, and reading stored documents in either format. */
export class Versions {
  /** Documents converted to the other format, by `<bytes digest>.<format>`; conversion runs in a worker. */
  private readonly converted: LRUCache<string, Buffer>
  /** Bundled documents, by the stored bytes, the format and the schema versions placed in them. */
  private readonly bundledCache = new LRUCache<string, { bytes: Buffer; checksum: string }>({ maxSize: 32 * 1024 * 1024, sizeCalculation: (b) => Math.max(1, b.bytes.length) })
  private readonly references: RegistryReferences

  constructor(
    private readonly storage: Storage,
    private readonly blobs: BlobStore,
    private readonly documents: DocumentProcessor,
    private readonly compatibility: CompatibilityGate,
    convertedCacheBytes = 64 * 1024 * 1024,
  ) {
    this.converted = new LRUCache<string, Buffer>({ maxSize: convertedCacheBytes, sizeCalculation: (b) => Math.max(1, b.length) })
    this.references = new RegistryReferences(storage, blobs)
  }

  list(resource: ResourceRecord, page: PageRequest): Promise<Page<VersionRecord>> {
    return this.storage.read.versions.list(resource.id, page)
  }

  async current(resource: ResourceRecord): Promise<VersionRecord> {
    const version = await this.storage.read.versions.current(resource.id)
    if (!version) throw notFound('current version')
    return version
  }

  async byId(resource: ResourceRecord, versionId: string): Promise<VersionRecord> {
    const version = await this.storage.read.versions.byId(versionId)
    if (!version || version.resource_id !== resource.id) throw notFound('version')
    return version
  }

  /** A version named in a path: by id (a ULID), or by its number (docs/api.md, "Ids and slugs"). */
  byRef(resource: ResourceRecord, ref: string): Promise<VersionRecord> {
    return isUlid(ref) ? this.byId(resource, ref) : this.byNumber(resource, Number(ref))
  }

  async byNumber(resource: ResourceRecord, number: number): Promise<VersionRecord> {
    const version = await this.storage.read.versions.get(resource.id, number)
    if (!version) throw notFound('version')
    return version
  }

  /**
   * Makes a previous version current again as a new version that reuses its blob. When the current
   * version already has that content, nothing is written and `created` is false. The compatibility
   * gate applies as to an upload: clients of the current version must not break (docs/changes.md).
   */
  async restore(resource: ResourceRecord, versionId: string, tenant?: Tenant): Promise<{ version: VersionRecord; created: boolean }> {
    const source = await this.byId(resource, versionId)
    return withGateRetries(async () => {
      const latest = (await this.storage.read.resources.get(resource.id)) ?? resource
      const decision = await this.compatibility.checkVersion(latest, source, tenant)
      return appendVersion(this.storage, resource, (committed, current) => {
        if (current && current.checksum === source.checksum) return { unchanged: current }
        if (!this.compatibility.holds(committed, current, decision)) throw new StaleGate()
        return {
          version: { ...source, id: newId(), number: committed.last_number + 1, source: 'restore', restored_from: source.id, created_at: now() },
        }
      })
    }, `the ${resource.kind}'s compatibility or current version kept changing during the restore; retry it`)
  }

  /** The stored bytes in the version's own format, or converted to the other one (as `tenant`'s work). */
  async read(version: VersionRecord, format: DocumentFormat = version.format, tenant?: Tenant): Promise<StoredDocument> {
    const own = await this.blobs.get(version)
    if (format === version.format) return { version, format, bytes: own }
    const key = `${version.digest}.${format}`
    let bytes = this.converted.get(key)
    if (!bytes) {
      const { text } = await this.documents.convert({ text: own.toString('utf8'), from: version.format, to: format }, tenant)
      bytes = Buffer.from(text, 'utf8')
      this.converted.set(key, bytes)
    }
    return { version, format, bytes }
  }

  /**
   * An API document with the registry schemas it refers to placed in it (`?bundle=true`), as the
   * reader may see them (see registry-refs.ts); its checksum is that of the bundled document. A
   * document without such references is the stored one.
   */
  async bundled(version: VersionRecord, format: DocumentFormat, reader: Reader, tenant?: Tenant): Promise<{ bytes: Buffer; checksum: string }> {
    const own = await this.blobs.get(version)
    const candidates = version.kind === 'api' && own.includes('/@') ? this.references.candidates(own.toString('utf8')) : []
    if (candidates.length === 0) return { bytes: (await this.read(version, format, tenant)).bytes, checksum: version.checksum }
    const { documents } = await this.references.lookUp(candidates, reader)
    const key = [version.digest, format, ...Object.values(documents).map((d) => `${d.name}=${d.checksum}`)].join(' ')
    let bundle = this.bundledCache.get(key)
    if (!bundle) {
      const { text, checksum } = await this.documents.bundle({ text: own.toString('utf8'), to: format, registryDocuments: documents }, tenant)
      bundle = { bytes: Buffer.from(text, 'utf8'), checksum }
      this.bundledCache.set(key, bundle)
    }
    return bundle
  }

  /** Findings recorded when the version was linted ([] when it was not). */
  async findings(version: VersionRecord) {
    if (!version.lint) return []
    return (await this.storage.read.results.lint(version.lint.ruleset_checksum, version.checksum)) ?? []
  }
}

/** What a version's builder decides: a new version, or that the upload changes nothing. */
type VersionOutcome = { version: VersionRecord } | { unchanged: VersionRecord }

/**
 * Appends a resource's next version in one transaction: `build` decides on the resource and its current
 * version as the transaction read them (a new version, or that nothing changes), may throw to refuse,
 * and the version goes to the mirror's journal in the same commit. 404 when the resource is gone.
 */
export function appendVersion(
  storage: Storage,
  appendTo: Pick<ResourceRecord, 'id' | 'organization_id'>,
  build: (resource: ResourceRecord, current: VersionRecord | undefined, tx: Stores) => VersionOutcome | Promise<VersionOutcome>,
): Promise<{ version: VersionRecord; created: boolean }> {
  return storage.transaction(async (tx) => {
    const resource = await tx.resources.get(appendTo.id)
    if (!resource) throw notFound()
    const outcome = await build(resource, await tx.versions.current(appendTo.id), tx)
    if ('unchanged' in outcome) return { version: outcome.unchanged, created: false }
    const { version } = outcome
    const updated = await tx.versions.append(version)
    await tx.mirror.append(updated.organization_id, version.created_at, { change: 'version', resource: updated, version })
    await emitEvent(tx, updated.organization_id, versionEventType(version), versionEventData(updated, version), version.created_at)
    return { version, created: true }
  }, appendTo.organization_id)
}
