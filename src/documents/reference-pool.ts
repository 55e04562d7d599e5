/**
 * Reference parts of large documents (see reference-split.ts), computed in a worker thread of their
 * own: planning a 47 MB document takes seconds and must not hold up uploads in the document workers.
 * The thread is started on demand and ends after a minute without work, freeing the documents it held.
 */
import { Piscina } from 'piscina'
import { RegistryError } from '../errors.js'
import { execArgvOption, workerModule } from '../worker-exec-argv.js'
import type { PlannedPart, SplitLimits } from './reference-split.js'
import type { ReferenceReply, ReferenceTask } from './reference-worker.js'

/** The document's stored text, read only when the worker does not hold the document any more. */
export type TextLoader = () => Promise<Uint8Array>

export class ReferenceWorkers {
  readonly #pool: Piscina

  /** `execArgv`: the worker thread's node options (default: this thread's). */
  constructor(options: { memoryMb: number; execArgv?: readonly string[] }) {
    this.#pool = new Piscina({
      filename: workerModule(import.meta.url, 'reference-worker', options.execArgv),
      minThreads: 0,
      maxThreads: 1,
      idleTimeout: 60_000,
      resourceLimits: { maxOldGenerationSizeMb: options.memoryMb },
      ...execArgvOption(options.execArgv),
    })
    // A worker ended while idle is replaced on demand; without a listener the event would throw.
    this.#pool.on('error', () => {})
  }

  async plan(checksum: string, limits: SplitLimits, load: TextLoader): Promise<PlannedPart[]> {
    const reply = await this.#run({ op: 'plan', checksum, limits }, load)
    if (!('plan' in reply)) throw new Error('the reference worker answered a plan task with something else')
    return reply.plan
  }

  /** The part's JSON, gzipped. */
  async part(checksum: string, part: Pick<PlannedPart, 'name' | 'operations'>, load: TextLoader): Promise<Uint8Array> {
    const reply = await this.#run({ op: 'part', checksum, part }, load)
    if (!(reply instanceof Uint8Array)) throw new Error('the reference worker answered a part task with something else')
    return reply
  }

  async #run(task: ReferenceTask, load: TextLoader): Promise<Exclude<ReferenceReply, { needDocument: true }>> {
    try {
      const first = await this.#pool.run(task) as ReferenceReply
      if (!('needDocument' in first)) return first
      const again = await this.#pool.run({ ...task, text: await load() }) as ReferenceReply
      if ('needDocument' in again) throw new Error('the reference worker did not take the document')
      return again
    } catch (error) {
      if (error instanceof RegistryError) throw error
      const code = (error as { code?: unknown })?.code
      const problem = new RegistryError('internal', code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? 'the document is too large to split into reference pages within the worker memory limit (REGISTRY_LINT_MEMORY_MB)'
        : 'splitting the document into reference pages failed unexpectedly')
      Object.defineProperty(problem, 'cause', { value: error, enumerable: false, configurable: true, writable: true })
      throw problem
    }
  }

  async close(): Promise<void> {
    await this.#pool.destroy()
  }
}
