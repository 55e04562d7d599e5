/**
 * The pool of document workers (piscina). Every task runs in a worker thread with a time limit and a
 * memory limit; a worker that runs over either is ended and replaced, and the pool keeps serving.
 *
 * The time limit counts from the moment a worker starts the task (the worker says so with a message),
 * not from submission: time spent waiting in the queue, or for a replacement worker to start, is not
 * validation or lint time and must not make an upload fail.
 *
 * Workers are recycled: Spectral (and the schema cache of its functions) keeps memory across runs, so
 * a worker that has been given `maxRuns` Spectral runs, or whose heap after a task is above `maxHeapMb`,
 * is retired. Piscina has no such option; its load balancer hook does it without losing a task: the
 * balancer counts the lint tasks it gives each worker (tasks carry that in piscina's queue options) and
 * gives a retiring worker no new task; once idle, the worker is terminated and piscina starts a
 * replacement. The heap is known only from the worker's report after a task, which may arrive after
 * the worker was given one more task: that one is run too.
 */
import { LRUCache } from 'lru-cache'
import { Piscina, queueOptionsSymbol } from 'piscina'
import { RegistryError } from '../errors.js'
import { defaultFairness, FairScheduler, type FairnessLimits, type Tenant } from './fair-scheduler.js'
import { assertFitsHeap, maxDocumentBytes } from './heap-budget.js'
import { ownsItsBuffer } from './text-bytes.js'
import { execArgvOption, workerModule } from '../worker-exec-argv.js'
import type {
  CheckResult,
  CheckTask,
  ConvertResult,
  ConvertTask,
  BundleResult,
  BundleTask,
  DiffResult,
  DiffTask,
  DigestAnswer,
  DigestTask,
  LintMemoText,
  LintResult,
  LintTask,
  LocateResult,
  LocateTask,
  SentCheckTask,
  TaskError,
  TermsTask,
} from './types.js'
import type { SearchTerms } from './search-terms.js'
import type { StartedMessage, StatsMessage, WorkerTask, WorkPhase } from './worker.js'

export type { WorkPhase }

/** Piscina's views of a task and a worker, as its load balancer sees them (not exported by name). */
type Balancer = NonNullable<NonNullable<ConstructorParameters<typeof Piscina>[0]>['loadBalancer']>
type PiscinaTask = Parameters<Balancer>[0]
type PiscinaWorker = Parameters<Balancer>[1][number]

/** What a task tells the load balancer (piscina's queue options; never sent to the worker). */
interface QueueOptions {
  runId: number
  /** The task runs Spectral: it counts towards the worker's `maxRuns`. */
  lint: boolean
  /** The worker (thread id) to give the task to when it is free: the one that holds its document. */
  prefer?: number
}

/** How a task is given to a worker: the one it prefers, and who wants to know which worker ran it. */
interface Routing {
  prefer?: number
  ranOn?: (threadId: number) => void
}

/** Documents whose digesting worker is remembered (see CheckTask's `checksum`). */
const DIGESTED_BY = 64

/** Lineages whose last lint's memo is kept, and about how much memory all of them may take. */
const LINT_MEMOS = 64
const LINT_MEMO_BYTES = 64 * 1024 * 1024

/** A memo's size: its JSON's, two bytes a character (a larger one is not kept). */
function memoBytes(memo: LintMemoText): number {
  return Math.max(1, memo.length * 2)
}

/** Why a worker was ended (and replaced). */
export type WorkerEnd = 'runs' | 'heap' | 'timeout' | 'memory' | 'crash'

/** What the pool tells an operator about its workers (metrics). */
export interface WorkerObserver {
  /** Seconds a worker spent in one phase of a task. */
  phase(phase: WorkPhase, seconds: number): void
  /** A worker was ended and is being replaced. */
  workerEnded(reason: WorkerEnd): void
}

export interface DocumentWorkersOptions {
  /** Worker threads, all kept alive (at least 1). */
  threads: number
  /** Longest run of one task before its worker is ended (`lint_timeout`). */
  timeoutMs: number
  /** Old-generation heap limit of each worker, in MB (`lint_resource_limit` past it). */
  memoryMb: number
  /** Compile the validators and load Spectral as each worker starts (default true). */
  warm?: boolean
  /** Node options of each worker thread (default: this thread's). */
  execArgv?: readonly string[]
  /** Retire a worker after this many Spectral runs (0 or absent: never). */
  maxRuns?: number
  /** Retire a worker whose heap after a task is above this many MB (0 or absent: never). */
  maxHeapMb?: number
  observer?: WorkerObserver
  /** How the workers are shared between organizations and keys (default: defaultFairness(threads)). */
  fairness?: Omit<FairnessLimits, 'slots'>
  /** The worker module (a URL or path); tests give one that misbehaves. Default: worker.ts next to this file. */
  filename?: string
}

/** What the pool knows of one worker thread, by thread id. */
interface WorkerState {
  handle: PiscinaWorker
  /** Spectral runs given to this worker. */
  lintRuns: number
  /** Set once the worker must take no new task; it is ended when idle. */
  retiring?: WorkerEnd
  ending?: boolean
}

function isTaskError(value: unknown): value is TaskError {
  return value !== null && typeof value === 'object' && 'error' in value
}

function isStartedMessage(value: unknown): value is StartedMessage {
  return value !== null && typeof value === 'object' && typeof (value as StartedMessage).documentTaskStarted === 'number'
}

function isStatsMessage(value: unknown): value is StatsMessage {
  return value !== null && typeof value === 'object' && typeof (value as StatsMessage).documentWorkerStats === 'object'
}

const NO_OBSERVER: WorkerObserver = { phase() {}, workerEnded() {} }

class TaskTimeout extends Error {
  override readonly name = 'TaskTimeout'
}

export class DocumentWorkers {
  readonly #pool: Piscina
  readonly #timeoutMs: number
  readonly #memoryMb: number
  /** Runs submitted and not finished: what to do when their worker starts them. */
  readonly #onStart = new Map<number, () => void>()
  readonly #workers = new Map<number, WorkerState>()
  /** The worker each run was given to, while it runs. */
  readonly #runWorkers = new Map<number, WorkerState>()
  /** The worker (thread id) that digested each recent document, by canonical checksum: it holds the last one it digested. */
  readonly #digestedBy = new LRUCache<string, number>({ max: DIGESTED_BY })
  /** The memo of the last lint of each lineage and ruleset, for the next version's (a cache: findings are the same without). */
  readonly #lintMemos = new LRUCache<string, LintMemoText>({ max: LINT_MEMOS, maxSize: LINT_MEMO_BYTES, sizeCalculation: memoBytes })
  readonly #maxRuns: number
  readonly #maxHeapBytes: number
  readonly #observer: WorkerObserver
  readonly #scheduler: FairScheduler
  #nextRun = 0
  #closed = false

  constructor(options: DocumentWorkersOptions) {
    const threads = Math.max(1, Math.floor(options.threads))
    this.#timeoutMs = options.timeoutMs
    this.#memoryMb = options.memoryMb
    this.#maxRuns = options.maxRuns ?? 0
    this.#maxHeapBytes = (options.maxHeapMb ?? 0) * 1024 * 1024
    this.#observer = options.observer ?? NO_OBSERVER
    this.#scheduler = new FairScheduler({ ...(options.fairness ?? defaultFairness(threads)), slots: threads })
    this.#pool = new Piscina({
      filename: options.filename ?? workerModule(import.meta.url, 'worker', options.execArgv),
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Infinity,
      resourceLimits: { maxOldGenerationSizeMb: options.memoryMb },
      workerData: { warm: options.warm !== false },
      ...execArgvOption(options.execArgv),
      loadBalancer: (task, workers) => this.#pick(task, workers),
    })
    // A worker that dies while idle is replaced by piscina; without a listener the event would throw.
    this.#pool.on('error', () => this.#observer.workerEnded('crash'))
    this.#pool.on('workerCreate', (handle: PiscinaWorker) => this.#stateOf(handle))
    // A thread that has exited no longer knows its id: forget every worker piscina has destroyed.
    this.#pool.on('workerDestroy', () => {
      for (const [id, state] of this.#workers) if (state.handle.destroyed) this.#workers.delete(id)
    })
    this.#pool.on('message', (message: unknown) => {
      if (isStartedMessage(message)) this.#onStart.get(message.documentTaskStarted)?.()
      else if (isStatsMessage(message)) this.#onStats(message.documentWorkerStats)
    })
  }

  #stateOf(handle: PiscinaWorker): WorkerState {
    let state = this.#workers.get(handle.id)
    if (!state) this.#workers.set(handle.id, (state = { handle, lintRuns: 0 }))
    return state
  }

  /**
   * The load balancer: an idle worker that is not retiring, else none (the task waits in the queue).
   * The worker a task prefers goes first when it is free; when it is not, another free worker takes
   * the task rather than let it wait (a check then comes back `canonicalMissing` and is sent again).
   */
  #pick(task: PiscinaTask, workers: PiscinaWorker[]): PiscinaWorker | null {
    const options = task[queueOptionsSymbol] as QueueOptions | null
    const preferred = options?.prefer === undefined ? undefined : workers.find((worker) => worker.id === options.prefer)
    for (const worker of preferred ? [preferred, ...workers] : workers) {
      if (worker.currentUsage !== 0 || worker.terminating) continue
      const state = this.#stateOf(worker)
      if (state.retiring) continue
      if (options) this.#runWorkers.set(options.runId, state)
      if (options?.lint) {
        state.lintRuns += 1
        if (this.#maxRuns > 0 && state.lintRuns >= this.#maxRuns) state.retiring = 'runs'
      }
      return worker
    }
    return null
  }

  #onStats(stats: StatsMessage['documentWorkerStats']): void {
    for (const [phase, seconds] of Object.entries(stats.phases)) this.#observer.phase(phase as WorkPhase, seconds)
    const state = this.#workers.get(stats.threadId)
    if (!state || state.retiring || this.#maxHeapBytes === 0 || stats.heapUsedBytes <= this.#maxHeapBytes) return
    state.retiring = 'heap'
    this.#endIdleRetired()
  }

  /** Terminates retiring workers that have finished their last task; piscina starts replacements. */
  #endIdleRetired(): void {
    for (const state of this.#workers.values()) {
      if (!state.retiring || state.ending || state.handle.currentUsage !== 0) continue
      const thread = this.#pool.threads.find((t) => t.threadId === state.handle.id)
      if (!thread) continue
      state.ending = true
      this.#observer.workerEnded(state.retiring)
      void thread.terminate()
    }
  }

  /** True while the pool is open and has at least one worker thread. */
  get ready(): boolean {
    return !this.#closed && this.#pool.threads.length > 0
  }

  get queueSize(): number {
    return this.#scheduler.waiting + this.#pool.queueSize
  }

  /** Share of the pool's capacity in use, 0..1. */
  get utilization(): number {
    return this.#pool.utilization
  }

  get threads(): number {
    return this.#pool.threads.length
  }

  /** The largest document text a task may carry (see heap-budget.ts). */
  get maxDocumentBytes(): number {
    return maxDocumentBytes(this.#memoryMb)
  }

  async #run<R>(task: WorkerTask, tenant: Tenant | undefined, transferList?: ArrayBuffer[], routing: Routing = {}): Promise<R> {
    // Before the task is sent: a document too large for the worker's heap could abort the process.
    assertFitsHeap(task, this.#memoryMb)
    const release = await this.#scheduler.acquire(tenant)
    try {
      return await this.#runNow<R>(task, transferList, routing)
    } finally {
      release()
    }
  }

  async #runNow<R>(task: WorkerTask, transferList: ArrayBuffer[] | undefined, routing: Routing): Promise<R> {
    const runId = ++this.#nextRun
    const controller = new AbortController()
    let timer: NodeJS.Timeout | undefined
    this.#onStart.set(runId, () => {
      this.#onStart.delete(runId)
      timer = setTimeout(() => controller.abort(new TaskTimeout(`over ${this.#timeoutMs} ms`)), this.#timeoutMs)
    })
    let result: unknown
    try {
      const lint = task.op === 'lint' || (task.op === 'check' && task.ruleset !== undefined)
      const options: QueueOptions = { runId, lint, ...(routing.prefer !== undefined && { prefer: routing.prefer }) }
      result = await this.#pool.run({ ...task, runId, [queueOptionsSymbol]: options }, { signal: controller.signal, transferList })
      const ranOn = this.#runWorkers.get(runId)?.handle.id
      if (ranOn !== undefined) routing.ranOn?.(ranOn)
    } catch (err) {
      // Piscina destroys a worker that exits or throws outside a task before it fails that worker's tasks.
      const workerEnded = this.#runWorkers.get(runId)?.handle.destroyed === true
      throw this.#failure(err, task, controller.signal.reason instanceof TaskTimeout, workerEnded)
    } finally {
      this.#runWorkers.delete(runId)
      this.#onStart.delete(runId)
      if (timer) clearTimeout(timer)
      this.#endIdleRetired()
    }
    if (isTaskError(result)) {
      const { code, detail, errors } = result.error
      throw new RegistryError(code, detail, errors)
    }
    return result as R
  }

  #failure(err: unknown, task: WorkerTask, timedOut: boolean, workerEnded: boolean): RegistryError {
    const e = err as { name?: unknown; code?: unknown; message?: unknown }
    let error: RegistryError
    if (timedOut) {
      this.#observer.workerEnded('timeout')
      error =
        task.op === 'convert'
          ? new RegistryError('lint_timeout', `converting the document took longer than ${this.#timeoutMs} ms`)
          : task.op === 'diff'
            ? new RegistryError('lint_timeout', `comparing the two versions took longer than ${this.#timeoutMs} ms; nothing was stored`)
            : new RegistryError('lint_timeout', `validation and lint took longer than ${this.#timeoutMs} ms; nothing was stored`)
    } else if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
      this.#observer.workerEnded('memory')
      error = new RegistryError(
        'lint_resource_limit',
        `validation and lint needed more than the ${this.#memoryMb} MB of memory a document may use; nothing was stored`,
      )
    } else if (e?.name === 'AbortError' || this.#closed) {
      error = new RegistryError('internal', 'the document workers are shutting down')
    } else if (workerEnded) {
      // The worker exited or threw outside the task: piscina has already started a replacement.
      this.#observer.workerEnded('crash')
      error = new RegistryError('internal', 'the document worker stopped unexpectedly; nothing was stored')
    } else {
      error = new RegistryError('internal', 'processing the document failed unexpectedly')
    }
    Object.defineProperty(error, 'cause', { value: err, enumerable: false, configurable: true, writable: true })
    return error
  }

  /** A body given as bytes that own their whole buffer moves to the worker: it must not be read after. */
  async digest(task: Omit<DigestTask, 'op'>, tenant?: Tenant): Promise<DigestAnswer> {
    const body = task.body
    const movable = body instanceof Uint8Array && ownsItsBuffer(body)
    let ranOn: number | undefined
    const result = await this.#run<DigestAnswer>({ ...task, op: 'digest' }, tenant, movable ? [body.buffer] : undefined, { ranOn: (id) => { ranOn = id } })
    if (!result.unchanged && ranOn !== undefined) this.#digestedBy.set(result.checksum, ranOn)
    return result
  }

  /** A check with a lineage may reuse the last lint of that lineage with the same ruleset (incremental-lint.ts). */
  async check(task: Omit<CheckTask, 'op' | 'previousLint'>, tenant?: Tenant): Promise<CheckResult> {
    const { lineage, ...sent } = task
    const key = lineage !== undefined && task.ruleset ? `${lineage}\n${task.ruleset.checksum}` : undefined
    const previousLint = key === undefined ? undefined : this.#lintMemos.get(key)
    const full: SentCheckTask = { ...sent, op: 'check', ...(previousLint && { previousLint }) }
    const holder = task.checksum === undefined ? undefined : this.#digestedBy.get(task.checksum)
    let result: CheckResult | undefined
    if (holder !== undefined) {
      const { canonical: _held, ...withoutCanonical } = full
      result = await this.#run<CheckResult>(withoutCanonical, tenant, undefined, { prefer: holder })
    }
    if (result === undefined || result.canonicalMissing) result = await this.#run<CheckResult>(full, tenant)
    if (key !== undefined && result.lintMemo) this.#lintMemos.set(key, result.lintMemo)
    delete result.lintMemo
    return result
  }

  lint(task: Omit<LintTask, 'op'>, tenant?: Tenant): Promise<LintResult> {
    return this.#run({ ...task, op: 'lint' }, tenant)
  }

  convert(task: Omit<ConvertTask, 'op'>, tenant?: Tenant): Promise<ConvertResult> {
    return this.#run({ ...task, op: 'convert' }, tenant)
  }

  bundle(task: Omit<BundleTask, 'op'>, tenant?: Tenant): Promise<BundleResult> {
    return this.#run({ ...task, op: 'bundle' }, tenant)
  }

  terms(task: Omit<TermsTask, 'op'>, tenant?: Tenant): Promise<SearchTerms> {
    return this.#run({ ...task, op: 'terms' }, tenant)
  }

  diff(task: Omit<DiffTask, 'op'>, tenant?: Tenant): Promise<DiffResult> {
    return this.#run({ ...task, op: 'diff' }, tenant)
  }

  locate(task: Omit<LocateTask, 'op'>, tenant?: Tenant): Promise<LocateResult> {
    return this.#run({ ...task, op: 'locate' }, tenant)
  }

  /** Ends every worker; pending tasks are rejected. */
  async close(): Promise<void> {
    this.#closed = true
    await this.#pool.destroy()
    this.#onStart.clear()
  }
}
