/**
 * Fair use of the document workers between tenants (organizations and their keys). Piscina's own
 * queue is first come, first served: one key's burst of slow uploads made every other organization
 * wait behind all of it. Tasks are handed to the pool only when a worker is free, taken round-robin
 * over the organizations that wait (first come, first served within one), so another organization's
 * task waits for at most one running task per worker, never behind a queue. One organization runs at
 * most `perOrganization` tasks at once (below the worker count, a worker is left for the others), one
 * key at most `perKey`; the tasks waiting per key and per organization are bounded, and past them a
 * task is refused at once with 503 `unavailable` and a Retry-After from the recent task times.
 *
 * Who asks is passed along with each task (`Tenant`, from the request's key, handed down by the
 * domain). Work with no tenant (syncs, public pages read without a key) shares one. It used to ride on
 * `AsyncLocalStorage`, which on Node 20 installs promise hooks for the whole process: every promise of
 * every request paid for them, about a fifth of a `GET /v1/apis/{api}` (docs/benchmarks.md).
 */
import { RegistryError } from '../errors.js'

export interface Tenant {
  organization: string
  key: string
  /**
   * A companion of a task its request already runs (an upload's compatibility diff beside its
   * validation): it may take a worker its tenant's caps would deny, but only a free one while nothing
   * waits, so it never delays another tenant; when anything waits it queues like any task.
   */
  companion?: boolean
}

export interface FairnessLimits {
  /** Tasks run at once (the pool's worker count). */
  slots: number
  /** Most tasks of one organization running at once. */
  perOrganization: number
  /** Most tasks of one key running at once. */
  perKey: number
  /** Most tasks of one key waiting; past it, 503. */
  queuePerKey: number
  /** Most tasks of one organization waiting; past it, 503. */
  queuePerOrganization: number
}

/** The defaults for `threads` workers: half the workers per organization and per key (at least one). */
export function defaultFairness(threads: number): FairnessLimits {
  const perOrganization = Math.max(1, Math.ceil(threads / 2))
  return { slots: threads, perOrganization, perKey: perOrganization, queuePerKey: 32, queuePerOrganization: 128 }
}

const NOBODY: Tenant = { organization: '', key: '' }

/** `tenant`'s task as a companion (see Tenant): work with no tenant stays the shared one's. */
export const companionOf = (tenant: Tenant | undefined): Tenant => ({ ...(tenant ?? NOBODY), companion: true })


interface Waiter {
  key: string
  start: () => void
}

interface OrganizationState {
  running: number
  waiting: Waiter[]
}

interface KeyState {
  running: number
  waiting: number
}

/** Seconds a task took, averaged over recent ones (the Retry-After estimate); starts at one second. */
const SMOOTHING = 0.2

export class FairScheduler {
  readonly #limits: FairnessLimits
  #free: number
  readonly #organizations = new Map<string, OrganizationState>()
  readonly #keys = new Map<string, KeyState>()
  /** Organizations with waiting tasks, in the order they are served next. */
  readonly #turns: string[] = []
  #waiting = 0
  #averageSeconds = 1

  constructor(limits: FairnessLimits) {
    this.#limits = limits
    this.#free = Math.max(1, limits.slots)
  }

  /** Tasks waiting for a worker. */
  get waiting(): number {
    return this.#waiting
  }

  /** Waits for `tenant`'s turn; answers the function that gives the worker back (call it once). */
  async acquire(asking?: Tenant): Promise<() => void> {
    const tenant = asking ?? NOBODY
    // Borrowed outside the tenant's counts, so no state of the tenant is made for it.
    if (tenant.companion === true && this.#waiting === 0 && this.#free > 0) return this.#borrow()
    const keyId = `${tenant.organization}\n${tenant.key}`
    const organization = this.#organizationState(tenant.organization)
    const key = this.#keyState(keyId)
    if (this.#free > 0 && organization.waiting.length === 0 && this.#mayStart(organization, keyId)) {
      this.#start(organization, key)
    } else {
      if (key.waiting >= this.#limits.queuePerKey || organization.waiting.length >= this.#limits.queuePerOrganization) {
        this.#forget(tenant.organization, keyId)
        throw this.#busy(organization)
      }
      key.waiting += 1
      this.#waiting += 1
      await new Promise<void>((resolve) => {
        organization.waiting.push({ key: keyId, start: resolve })
        if (!this.#turns.includes(tenant.organization)) this.#turns.push(tenant.organization)
        // Another key of an organization whose waiting tasks are held by their own key's cap may run now.
        this.#dispatch()
      })
    }
    const began = performance.now()
    let released = false
    return () => {
      if (released) return
      released = true
      this.#averageSeconds += SMOOTHING * ((performance.now() - began) / 1000 - this.#averageSeconds)
      this.#free += 1
      organization.running -= 1
      key.running -= 1
      this.#forget(tenant.organization, keyId)
      this.#dispatch()
    }
  }

  /**
   * A free worker for a companion, outside its tenant's counts: whichever of a request's two tasks asks
   * first, the other still starts under the caps as if alone.
   */
  #borrow(): () => void {
    this.#free -= 1
    let released = false
    return () => {
      if (released) return
      released = true
      this.#free += 1
      this.#dispatch()
    }
  }

  #organizationState(id: string): OrganizationState {
    let state = this.#organizations.get(id)
    if (!state) this.#organizations.set(id, (state = { running: 0, waiting: [] }))
    return state
  }

  #keyState(id: string): KeyState {
    let state = this.#keys.get(id)
    if (!state) this.#keys.set(id, (state = { running: 0, waiting: 0 }))
    return state
  }

  #mayStart(organization: OrganizationState, keyId: string): boolean {
    return organization.running < this.#limits.perOrganization && (this.#keys.get(keyId)?.running ?? 0) < this.#limits.perKey
  }

  #start(organization: OrganizationState, key: KeyState): void {
    this.#free -= 1
    organization.running += 1
    key.running += 1
  }

  /** Drops the state of an organization and a key that have nothing running or waiting. */
  #forget(organizationId: string, keyId: string): void {
    const key = this.#keys.get(keyId)
    if (key && key.running === 0 && key.waiting === 0) this.#keys.delete(keyId)
    const organization = this.#organizations.get(organizationId)
    if (organization && organization.running === 0 && organization.waiting.length === 0) this.#organizations.delete(organizationId)
  }

  /** Gives free workers to waiting tasks, one organization at a time in turn. */
  #dispatch(): void {
    let passed = 0
    while (this.#free > 0 && passed < this.#turns.length) {
      const id = this.#turns.shift()!
      const organization = this.#organizations.get(id)
      const index = organization ? organization.waiting.findIndex((waiter) => this.#mayStart(organization, waiter.key)) : -1
      if (!organization || index < 0) {
        if (organization?.waiting.length) this.#turns.push(id)
        passed += 1
        continue
      }
      const [waiter] = organization.waiting.splice(index, 1)
      const key = this.#keyState(waiter.key)
      key.waiting -= 1
      this.#waiting -= 1
      this.#start(organization, key)
      if (organization.waiting.length > 0) this.#turns.push(id)
      passed = 0
      waiter.start()
    }
  }

  #busy(organization: OrganizationState): RegistryError {
    const ahead = organization.waiting.length + organization.running
    const seconds = Math.min(600, Math.max(1, Math.ceil((this.#averageSeconds * ahead) / this.#limits.perOrganization)))
    return new RegistryError('unavailable',
      `too many documents of this organization or key are waiting for validation and lint (${organization.waiting.length} waiting); `
      + `retry in ${seconds} s; nothing was stored`, undefined, { 'retry-after': String(seconds) })
  }
}
