/**
 * What the domain tells an operator about its work, without knowing how it is exported: the HTTP
 * layer plugs a Prometheus implementation in (src/metrics), tests and the CLI use none. What is
 * stored (versions, blobs) is not reported here: the storage port tallies it in every process's writes,
 * the CLI's too, and /metrics reads the tallies (`storage.read.tallies`).
 */
export interface DomainMetrics {
  /** A lint result was looked up in the cache before running Spectral. */
  lintCache(hit: boolean): void
}

export const NO_METRICS: DomainMetrics = {
  lintCache() {},
}
