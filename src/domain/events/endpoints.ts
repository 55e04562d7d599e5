/**
 * An organization's webhook endpoints (issue 20, item 6): where its events are delivered. The signing
 * secret is shown once, when it is made (a new endpoint, or a new secret), and sealed at rest; the URL is
 * checked against the outbound policy when it is set, and again when each delivery connects.
 */
import { RegistryError, notFound } from '../../errors.js'
import type { Storage } from '../../storage/port.js'
import { webhookSecretRef } from '../../storage/secret-slots.js'
import type { Page, PageRequest, WebhookDeliveryRecord, WebhookEndpointRecord, WebhookEventType } from '../../storage/records.js'
import { newId, now } from '../resources/ids.js'
import type { OutboundPolicy } from '../outbound/outbound.js'
import type { Secrets } from '../accounts/secrets.js'
import { checkHttpUrl } from '../outbound/stored-urls.js'
import { newSigningSecret } from './signature.js'

export interface EndpointInput {
  url: string
  description?: string | null
  event_types?: WebhookEventType[]
  enabled?: boolean
}

export type EndpointChange = Partial<EndpointInput>

/** An endpoint as its owner sees it (never its secret). */
export function endpointView(endpoint: WebhookEndpointRecord, secrets: Secrets): Record<string, unknown> {
  return {
    id: endpoint.id,
    organization_id: endpoint.organization_id,
    url: endpoint.url,
    description: endpoint.description,
    event_types: endpoint.event_types,
    enabled: endpoint.enabled,
    disabled_reason: endpoint.disabled_reason,
    failing_since: endpoint.failing_since,
    secret_status: secrets.status(webhookSecretRef(endpoint.id), endpoint.secret),
    created_at: endpoint.created_at,
    updated_at: endpoint.updated_at,
  }
}

/** A delivery as the endpoint's log shows it. */
export function deliveryView(delivery: WebhookDeliveryRecord): Record<string, unknown> {
  return {
    id: delivery.id,
    endpoint_id: delivery.endpoint_id,
    event_id: delivery.event_id,
    event_type: delivery.event_type,
    status: delivery.status,
    attempts: delivery.attempts,
    next_attempt_at: delivery.next_attempt_at,
    log: delivery.log,
    created_at: delivery.created_at,
    updated_at: delivery.updated_at,
  }
}

/** Endpoints an organization may have at most: each event is written once per endpoint that wants it. */
export const MAX_ENDPOINTS = 20

export class WebhookEndpoints {
  constructor(
    private readonly storage: Storage,
    private readonly secrets: Secrets,
    private readonly outbound: OutboundPolicy,
  ) {}

  list(organizationId: string): Promise<WebhookEndpointRecord[]> {
    return this.storage.read.webhooks.endpoints(organizationId)
  }

  async get(organizationId: string, id: string): Promise<WebhookEndpointRecord> {
    const endpoint = await this.storage.read.webhooks.endpoint(id)
    if (!endpoint || endpoint.organization_id !== organizationId) throw notFound('webhook endpoint')
    return endpoint
  }

  /** A new endpoint and its secret, which this answer is the only one to show. */
  async create(organizationId: string, input: EndpointInput): Promise<{ endpoint: WebhookEndpointRecord; secret: string }> {
    this.checkUrl(input.url)
    const secret = newSigningSecret()
    const at = now()
    const id = newId()
    const endpoint: WebhookEndpointRecord = {
      id, organization_id: organizationId, url: input.url, description: input.description ?? null,
      event_types: distinct(input.event_types ?? []), enabled: input.enabled ?? true, disabled_reason: null,
      secret: this.secrets.seal(webhookSecretRef(id), secret)!, failing_since: null, created_at: at, updated_at: at,
    }
    await this.storage.transaction(async (tx) => {
      if ((await tx.webhooks.endpoints(organizationId)).length >= MAX_ENDPOINTS) {
        throw new RegistryError('conflict', `an organization has at most ${MAX_ENDPOINTS} webhook endpoints; delete one first`)
      }
      await tx.webhooks.putEndpoint(endpoint)
    })
    return { endpoint, secret }
  }

  /** Changes the URL, description, event types or enabled state; enabling clears why it was disabled. */
  async update(organizationId: string, id: string, change: EndpointChange): Promise<WebhookEndpointRecord> {
    if (change.url !== undefined) this.checkUrl(change.url)
    return this.storage.transaction(async (tx) => {
      const endpoint = await tx.webhooks.endpoint(id)
      if (!endpoint || endpoint.organization_id !== organizationId) throw notFound('webhook endpoint')
      const next: WebhookEndpointRecord = { ...endpoint, updated_at: now() }
      if (change.url !== undefined) next.url = change.url
      if (change.description !== undefined) next.description = change.description
      if (change.event_types !== undefined) next.event_types = distinct(change.event_types)
      if (change.enabled !== undefined) {
        next.enabled = change.enabled
        next.disabled_reason = null
        if (change.enabled) next.failing_since = null
      }
      await tx.webhooks.putEndpoint(next)
      return next
    })
  }

  /** A new signing secret (the old one stops at once): shown in this answer only. */
  async newSecret(organizationId: string, id: string): Promise<{ endpoint: WebhookEndpointRecord; secret: string }> {
    const secret = newSigningSecret()
    const endpoint = await this.storage.transaction(async (tx) => {
      const endpoint = await tx.webhooks.endpoint(id)
      if (!endpoint || endpoint.organization_id !== organizationId) throw notFound('webhook endpoint')
      const next = { ...endpoint, secret: this.secrets.seal(webhookSecretRef(id), secret)!, updated_at: now() }
      await tx.webhooks.putEndpoint(next)
      return next
    })
    return { endpoint, secret }
  }

  async remove(organizationId: string, id: string): Promise<void> {
    await this.storage.transaction(async (tx) => {
      const endpoint = await tx.webhooks.endpoint(id)
      if (!endpoint || endpoint.organization_id !== organizationId) throw notFound('webhook endpoint')
      await tx.webhooks.removeEndpoint(id)
    })
  }

  async deliveries(organizationId: string, id: string, page: PageRequest): Promise<Page<WebhookDeliveryRecord>> {
    await this.get(organizationId, id)
    return this.storage.read.webhooks.deliveries(id, page)
  }

  /**
   * Sends a delivery again (whatever became of it), now, with its retries; its log goes on. Its commit
   * nudges the deliverer (the registry has every commit do so), which sends it at once.
   */
  redeliver(organizationId: string, endpointId: string, deliveryId: string): Promise<WebhookDeliveryRecord> {
    return this.storage.transaction(async (tx) => {
      const endpoint = await tx.webhooks.endpoint(endpointId)
      const delivery = await tx.webhooks.delivery(deliveryId)
      if (!endpoint || endpoint.organization_id !== organizationId || delivery?.endpoint_id !== endpointId) throw notFound('delivery')
      if (!endpoint.enabled) throw new RegistryError('conflict', 'the endpoint is disabled; enable it first')
      const at = now()
      // A new round: its retries follow the schedule from its start; the attempts go on being counted.
      const next: WebhookDeliveryRecord = {
        ...delivery, status: 'pending', redelivered_after: delivery.attempts, next_attempt_at: at, updated_at: at,
      }
      await tx.webhooks.putDelivery(next)
      return next
    })
  }

  private checkUrl(url: string): void {
    checkHttpUrl(url, 'the signature authenticates each delivery')
    this.outbound.check(url, 'url')
  }
}

const distinct = <T>(values: T[]): T[] => [...new Set(values)]
