/**
 * Repository syncs claimed once across replicas (issue 16, item 8). Each connection has at most one
 * sync running, under a lease held by one runner (a registry process) and renewed while it works, and
 * at most one sync waiting after it (the port's sync lease, `repositories.syncLease`). The lease is
 * taken in a transaction before the fetch, so two replicas never fetch and publish one API at once, and
 * publishes follow the order of the fetches: a sync never publishes an older commit after a newer one.
 *
 * - A webhook's sync is claimed at once when no sync of the API runs; else it becomes the waiting one
 *   (or joins it: the waiting sync fetches the branch as it is when it starts, which is what both
 *   asked for), and the runner holding the lease runs it right after its own ("run again after"), on
 *   whichever replica that is. The webhook's answer (202) does not wait.
 * - A manual sync waits for its turn: while another sync runs (on any replica) it looks again every
 *   `waitMs` (at once when a sync of this process ends), then claims the lease itself and answers the
 *   outcome. Claiming takes a waiting sync with it: it starts later than that one was asked for.
 * - A lease that ended (its runner died or stalled) is taken over: by the next sync asked for, or by the
 *   poller every process runs (`start`), which looks every `pollMs` on PostgreSQL; on LMDB one process
 *   serves the storage, so at start it takes every lease left over at once. The sync it left (or the one
 *   waiting after it) runs again.
 * - A runner writes only while it holds the lease: the publish's transaction checks it (`guard`), so a
 *   runner that stalled past its lease, and lost it, publishes nothing and records nothing.
 */
import { hostname } from 'node:os'
import { RegistryError } from '../../errors.js'
import type { Storage, Stores } from '../../storage/port.js'
import type { SyncLeaseRecord, SyncRequest } from '../../storage/records.js'
import { newId, now } from '../resources/ids.js'

/** How long a claim holds without renewal; renewed every third of it (a fetch may take 125 s). */
export const SYNC_LEASE_MS = 60_000
/** How often the poller looks for ended leases on a shared storage (PostgreSQL). */
export const SYNC_POLL_MS = 5_000
/** How often a manual sync waiting for another runner's sync looks again. */
export const SYNC_WAIT_MS = 500

/** How long a caller's wait for a sync asked for is remembered (far longer than a sync, and one waiting before it, take). */
const LISTENER_TTL_MS = 30 * 60_000

export interface SyncLeaseOptions {
  leaseMs?: number
  pollMs?: number
  waitMs?: number
}

/** Throws when the lease is no longer the run's (taken over after it ended): called inside the transaction that writes. */
export type LeaseGuard = (tx: Stores) => Promise<void>

/** Runs one sync of an API under its lease: `guard` in each transaction that writes its outcome. */
export type SyncWork<T> = (apiId: string, request: SyncRequest, guard: LeaseGuard) => Promise<T>

/** A sync claimed by this runner: the request it runs, and the ones it covers (asked for before it started). */
interface Claim {
  request: SyncRequest
  covers: string[]
}

/** The refusals `LeaseGuard` threw: a run that lost its lease is not a sync that failed (another runner runs it). */
const lostLeases = new WeakSet<Error>()

function leaseLost(): RegistryError {
  const error = new RegistryError('conflict', "this sync's lease ended while it ran and another runner took the sync over")
  lostLeases.add(error)
  return error
}

/** Whether a run ended because it lost its lease (it then keeps and reports nothing). */
export function isLeaseLost(error: unknown): boolean {
  return error instanceof Error && lostLeases.has(error)
}

export class SyncLeases<T> {
  /** This runner's name on the leases it holds: the host and process, and a ULID (two registries may share a process). */
  readonly holder = `${hostname()}:${process.pid}:${newId()}`
  readonly #leaseMs: number
  readonly #pollMs: number
  readonly #waitMs: number
  /** Runs of this process (with the waiting syncs they hand over to), so that `close` waits for them. */
  readonly #runs = new Set<Promise<void>>()
  /** Manual syncs of this process waiting for a lease: woken when a run of this process ends. */
  readonly #waiters = new Set<() => void>()
  /**
   * Callers of this process that asked for a sync and wait for its outcome, by request id, with when
   * they asked: a waiting sync another replica ran never settles here, so those are forgotten after
   * `LISTENER_TTL_MS` (that replica logs a failure).
   */
  readonly #listeners = new Map<string, { since: number; listeners: ((outcome: PromiseSettledResult<T>) => void)[] }>()
  #poller: Promise<void> | null = null
  #stopping = false
  #wake: (() => void) | null = null

  constructor(
    private readonly storage: Storage,
    private readonly work: SyncWork<T>,
    /** A sync that failed with nobody of this process waiting for it (asked for on another replica). */
    private readonly unheard: (apiId: string, request: SyncRequest, error: unknown) => void,
    options: SyncLeaseOptions = {},
  ) {
    this.#leaseMs = options.leaseMs ?? SYNC_LEASE_MS
    this.#pollMs = options.pollMs ?? SYNC_POLL_MS
    this.#waitMs = options.waitMs ?? SYNC_WAIT_MS
  }

  /**
   * A sync that nobody waits for (a webhook's): claimed and started at once when no sync of the API
   * runs, else left waiting for the runner that holds the lease. `listener` hears its outcome when
   * this process runs it (or a sync that covers it).
   */
  async request(apiId: string, trigger: SyncRequest['trigger'], delivery: string | null, listener: (outcome: PromiseSettledResult<T>) => void): Promise<void> {
    if (this.#stopping) throw new RegistryError('unavailable', 'the registry is shutting down')
    const asked: SyncRequest = { id: newId(), trigger, delivery, requested_at: now() }
    const { claimed, covering } = await this.storage.transaction(async (tx) => {
      const lease = await tx.repositories.syncLease(apiId)
      if (!lease || !this.#live(lease)) return { claimed: await this.#claim(tx, apiId, lease, asked), covering: asked.id }
      if (lease.pending) return { claimed: undefined, covering: lease.pending.id }
      await tx.repositories.putSyncLease({ ...lease, pending: asked })
      return { claimed: undefined, covering: asked.id }
    })
    this.#listen(covering, listener)
    if (claimed) this.#start(apiId, claimed)
  }

  /** A sync whose caller waits for it (a manual one): its turn after the one running, on whichever replica. */
  async runNow(apiId: string): Promise<T> {
    const asked: SyncRequest = { id: newId(), trigger: 'manual', delivery: null, requested_at: now() }
    for (;;) {
      if (this.#stopping) throw new RegistryError('unavailable', 'the registry is shutting down')
      const claimed = await this.storage.transaction(async (tx) => {
        const lease = await tx.repositories.syncLease(apiId)
        return lease && this.#live(lease) ? undefined : this.#claim(tx, apiId, lease, asked)
      })
      if (claimed) {
        const outcome = new Promise<T>((resolve, reject) => this.#listen(asked.id, (settled) => {
          if (settled.status === 'fulfilled') resolve(settled.value)
          else reject(settled.reason)
        }))
        this.#start(apiId, claimed)
        return outcome
      }
      await this.#waitForTurn()
    }
  }

  /** Starts the poller: leases other processes left (ended) are taken over; on LMDB, at once, every one left. */
  start(): void {
    if (this.#poller) return
    this.#stopping = false
    this.#poller = this.#poll()
  }

  /** Stops claiming and waits for this process's runs (and the waiting syncs they run after them). */
  async close(): Promise<void> {
    this.#stopping = true
    this.#wake?.()
    await this.#poller
    this.#poller = null
    for (const wake of this.#waiters) wake()
    while (this.#runs.size > 0) await Promise.all([...this.#runs])
  }

  /** A sync runs under a lease that has not ended. */
  #live(lease: SyncLeaseRecord): boolean {
    return lease.running !== null && lease.running.until > now()
  }

  #leaseEnd(): string {
    return new Date(Date.now() + this.#leaseMs).toISOString()
  }

  /**
   * Takes the API's lease for `asked` (or, without it, for what the lease holds: the waiting sync, else
   * the one whose runner is gone), on a lease that is free or ended. The waiting sync is covered by the
   * claimed one, which starts later: its listeners of this process hear the claimed one's outcome.
   * Undefined when there is nothing to run.
   */
  async #claim(tx: Stores, apiId: string, lease: SyncLeaseRecord | undefined, asked?: SyncRequest): Promise<Claim | undefined> {
    const request = asked ?? lease?.pending ?? lease?.running?.request
    if (!request) return undefined
    await tx.repositories.putSyncLease({ api_id: apiId, running: { request, holder: this.holder, until: this.#leaseEnd() }, pending: null })
    const covers = [lease?.pending?.id, lease?.running?.request.id].filter((id): id is string => id !== undefined && id !== request.id)
    return { request, covers }
  }

  #listen(requestId: string, listener: (outcome: PromiseSettledResult<T>) => void): void {
    const at = Date.now()
    for (const [id, { since }] of this.#listeners) if (at - since > LISTENER_TTL_MS) this.#listeners.delete(id)
    const entry = this.#listeners.get(requestId) ?? { since: at, listeners: [] }
    entry.listeners.push(listener)
    this.#listeners.set(requestId, entry)
  }

  /** Runs a claimed sync, then each waiting one handed over at its release, off the caller's path. */
  #start(apiId: string, claimed: Claim): void {
    const run = (async () => {
      let next: Claim | undefined = claimed
      while (next) next = await this.#runHeld(apiId, next)
    })()
    const tracked = run.finally(() => {
      this.#runs.delete(tracked)
      for (const wake of this.#waiters) wake()
    })
    this.#runs.add(tracked)
  }

  /** One run under the lease: renewed while it works, released at the end (answers the waiting sync it takes next, if any). */
  async #runHeld(apiId: string, { request, covers }: Claim): Promise<Claim | undefined> {
    const holds = (lease: SyncLeaseRecord | undefined) => lease?.running?.holder === this.holder && lease.running.request.id === request.id
    const guard: LeaseGuard = async (tx) => { if (!holds(await tx.repositories.syncLease(apiId))) throw leaseLost() }
    const renewal = setInterval(() => {
      // A renewal that fails to commit (the database briefly away) is tried again at the next tick; one
      // that finds the lease gone leaves it: the guard refuses this run's writes.
      void this.storage.transaction(async (tx) => {
        const lease = await tx.repositories.syncLease(apiId)
        if (lease && holds(lease)) await tx.repositories.putSyncLease({ ...lease, running: { ...lease.running!, until: this.#leaseEnd() } })
      }).catch(() => undefined)
    }, Math.max(1, Math.floor(this.#leaseMs / 3)))
    let settled: PromiseSettledResult<T>
    try {
      settled = { status: 'fulfilled', value: await this.work(apiId, request, guard) }
    } catch (error) {
      settled = { status: 'rejected', reason: error }
    } finally {
      clearInterval(renewal)
    }
    this.#settle(apiId, request, covers, settled)
    // Released, or handed to the waiting sync, which this runner runs next. A failed release leaves
    // the lease to end: the poller of some process takes the waiting sync over then.
    return this.storage.transaction(async (tx) => {
      const lease = await tx.repositories.syncLease(apiId)
      if (!lease || !holds(lease)) return undefined
      if (lease.pending) return this.#claim(tx, apiId, lease)
      await tx.repositories.removeSyncLease(apiId)
      return undefined
    }).catch(() => undefined)
  }

  /** Tells the callers of this process waiting for the run (or for a request it covered) its outcome; else reports a failure. */
  #settle(apiId: string, request: SyncRequest, covers: string[], settled: PromiseSettledResult<T>): void {
    const ids = [request.id, ...covers]
    let heard = false
    for (const id of ids) {
      for (const listener of this.#listeners.get(id)?.listeners ?? []) {
        heard = true
        listener(settled)
      }
      this.#listeners.delete(id)
    }
    if (!heard && settled.status === 'rejected') this.unheard(apiId, request, settled.reason)
  }

  /** Until a run of this process ends or `waitMs` passed: another replica's run does not tell this one. */
  async #waitForTurn(): Promise<void> {
    let wake!: () => void
    const woken = new Promise<void>((resolve) => { wake = resolve })
    this.#waiters.add(wake)
    const timer = setTimeout(wake, this.#waitMs)
    await woken
    clearTimeout(timer)
    this.#waiters.delete(wake)
  }

  async #poll(): Promise<void> {
    // LMDB: one process serves the storage, so every lease found at start is the previous process's.
    let at = this.storage.kind === 'lmdb' ? '9999-12-31T23:59:59.999Z' : undefined
    while (!this.#stopping) {
      try {
        const claimed = await this.storage.transaction(async (tx) => {
          const lease = await tx.repositories.nextSync(at ?? now())
          // This process's own (on LMDB at start, one claimed before the poller started; they are due
          // last): nothing older is left.
          if (!lease || lease.running?.holder === this.holder) return undefined
          const claim = await this.#claim(tx, lease.api_id, lease)
          return claim && { apiId: lease.api_id, claim }
        })
        if (claimed) {
          this.#start(claimed.apiId, claimed.claim)
          continue
        }
      } catch {
        // The database briefly away, or a claim that lost to another runner: looked at again below.
      }
      at = undefined
      // LMDB's one process claims what it asks for itself: nothing is left for a poller after the start.
      if (this.storage.kind === 'lmdb') break
      await new Promise<void>((resolve) => {
        this.#wake = resolve
        setTimeout(resolve, this.#pollMs)
      })
      this.#wake = null
    }
  }
}
