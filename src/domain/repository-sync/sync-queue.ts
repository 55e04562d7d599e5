import { RegistryError } from '../../errors.js'

/**
 * The in-process queue syncs run on: one job per key (an API) at a time, in arrival order; jobs of
 * different keys run side by side (the sync workers bound how many fetch at once). `drain` refuses
 * new jobs and waits for every queued one.
 */
export class SyncQueue {
  /** Per key: settles when its last job has. */
  readonly #tails = new Map<string, Promise<void>>()
  readonly #inFlight = new Set<Promise<void>>()
  #closed = false

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new RegistryError('unavailable', 'the registry is shutting down'))
    const previous = this.#tails.get(key) ?? Promise.resolve()
    const job = previous.then(() => work())
    const tail = job.then(() => undefined, () => undefined)
    this.#tails.set(key, tail)
    this.#inFlight.add(tail)
    void tail.then(() => {
      this.#inFlight.delete(tail)
      if (this.#tails.get(key) === tail) this.#tails.delete(key)
    })
    return job
  }

  /** Jobs queued or running. */
  get size(): number {
    return this.#inFlight.size
  }

  async drain(): Promise<void> {
    this.#closed = true
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight])
  }
}
