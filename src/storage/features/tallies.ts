/**
 * The port's tallies section: what /metrics and `registry verify` count without reading everything,
 * kept by every process that writes (the CLI too). The versions written are tallied by `versions.append`;
 * blobs by whoever stored one (`addBlobs`, right after the blob store said it was new).
 */
import type { ResourceKind, VersionSource } from '../records.js'

export interface StorageTallies {
  versions: number
  versionsWritten: { kind: ResourceKind; source: VersionSource; count: number }[]
  /** Since the tally began: blobs created less blobs removed (negative after gc of older blobs). */
  blobs: { count: number; bytes: number }
}

export interface TallyReader {
  /** Versions stored now, versions written since the tally began by kind and source, and blobs created less removed. */
  get(): Promise<StorageTallies>
}

export interface TallyStore extends TallyReader {
  /** Adds to the blob tally. Commutative: applied at commit, it never conflicts with another writer. */
  addBlobs(count: number, bytes: number): Promise<void>
}
