/**
 * Sends the outbox's due deliveries (issue 20, items 7 and 8), after the change that wrote them has
 * committed, never from inside a request. Each attempt is claimed first: a transaction counts it and
 * moves the delivery's due time past the attempt's lease, so a registry that dies while sending leaves a
 * delivery that is due again when the lease ends (on this process after a restart, or on another one).
 * A receiver that answered 2xx before a crash may therefore get the same `webhook-id` again: the
 * specification lets receivers deduplicate by it. Then the outcome is recorded: succeeded, or due again on
 * the retry schedule, or failed when the schedule is spent; an endpoint that failed for days is disabled.
 *
 * Requests go through the outbound policy (checked on the resolved address), with a time limit, and
 * redirects are not followed (a 3xx is a failed attempt).
 */
import { OutboundConnections } from '../outbound/outbound-fetch.js'
import type { OutboundPolicy } from '../outbound/outbound.js'
import { OutboundRefused, REFUSED, UNREACHABLE } from '../outbound/outbound.js'
import { Redactor } from '../outbound/redaction.js'
import type { Secrets } from '../accounts/secrets.js'
import type { ServerLog } from '../operations/server-log.js'
import { STDERR_LOG } from '../operations/server-log.js'
import type { Storage, Stores } from '../../storage/port.js'
import { webhookSecretRef } from '../../storage/secret-slots.js'
import type {
  WebhookAttempt, WebhookDeliveryRecord, WebhookEndpointRecord, WebhookEventRecord,
} from '../../storage/records.js'
import { failedTooLong, nextAttemptAt } from './schedule.js'
import { signedHeaders } from './signature.js'

/** Attempts kept in a delivery's log, the latest. */
const LOG_KEPT = 20
/** Characters of an endpoint's answer kept in the log. */
const EXCERPT_CHARS = 1024
/** Deliveries sent at once, and to one endpoint at once. */
const CONCURRENCY = 8
const PER_ENDPOINT = 2
/** Due deliveries looked at per turn: enough to find other endpoints' past a slow one's. */
const DUE_READ = 100
/** How often the outbox is looked at when nothing nudges the deliverer (other processes write events too). */
const POLL_MS = 1000

export interface DelivererOptions {
  outbound: OutboundPolicy
  secrets: Secrets
  log?: ServerLog
  /** Longest attempt (REGISTRY_WEBHOOK_TIMEOUT_MS, default 10 s); an attempt's lease is this and 5 s more. */
  timeoutMs?: number
  /** The payload's `data` as delivered (the version events gain their diff summary here). */
  payloadData?: (event: WebhookEventRecord) => Promise<Record<string, unknown>>
  /** The time (tests move it). */
  clock?: () => Date
}

/** What one attempt came to. */
interface Outcome {
  ok: boolean
  status: number | null
  response: string | null
  durationMs: number
}

export class WebhookDeliverer {
  readonly #storage: Storage
  readonly #options: Required<Omit<DelivererOptions, 'log'>> & { log: ServerLog }
  readonly #connections: OutboundConnections
  #loop: Promise<void> | null = null
  #stopping = false
  #wake: (() => void) | null = null
  #nudged = false
  /** Attempts being sent, by delivery id, with their endpoint. */
  readonly #sending = new Map<string, { endpointId: string; done: Promise<void> }>()

  constructor(storage: Storage, options: DelivererOptions) {
    this.#storage = storage
    this.#options = {
      log: options.log ?? STDERR_LOG, timeoutMs: options.timeoutMs ?? 10_000, clock: options.clock ?? (() => new Date()),
      payloadData: options.payloadData ?? (async (event) => event.data), outbound: options.outbound, secrets: options.secrets,
    }
    this.#connections = new OutboundConnections(options.outbound)
  }

  /** Sends due deliveries until `stop`. */
  start(): void {
    this.#stopping = false
    this.#loop ??= this.loop()
  }

  /** Something became due now: look at once instead of at the next poll. */
  nudge(): void {
    this.#nudged = true
    this.#wake?.()
  }

  /** Waits for the attempts being sent, then ends. Claimed ones not sent are due again when their lease ends. */
  async stop(): Promise<void> {
    this.#stopping = true
    this.#wake?.()
    await this.#loop
    this.#loop = null
    await this.#connections.close()
  }

  /** Sends every delivery due now, once each, and waits for them (tests move the clock and call this). */
  async deliverDue(): Promise<number> {
    let sent = 0
    for (;;) {
      const started = await this.fill((ran) => { if (ran) sent += 1 })
      if (started === 0 && this.#sending.size === 0) return sent
      await Promise.race(this.#pending())
    }
  }

  /**
   * Starts attempts of due deliveries while slots are free, without waiting for them: a slow endpoint
   * holds at most PER_ENDPOINT of the CONCURRENCY slots, never the others' deliveries. Answers how many
   * it started.
   */
  private async fill(counted: (ran: boolean) => void = () => {}): Promise<number> {
    if (this.#sending.size >= CONCURRENCY) return 0
    const due = await this.#storage.read.webhooks.due(this.#now().toISOString(), DUE_READ)
    let started = 0
    for (const delivery of due) {
      if (this.#sending.size >= CONCURRENCY) break
      if (this.#sending.has(delivery.id) || this.#sendingTo(delivery.endpoint_id) >= PER_ENDPOINT) continue
      const done = this.attempt(delivery.id)
        .catch((error: unknown) => {
          this.#options.log.warn({ delivery_id: delivery.id, reason: String(error) }, 'webhooks: an attempt could not be recorded')
          return false
        })
        .then((ran) => {
          this.#sending.delete(delivery.id)
          counted(ran)
          // A slot is free: the loop looks for more.
          this.nudge()
        })
      this.#sending.set(delivery.id, { endpointId: delivery.endpoint_id, done })
      started += 1
    }
    return started
  }

  private async loop(): Promise<void> {
    while (!this.#stopping) {
      this.#nudged = false
      try {
        await this.fill()
      } catch (error) {
        this.#options.log.warn({ reason: String(error) }, 'webhooks: the outbox could not be read')
      }
      if (this.#stopping || this.#nudged) continue
      await new Promise<void>((resolve) => {
        this.#wake = resolve
        setTimeout(resolve, POLL_MS).unref()
      })
      this.#wake = null
    }
    await Promise.all(this.#pending())
  }

  #pending(): Promise<void>[] {
    return [...this.#sending.values()].map(({ done }) => done)
  }

  #sendingTo(endpointId: string): number {
    let count = 0
    for (const sending of this.#sending.values()) if (sending.endpointId === endpointId) count += 1
    return count
  }

  /** Claims, sends and records one attempt; false when another attempt had it (or it is no longer due). */
  private async attempt(deliveryId: string): Promise<boolean> {
    const claimed = await this.claim(deliveryId)
    if (!claimed) return false
    const { delivery, endpoint, event } = claimed
    const outcome = endpoint.enabled
      ? await this.send(endpoint, event)
      : { ok: false, status: null, response: 'not sent: the endpoint is disabled', durationMs: 0 }
    await this.record(delivery, outcome, !endpoint.enabled)
    return true
  }

  private claim(deliveryId: string) {
    const at = this.#now()
    const leaseEnds = new Date(at.getTime() + this.#options.timeoutMs + 5_000).toISOString()
    return this.#storage.transaction(async (tx) => {
      const delivery = await tx.webhooks.delivery(deliveryId)
      if (!delivery || delivery.status !== 'pending' || delivery.next_attempt_at === null || delivery.next_attempt_at > at.toISOString()) return undefined
      const endpoint = await tx.webhooks.endpoint(delivery.endpoint_id)
      const event = await tx.webhooks.event(delivery.event_id)
      if (!endpoint || !event) return undefined
      const claimed: WebhookDeliveryRecord = { ...delivery, attempts: delivery.attempts + 1, next_attempt_at: leaseEnds, updated_at: at.toISOString() }
      await tx.webhooks.putDelivery(claimed)
      return { delivery: claimed, endpoint, event }
    })
  }

  private async send(endpoint: WebhookEndpointRecord, event: WebhookEventRecord): Promise<Outcome> {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    let secret: string | null = null
    try {
      secret = this.#options.secrets.open(webhookSecretRef(endpoint.id), endpoint.secret)
      const body = JSON.stringify({ type: event.type, timestamp: event.created_at, data: await this.#options.payloadData(event) })
      const response = await this.#connections.fetch(endpoint.url, {
        method: 'POST',
        body,
        redirect: 'manual',
        headers: { 'content-type': 'application/json', 'user-agent': 'api-registry-webhooks', ...signedHeaders(secret!, event.id, this.#now(), body) },
        signal: AbortSignal.timeout(this.#options.timeoutMs),
      })
      const text = await response.text().catch(() => '')
      const redacted = new Redactor([secret]).redact(text.slice(0, EXCERPT_CHARS))
      const ok = response.status >= 200 && response.status < 300
      const note = response.status >= 300 && response.status < 400 ? `redirects are not followed${redacted ? `: ${redacted}` : ''}` : redacted
      return { ok, status: response.status, response: note || null, durationMs: elapsed() }
    } catch (error) {
      return { ok: false, status: null, response: this.failure(endpoint, error), durationMs: elapsed() }
    }
  }

  /** What the log says when no answer came: as little as issue 14 allows (the operator's log says more). */
  private failure(endpoint: WebhookEndpointRecord, error: unknown): string {
    const name = (error as { name?: string }).name
    if (name === 'TimeoutError' || name === 'AbortError') return `no answer within ${this.#options.timeoutMs} ms`
    if ((error as { code?: string }).code === 'secret_needs_reentry') return 'not sent: the signing secret must be made again'
    const refused = error instanceof OutboundRefused || (error as { cause?: unknown }).cause instanceof OutboundRefused
    this.#options.log.warn({ endpoint_id: endpoint.id, url: endpoint.url, reason: String((error as { cause?: unknown }).cause ?? error) },
      'webhooks: a delivery got no answer')
    return refused ? REFUSED : UNREACHABLE
  }

  private async record(claimed: WebhookDeliveryRecord, outcome: Outcome, disabled: boolean): Promise<void> {
    const at = this.#now()
    const attempt: WebhookAttempt = {
      attempt: claimed.attempts, at: at.toISOString(), status_code: outcome.status, duration_ms: outcome.durationMs, response: outcome.response,
    }
    await this.#storage.transaction(async (tx) => {
      const delivery = await tx.webhooks.delivery(claimed.id)
      // Redelivered or removed meanwhile: that is the delivery now, and this attempt is not its.
      if (!delivery || delivery.attempts !== claimed.attempts || delivery.next_attempt_at !== claimed.next_attempt_at) return
      const inRound = claimed.attempts - (delivery.redelivered_after ?? 0)
      const next = outcome.ok || disabled ? null : nextAttemptAt(inRound, at)
      const status = outcome.ok ? 'succeeded' : next === null ? 'failed' : 'pending'
      await tx.webhooks.putDelivery({
        ...delivery, status, next_attempt_at: next?.toISOString() ?? null, log: [...delivery.log, attempt].slice(-LOG_KEPT), updated_at: at.toISOString(),
      })
      if (!disabled) await this.keepEndpointHealth(tx, delivery.endpoint_id, outcome.ok, at)
    })
  }

  /** Tracks since when an endpoint fails, and disables it once that is too long. */
  private async keepEndpointHealth(tx: Stores, endpointId: string, ok: boolean, at: Date): Promise<void> {
    const endpoint = await tx.webhooks.endpoint(endpointId)
    if (!endpoint) return
    if (ok) {
      if (endpoint.failing_since !== null) await tx.webhooks.putEndpoint({ ...endpoint, failing_since: null, updated_at: at.toISOString() })
      return
    }
    const failingSince = endpoint.failing_since ?? at.toISOString()
    if (failedTooLong(failingSince, at)) {
      await tx.webhooks.putEndpoint({
        ...endpoint, enabled: false, failing_since: failingSince, updated_at: at.toISOString(),
        disabled_reason: `disabled by the registry at ${at.toISOString()}: every delivery failed since ${failingSince}`,
      })
    } else if (endpoint.failing_since === null) {
      await tx.webhooks.putEndpoint({ ...endpoint, failing_since: failingSince, updated_at: at.toISOString() })
    }
  }

  #now(): Date {
    return this.#options.clock()
  }
}
