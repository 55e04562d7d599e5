import { setTimeout as sleep } from 'node:timers/promises'
import type { RootDatabase } from 'lmdb'
import { RegistryError } from '../../errors.js'
import type { OpenGate } from './open-gate.js'
import { TransactionView, type Key } from './transaction-view.js'

/** How often a transaction runs before it gives up with 409 `conflict`. */
export const DEFAULT_ATTEMPTS = 10

export const tooManyConflicts = (attempts: number): RegistryError =>
  new RegistryError('conflict', `the change conflicted with concurrent changes ${attempts} times; try again`)

/**
 * Runs `work` on a fresh view until its commit finds every read still true, at most `attempts` times.
 * A throw from `work` is the answer only when the reads it was decided on still hold: one decided on a
 * state another writer changed meanwhile (reads across awaits are not one snapshot) runs again.
 */
export async function optimistic<T>(
  root: RootDatabase<any, Key>, work: (view: TransactionView) => Promise<T>, attempts = DEFAULT_ATTEMPTS, gate?: OpenGate,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const view = new TransactionView()
    let result: T | undefined
    let failure: { error: unknown } | undefined
    try {
      result = await work(view)
    } catch (error) {
      failure = { error }
    }
    if (failure) {
      if (view.readsHold()) throw failure.error
    } else if (await (gate && view.changes ? gate.committing(() => view.commit(root)) : view.commit(root))) {
      return result as T
    }
    if (attempt >= attempts) throw tooManyConflicts(attempts)
    // A short random pause, longer each time, so that writers that keep colliding drift apart.
    await sleep(Math.random() * attempt * 2)
  }
}
