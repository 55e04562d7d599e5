/**
 * Commit queues by lane (the registry's lane is the organization whose records are written): one
 * transaction at a time per lane, lanes side by side. Transactions of one lane would otherwise conflict
 * with each other (20 concurrent uploads to one API all read its last number) and run again until some
 * gave up with 409, and a single queue for the process made another organization's upload wait behind
 * one organization's burst (issue 14, finding 7). Conflicts between lanes, and with other processes,
 * are the adapter's to detect at commit.
 *
 * On PostgreSQL a lane also keeps one organization's mirror journal in commit order within this
 * process: its entries are numbered when appended, so two transactions of one organization committing
 * in the other order would leave a number behind a later one (docs/storage.md).
 */
export class Lanes {
  readonly #tails = new Map<string, Promise<unknown>>()

  /** Runs `work` after everything queued in `lane`. */
  run<T>(lane: string, work: () => Promise<T>): Promise<T> {
    const run = (this.#tails.get(lane) ?? Promise.resolve()).then(work)
    const tail = run.catch(() => undefined)
    this.#tails.set(lane, tail)
    // An idle lane is forgotten, so that lanes do not pile up over the organizations ever served.
    void tail.then(() => { if (this.#tails.get(lane) === tail) this.#tails.delete(lane) })
    return run
  }

  /** Lanes with a transaction running or waiting (tests see that idle lanes are forgotten). */
  get active(): number {
    return this.#tails.size
  }
}
