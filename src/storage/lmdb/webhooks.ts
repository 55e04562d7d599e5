import { RegistryError, notFound } from '../../errors.js'
import type { WebhookStore } from '../port.js'
import type {
  Page, PageRequest, WebhookDeliveryRecord, WebhookEndpointRecord, WebhookEventRecord,
} from '../records.js'
import type { IndexDatabases, PortDatabases } from './databases.js'
import type { LmdbAccess } from './transaction-view.js'

// '\uffff' sorts after every id and time the keys hold.
const END = '\uffff'

export class LmdbWebhooks implements WebhookStore {
  constructor(private readonly access: LmdbAccess, private readonly db: PortDatabases, private readonly index: IndexDatabases) {}

  async endpoint(id: string): Promise<WebhookEndpointRecord | undefined> {
    return this.access.get(this.db.webhooks, ['endpoint', id])
  }

  async endpoints(organizationId: string): Promise<WebhookEndpointRecord[]> {
    const order = this.access.range(this.db.webhookOrder, { start: ['endpoints', organizationId, ''], end: ['endpoints', organizationId, END] })
    return order.map(({ key }) => this.access.get<WebhookEndpointRecord>(this.db.webhooks, ['endpoint', (key as string[])[2]])!)
  }

  async event(id: string): Promise<WebhookEventRecord | undefined> {
    return this.access.get(this.db.webhooks, ['event', id])
  }

  async delivery(id: string): Promise<WebhookDeliveryRecord | undefined> {
    return this.access.get(this.db.webhooks, ['delivery', id])
  }

  async deliveries(endpointId: string, page: PageRequest): Promise<Page<WebhookDeliveryRecord>> {
    const range = { start: ['deliveries', endpointId, ''], end: ['deliveries', endpointId, END] }
    const total = this.access.count(this.db.webhookOrder, range)
    const items = this.access.range(this.db.webhookOrder, {
      start: range.end, end: range.start, reverse: true, offset: page.offset, limit: page.limit,
    }).map(({ key }) => this.access.get<WebhookDeliveryRecord>(this.db.webhooks, ['delivery', (key as string[])[2]])!)
    return { items, total }
  }

  async due(at: string, limit: number): Promise<WebhookDeliveryRecord[]> {
    // Up to the end of `at`'s own key: a delivery due exactly then is due.
    const due = this.access.range(this.db.webhookOrder, { start: ['due', ''], end: ['due', at, END], limit })
    return due.map(({ key }) => this.access.get<WebhookDeliveryRecord>(this.db.webhooks, ['delivery', (key as string[])[2]])!)
  }

  async putEndpoint(endpoint: WebhookEndpointRecord): Promise<void> {
    if (this.access.get(this.index.organizations, endpoint.organization_id) === undefined) throw notFound('organization')
    this.access.put(this.db.webhooks, ['endpoint', endpoint.id], endpoint)
    this.access.put(this.db.webhookOrder, ['endpoints', endpoint.organization_id, endpoint.id], null)
  }

  async removeEndpoint(id: string): Promise<boolean> {
    const endpoint = await this.endpoint(id)
    if (!endpoint) return false
    const deliveries = this.access.range(this.db.webhookOrder, { start: ['deliveries', id, ''], end: ['deliveries', id, END] })
    for (const { key } of deliveries) {
      const deliveryId = (key as string[])[2]
      const delivery = await this.delivery(deliveryId)
      if (delivery?.next_attempt_at) this.access.remove(this.db.webhookOrder, ['due', delivery.next_attempt_at, deliveryId])
      this.access.remove(this.db.webhooks, ['delivery', deliveryId])
      this.access.remove(this.db.webhookOrder, key)
    }
    this.access.remove(this.db.webhooks, ['endpoint', id])
    this.access.remove(this.db.webhookOrder, ['endpoints', endpoint.organization_id, id])
    return true
  }

  async putEvent(event: WebhookEventRecord): Promise<void> {
    if (this.access.get(this.index.organizations, event.organization_id) === undefined) throw notFound('organization')
    if (await this.event(event.id)) throw new RegistryError('conflict', `event ${event.id} exists`)
    this.access.put(this.db.webhooks, ['event', event.id], event)
  }

  async putDelivery(delivery: WebhookDeliveryRecord): Promise<void> {
    if (!(await this.endpoint(delivery.endpoint_id))) throw notFound('webhook endpoint')
    if (!(await this.event(delivery.event_id))) throw notFound('event')
    const before = await this.delivery(delivery.id)
    if (before?.next_attempt_at) this.access.remove(this.db.webhookOrder, ['due', before.next_attempt_at, delivery.id])
    this.access.put(this.db.webhooks, ['delivery', delivery.id], delivery)
    this.access.put(this.db.webhookOrder, ['deliveries', delivery.endpoint_id, delivery.id], null)
    if (delivery.status === 'pending' && delivery.next_attempt_at) {
      this.access.put(this.db.webhookOrder, ['due', delivery.next_attempt_at, delivery.id], null)
    }
  }
}
