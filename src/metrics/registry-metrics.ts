/**
 * The registry's Prometheus metrics (prom-client), on a registry of their own so that several apps
 * in one process (tests) never collide. The domain and the worker pool report through their small
 * interfaces (DomainMetrics, WorkerObserver); HTTP requests are recorded by src/http/metrics-routes.ts.
 */
import { Counter, Gauge, Histogram, Registry as PromRegistry, collectDefaultMetrics } from 'prom-client'
import type { WorkerEnd, WorkerObserver, WorkPhase } from '../documents/pool.js'
import type { DomainMetrics } from '../domain/operations/metrics.js'
import type { Registry } from '../domain/registry.js'
import type { StorageTallies } from '../storage/features/tallies.js'
import { RequestStats, type RequestRecorder } from './request-stats.js'

const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120]
const PHASE_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120]

export type { RequestRecorder } from './request-stats.js'

export class RegistryMetrics implements DomainMetrics, WorkerObserver {
  readonly prometheus = new PromRegistry()
  private readonly requests = new RequestStats(REQUEST_BUCKETS)
  private readonly phaseSeconds: Histogram<'phase'>
  private readonly lintCacheLookups: Counter<'result'>
  private readonly workersReplaced: Counter<'reason'>
  private tracked: Registry | undefined
  private stopped = false
  /** Blobs listed on disk when tracking began, and the index's blob tally just before the listing. */
  private readonly listed = { count: 0, bytes: 0 }
  private tallyAtListing = { count: 0, bytes: 0 }
  /** What registry_versions_written_total last showed per kind and source (the index's tally then). */
  private readonly versionsShown = new Map<string, number>()

  constructor(options: { processMetrics?: boolean } = {}) {
    const registers = [this.prometheus]
    this.prometheus.registerMetric(this.requests.counter(
      'registry_http_requests_total', 'HTTP responses by route (its pattern, never the raw URL) and status'))
    this.prometheus.registerMetric(this.requests.histogram(
      'registry_http_request_duration_seconds', 'Time from receiving a request to the end of its response'))
    this.phaseSeconds = new Histogram({
      name: 'registry_document_phase_duration_seconds',
      help: 'Time a document worker spent per phase: digest (parse and checksum), validate, lint (Spectral), convert, diff (comparing two versions)',
      labelNames: ['phase'], buckets: PHASE_BUCKETS, registers,
    })
    this.lintCacheLookups = new Counter({
      name: 'registry_lint_cache_lookups_total', help: 'Lint results looked up before running Spectral, by result (hit or miss)',
      labelNames: ['result'], registers,
    })
    const metrics = this
    // Stored versions and blobs are read from the index at scrape time: its tallies are kept by every
    // process that writes (the CLI too), where counting in this process missed an import or a gc.
    new Counter({
      name: 'registry_versions_written_total',
      help: 'Versions committed to this storage by any process (server or CLI), by resource kind and source',
      labelNames: ['kind', 'source'], registers,
      async collect() {
        for (const { kind, source, count } of (await metrics.tallies())?.versionsWritten ?? []) {
          const key = `${kind}\0${source}`
          const delta = count - (metrics.versionsShown.get(key) ?? 0)
          if (delta > 0) this.inc({ kind, source }, delta)
          metrics.versionsShown.set(key, count)
        }
      },
    })
    new Gauge({
      name: 'registry_versions', help: 'Versions stored, of every resource', registers,
      async collect() { this.set((await metrics.tallies())?.versions ?? 0) },
    })
    this.workersReplaced = new Counter({
      name: 'registry_document_workers_replaced_total',
      help: 'Document workers ended and replaced, by reason: runs, heap (recycled), timeout, memory, crash',
      labelNames: ['reason'], registers,
    })
    new Gauge({
      name: 'registry_blobs', help: 'Stored blobs: counted on disk at start, then the changes every process (the CLI too) tallied in the index',
      registers, async collect() { this.set((await metrics.blobs()).count) },
    })
    new Gauge({
      name: 'registry_blob_bytes', help: 'Bytes of stored blobs (as registry_blobs)',
      registers, async collect() { this.set((await metrics.blobs()).bytes) },
    })
    new Gauge({
      name: 'registry_document_queue_depth', help: 'Document tasks waiting for a worker', registers,
      collect() { this.set(metrics.tracked?.documents.queueSize ?? 0) },
    })
    new Gauge({
      name: 'registry_ready', help: 'Whether a component is ready (1) or not (0): storage, workers',
      labelNames: ['component'], registers,
      async collect() {
        const readiness = (await metrics.tracked?.readiness()) ?? { storage: false, workers: false }
        this.set({ component: 'storage' }, readiness.storage ? 1 : 0)
        this.set({ component: 'workers' }, readiness.workers ? 1 : 0)
      },
    })
    if (options.processMetrics) collectDefaultMetrics({ register: this.prometheus })
    for (const result of ['hit', 'miss']) this.lintCacheLookups.inc({ result }, 0)
  }

  get contentType(): string {
    return this.prometheus.contentType
  }

  /**
   * Follows a registry: its queue depth, readiness and the index's tallies at scrape time; its blobs,
   * counted on disk once now (the tally may have drifted: a crash between a blob write and its tally).
   */
  track(registry: Registry): void {
    this.tracked = registry
    // The listing starts once the tally it is measured against is read.
    void registry.storage.read.tallies.get()
      .then((tallies) => { this.tallyAtListing = tallies.blobs })
      .then(() => this.countBlobs(registry)).catch(() => undefined)
  }

  /** The storage's tallies now (any process's writes), when a registry is followed. */
  private async tallies(): Promise<StorageTallies | undefined> {
    return this.tracked?.storage.read.tallies.get()
  }

  /** The blobs listed at start, plus what every process tallied since. */
  private async blobs(): Promise<{ count: number; bytes: number }> {
    const now = (await this.tallies())?.blobs ?? this.tallyAtListing
    return {
      count: this.listed.count + now.count - this.tallyAtListing.count,
      bytes: this.listed.bytes + now.bytes - this.tallyAtListing.bytes,
    }
  }

  /** Stops following the registry (the blob count in progress ends at its next step). */
  untrack(): void {
    this.stopped = true
  }

  private async countBlobs(registry: Registry): Promise<void> {
    for await (const blob of registry.blobs.list()) {
      if (this.stopped) return
      this.listed.count += 1
      this.listed.bytes += blob.size
    }
  }

  /** A recorder for one route; `route` is its pattern (e.g. `/v1/apis/:api`). */
  requestRecorder(method: string, route: string): RequestRecorder {
    return this.requests.recorder(method, route)
  }

  text(): Promise<string> {
    return this.prometheus.metrics()
  }

  // DomainMetrics

  lintCache(hit: boolean): void {
    this.lintCacheLookups.inc(hit ? HIT : MISS)
  }

  // WorkerObserver

  phase(phase: WorkPhase, seconds: number): void {
    this.phaseSeconds.observe(PHASES[phase], seconds)
  }

  workerEnded(reason: WorkerEnd): void {
    this.workersReplaced.inc({ reason })
  }
}

const HIT = { result: 'hit' }
const MISS = { result: 'miss' }
const PHASES: Record<WorkPhase, { phase: WorkPhase }> = {
  digest: { phase: 'digest' }, validate: { phase: 'validate' }, lint: { phase: 'lint' }, convert: { phase: 'convert' }, diff: { phase: 'diff' },
  locate: { phase: 'locate' },
}
