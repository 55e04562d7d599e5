/**
 * The sync workers (piscina): threads that fetch a branch and bundle its document (see worker.ts),
 * apart from the document workers, so that a slow repository never holds a validation or lint
 * thread. Threads start on demand and end when idle. Each fetch has a deadline inside the worker;
 * past it (plus a grace period) the worker is ended; a worker over its memory limit is ended too.
 * Either way the scratch directory is removed here, and the pool keeps serving.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Piscina } from 'piscina'
import { RegistryError } from '../errors.js'
import { execArgvOption, workerModule } from '../worker-exec-argv.js'
import { UNREACHABLE } from '../domain/outbound/outbound.js'
import { FETCH_STEP, type SnapshotDocument, type SnapshotFailure, type SnapshotTask } from './snapshot.js'

export interface SnapshotRequest {
  provider: 'github' | 'gitlab'
  url: string
  branch: string
  path: string
  token: string | null
}

export interface SyncLimits {
  /** Deadline of one fetch. */
  timeoutMs: number
  /** Bytes one fetch may download. */
  maxBytes: number
  /** Bytes of the files read and of the bundled document. */
  maxDocumentBytes: number
  /** Files one document may refer to. */
  maxFiles: number
}

export const DEFAULT_SYNC_LIMITS: SyncLimits = {
  timeoutMs: 120_000,
  maxBytes: 256 * 1024 * 1024,
  maxDocumentBytes: 64 * 1024 * 1024,
  maxFiles: 1000,
}

/**
 * A fetch that failed: once the commit was known, the last sync shows which commit it was; `reason`
 * (for the operator's log only) says why a repository could not be fetched.
 */
export class SnapshotError extends RegistryError {
  constructor(readonly commit: string | null, failure: SnapshotFailure['error'], readonly reason?: string) {
    super(failure.code, failure.detail, failure.errors)
  }
}

/** How the domain fetches a document from a repository. */
export interface SnapshotFetcher {
  fetch(request: SnapshotRequest): Promise<SnapshotDocument>
  close(): Promise<void>
}

/** Time a worker gets past the fetch deadline to answer before it is ended. */
const GRACE_MS = 5_000

export class SnapshotWorkers implements SnapshotFetcher {
  readonly #pool: Piscina

  /** REGISTRY_OUTBOUND_HOSTS as data: the worker checks every request of a fetch against it (empty: any host). */
  readonly #outboundHosts: string[]

  constructor(
    private readonly limits: SyncLimits = DEFAULT_SYNC_LIMITS,
    /** `execArgv`: the worker threads' node options (default: this thread's). */
    options: { threads?: number; memoryMb?: number; outboundHosts?: readonly string[]; execArgv?: readonly string[] } = {},
  ) {
    this.#outboundHosts = [...(options.outboundHosts ?? [])]
    this.#pool = new Piscina({
      filename: workerModule(import.meta.url, 'worker', options.execArgv),
      minThreads: 0,
      maxThreads: Math.max(1, options.threads ?? 2),
      idleTimeout: 30_000,
      resourceLimits: { maxOldGenerationSizeMb: options.memoryMb ?? 1024 },
      ...execArgvOption(options.execArgv),
    })
    // A worker ended while idle is replaced on demand; without a listener the event would throw.
    this.#pool.on('error', () => {})
  }

  async fetch(request: SnapshotRequest): Promise<SnapshotDocument> {
    const dir = await mkdtemp(join(tmpdir(), 'registry-sync-'))
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), this.limits.timeoutMs + GRACE_MS)
    try {
      const task: SnapshotTask = { ...request, dir, ...this.limits, outboundHosts: this.#outboundHosts }
      let result: SnapshotDocument | SnapshotFailure
      try {
        result = await this.#pool.run(task, { signal: controller.signal })
      } catch (error) {
        throw this.#failure(error, controller.signal.aborted)
      }
      if ('error' in result) throw new SnapshotError(result.commit, result.error, result.reason)
      return result
    } finally {
      clearTimeout(timer)
      await rm(dir, { recursive: true, force: true })
    }
  }

  /** A worker ended past the deadline or over its memory limit: unreachable, as far as the key holder knows. */
  #failure(error: unknown, timedOut: boolean): RegistryError {
    const e = error as { code?: unknown }
    const reason = timedOut
      ? `fetching the repository took longer than ${this.limits.timeoutMs} ms`
      : e?.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'fetching the repository needed more memory than a sync may use' : undefined
    const problem = reason
      ? new SnapshotError(null, { code: 'repository_unavailable', detail: `${FETCH_STEP}: ${UNREACHABLE}` }, reason)
      : new RegistryError('internal', 'fetching the repository failed unexpectedly')
    Object.defineProperty(problem, 'cause', { value: error, enumerable: false, configurable: true, writable: true })
    return problem
  }

  async close(): Promise<void> {
    await this.#pool.destroy()
  }
}
