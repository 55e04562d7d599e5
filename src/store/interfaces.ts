/**
 * The two small interfaces the domain sees. The LMDB index and the file-system blob store implement
 * them; a database-server backend would implement the same two.
 */
import type { DocumentFormat } from '../documents/types.js'
import type {
  KeyRecord, ListFilter, OrganizationRecord, Page, PageRequest, ResourceKind, ResourceRecord, VersionRecord, VersionSource,
} from './records.js'

/**
 * A stored text: its canonical checksum (what the document is), the SHA-256 of its bytes (which text
 * it is: key order, YAML comments) and its format.
 */
export interface BlobRef {
  checksum: string
  digest: string
  format: DocumentFormat
}

export interface BlobStore {
  /**
   * Writes the bytes unless present (temporary file, fsync, rename). A blob already there is touched,
   * so that `gc` sees it as young while the upload that found it commits.
   */
  put(ref: BlobRef, bytes: string | Buffer): Promise<{ created: boolean; size: number }>
  get(ref: BlobRef): Promise<Buffer>
  has(ref: BlobRef): Promise<boolean>
  /** Every stored blob (for verify and gc). */
  list(): AsyncIterable<BlobRef & { size: number; modifiedMs: number }>
  /**
   * Deletes one blob, only when it was last written or touched before `unchangedSince` (ms epoch)
   * if given; answers the bytes freed (0 when it was not there or is younger).
   */
  remove(ref: BlobRef, unchangedSince?: number): Promise<number>
  /**
   * Stores that write through temporary files: deletes those last written before `olderThan` (ms
   * epoch), which a crash during a write leaves behind; answers the bytes freed.
   */
  removeTemporaries?(olderThan: number): Promise<number>
}

export interface StorageTallies {
  versions: number
  versionsWritten: { kind: ResourceKind; source: VersionSource; count: number }[]
  /** Since the tally began: blobs created less blobs removed (negative after gc of older blobs). */
  blobs: { count: number; bytes: number }
}

/** How a new slug is chosen when it is taken: an explicit one conflicts, a derived one gets `-2`, `-3`… */
export type SlugMode = 'explicit' | 'derived'

/** Decides, inside the write transaction, what a new version is (or that the upload changes nothing). */
export type VersionBuilder = (
  resource: ResourceRecord,
  current: VersionRecord | undefined,
  nextNumber: number,
) => { version: VersionRecord } | { unchanged: VersionRecord }

export interface RegistryIndex {
  // Organizations and keys
  listOrganizations(): OrganizationRecord[]
  getOrganization(id: string): OrganizationRecord | undefined
  getOrganizationBySlug(slug: string): OrganizationRecord | undefined
  /** Creates the organization and its first key atomically; 409 when the slug is taken. */
  createOrganization(org: OrganizationRecord, firstKey: KeyRecord): Promise<void>
  // Keys are read and written through the storage port only (src/storage, docs/storage.md).

  // Resources
  getResource(id: string): ResourceRecord | undefined
  getResourceBySlug(organizationId: string, kind: ResourceKind, slug: string): ResourceRecord | undefined
  /**
   * By name, ties by id (or the reverse); `filter.nameContains` keeps the names that contain it, and
   * `total` counts those.
   */
  listResources(organizationId: string, kind: ResourceKind, page: PageRequest, publicOnly?: boolean, filter?: ListFilter): Page<ResourceRecord>
  /**
   * Creates a resource (and its first version, when given) in one transaction; returns the record as
   * stored. `guard` runs first inside the transaction and may throw to refuse (e.g. a reference check).
   */
  createResource(
    record: ResourceRecord,
    slugMode: SlugMode,
    firstVersion?: (resource: ResourceRecord) => VersionRecord,
    guard?: () => void,
  ): Promise<{ resource: ResourceRecord; version?: VersionRecord }>
  /** Applies `change` to the current record inside one transaction; 404 when gone, 409 on a taken slug. */
  updateResource(id: string, change: (current: ResourceRecord) => ResourceRecord): Promise<ResourceRecord>
  countApisUsingRuleset(rulesetId: string): number

  // Versions
  getCurrentVersion(resourceId: string): VersionRecord | undefined
  getVersion(resourceId: string, number: number): VersionRecord | undefined
  getVersionById(id: string): VersionRecord | undefined
  /** Newest first. */
  listVersions(resourceId: string, page: PageRequest): Page<VersionRecord>
  /** Appends a version and makes it current, atomically; the builder sees the latest state. */
  appendVersion(resourceId: string, build: VersionBuilder): Promise<{ version: VersionRecord; created: boolean }>

  // Derived facts about documents (lint findings and diffs are kept through the storage port: results)
  /** True once a version with this checksum was committed for a resource of this kind. */
  isKnownValid(kind: ResourceKind, checksum: string): boolean

  /** Writes a consistent copy of the index to `directory`. */
  backup(directory: string): Promise<void>
  close(): Promise<void>
}
