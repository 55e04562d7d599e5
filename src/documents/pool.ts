/**
 * The pool of document workers (piscina). Every task runs in a worker thread with a time limit and a
 * memory limit; a worker that runs over either is ended and replaced, and the pool keeps serving.
 *
 * The time limit counts from the moment a worker starts the task (the worker says so with a message),
 * not from submission: time spent waiting in the queue, or for a replacement worker to start, is not
 * validation or lint time and must not make an upload fail.
 */
import { Piscina } from 'piscina'
import { RegistryError } from '../errors.js'
import type {
  CheckResult,
  CheckTask,
  ConvertResult,
  ConvertTask,
  DigestResult,
  DigestTask,
  LintResult,
  LintTask,
  TaskError,
} from './types.js'
import type { WorkerTask, StartedMessage } from './worker.js'

export interface DocumentWorkersOptions {
  /** Worker threads, all kept alive (at least 1). */
  threads: number
  /** Longest run of one task before its worker is ended (`lint_timeout`). */
  timeoutMs: number
  /** Old-generation heap limit of each worker, in MB (`lint_resource_limit` past it). */
  memoryMb: number
  /** Compile the validators and load Spectral as each worker starts (default true). */
  warm?: boolean
}

function isTaskError(value: unknown): value is TaskError {
  return value !== null && typeof value === 'object' && 'error' in value
}

/** The worker module next to this one: the TypeScript source under tsx, the compiled file in dist/. */
function workerFile(): string {
  const own = import.meta.url
  return new URL(own.endsWith('.ts') ? './worker.ts' : './worker.js', own).href
}

function isStartedMessage(value: unknown): value is StartedMessage {
  return value !== null && typeof value === 'object' && typeof (value as StartedMessage).documentTaskStarted === 'number'
}

class TaskTimeout extends Error {
  override readonly name = 'TaskTimeout'
}

export class DocumentWorkers {
  readonly #pool: Piscina
  readonly #timeoutMs: number
  readonly #memoryMb: number
  /** Runs submitted and not finished: what to do when their worker starts them. */
  readonly #onStart = new Map<number, () => void>()
  #nextRun = 0

  constructor(options: DocumentWorkersOptions) {
    const threads = Math.max(1, Math.floor(options.threads))
    this.#timeoutMs = options.timeoutMs
    this.#memoryMb = options.memoryMb
    this.#pool = new Piscina({
      filename: workerFile(),
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Infinity,
      resourceLimits: { maxOldGenerationSizeMb: options.memoryMb },
      workerData: { warm: options.warm !== false },
    })
    // A worker that dies while idle is replaced by piscina; without a listener the event would throw.
    this.#pool.on('error', () => {})
    this.#pool.on('message', (message: unknown) => {
      if (isStartedMessage(message)) this.#onStart.get(message.documentTaskStarted)?.()
    })
  }

  get queueSize(): number {
    return this.#pool.queueSize
  }

  /** Share of the pool's capacity in use, 0..1. */
  get utilization(): number {
    return this.#pool.utilization
  }

  get threads(): number {
    return this.#pool.threads.length
  }

  async #run<R>(task: WorkerTask): Promise<R> {
    const runId = ++this.#nextRun
    const controller = new AbortController()
    let timer: NodeJS.Timeout | undefined
    this.#onStart.set(runId, () => {
      this.#onStart.delete(runId)
      timer = setTimeout(() => controller.abort(new TaskTimeout(`over ${this.#timeoutMs} ms`)), this.#timeoutMs)
    })
    let result: unknown
    try {
      result = await this.#pool.run({ ...task, runId }, { signal: controller.signal })
    } catch (err) {
      throw this.#failure(err, task, controller.signal.reason instanceof TaskTimeout)
    } finally {
      this.#onStart.delete(runId)
      if (timer) clearTimeout(timer)
    }
    if (isTaskError(result)) {
      const { code, detail, errors } = result.error
      throw new RegistryError(code, detail, errors)
    }
    return result as R
  }

  #failure(err: unknown, task: WorkerTask, timedOut: boolean): RegistryError {
    const e = err as { name?: unknown; code?: unknown; message?: unknown }
    let error: RegistryError
    if (timedOut) {
      error =
        task.op === 'convert'
          ? new RegistryError('lint_timeout', `converting the document took longer than ${this.#timeoutMs} ms`)
          : new RegistryError('lint_timeout', `validation and lint took longer than ${this.#timeoutMs} ms; nothing was stored`)
    } else if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
      error = new RegistryError(
        'lint_resource_limit',
        `validation and lint needed more than the ${this.#memoryMb} MB of memory a document may use; nothing was stored`,
      )
    } else if (e?.name === 'AbortError') {
      error = new RegistryError('internal', 'the document workers are shutting down')
    } else {
      error = new RegistryError('internal', 'processing the document failed unexpectedly')
    }
    Object.defineProperty(error, 'cause', { value: err, enumerable: false, configurable: true, writable: true })
    return error
  }

  digest(task: Omit<DigestTask, 'op'>): Promise<DigestResult> {
    return this.#run({ ...task, op: 'digest' })
  }

  check(task: Omit<CheckTask, 'op'>): Promise<CheckResult> {
    return this.#run({ ...task, op: 'check' })
  }

  lint(task: Omit<LintTask, 'op'>): Promise<LintResult> {
    return this.#run({ ...task, op: 'lint' })
  }

  convert(task: Omit<ConvertTask, 'op'>): Promise<ConvertResult> {
    return this.#run({ ...task, op: 'convert' })
  }

  /** Ends every worker; pending tasks are rejected. */
  async close(): Promise<void> {
    await this.#pool.destroy()
    this.#onStart.clear()
  }
}
