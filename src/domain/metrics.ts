/**
 * What the domain tells an operator about its work, without knowing how it is exported: the HTTP
 * layer plugs a Prometheus implementation in (src/metrics), tests and the CLI use none.
 */
import type { ResourceKind, VersionSource } from '../store/records.js'

export interface DomainMetrics {
  /** A lint result was looked up in the cache before running Spectral. */
  lintCache(hit: boolean): void
  /** A version was committed (upload, restore, or the first version of a new resource). */
  versionWritten(kind: ResourceKind, source: VersionSource): void
  /** A blob was written to the store (not one that was already there). */
  blobWritten(bytes: number): void
}

export const NO_METRICS: DomainMetrics = {
  lintCache() {},
  versionWritten() {},
  blobWritten() {},
}
