import { RegistryError, notFound } from '../../errors.js'
import type { WebhookStore } from '../port.js'
import type {
  Page, PageRequest, WebhookDeliveryRecord, WebhookEndpointRecord, WebhookEventRecord,
} from '../records.js'
import { json, recordOf, recordsOf, type Sql } from './sql.js'

export class PgWebhooks implements WebhookStore {
  constructor(private readonly sql: Sql) {}

  endpoint(id: string): Promise<WebhookEndpointRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM webhook_endpoints WHERE id = $1', [id])
  }

  endpoints(organizationId: string): Promise<WebhookEndpointRecord[]> {
    return recordsOf(this.sql, 'SELECT record FROM webhook_endpoints WHERE organization_id = $1 ORDER BY id', [organizationId])
  }

  event(id: string): Promise<WebhookEventRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM webhook_events WHERE id = $1', [id])
  }

  delivery(id: string): Promise<WebhookDeliveryRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM webhook_deliveries WHERE id = $1', [id])
  }

  async deliveries(endpointId: string, page: PageRequest): Promise<Page<WebhookDeliveryRecord>> {
    const { rows: [{ total }] } = await this.sql.query<{ total: string }>(
      'SELECT count(*) AS total FROM webhook_deliveries WHERE endpoint_id = $1', [endpointId])
    const items = await recordsOf<WebhookDeliveryRecord>(this.sql,
      'SELECT record FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id DESC OFFSET $2 LIMIT $3', [endpointId, page.offset, page.limit])
    return { items, total: Number(total) }
  }

  due(at: string, limit: number): Promise<WebhookDeliveryRecord[]> {
    return recordsOf(this.sql,
      'SELECT record FROM webhook_deliveries WHERE next_attempt_at <= $1 ORDER BY next_attempt_at, id LIMIT $2', [at, limit])
  }

  async putEndpoint(endpoint: WebhookEndpointRecord): Promise<void> {
    await this.requireOrganization(endpoint.organization_id)
    await this.sql.query(
      `INSERT INTO webhook_endpoints (id, organization_id, record) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET record = excluded.record`,
      [endpoint.id, endpoint.organization_id, json(endpoint)],
    )
  }

  async removeEndpoint(id: string): Promise<boolean> {
    // Its deliveries go with it (ON DELETE CASCADE).
    const { rowCount } = await this.sql.query('DELETE FROM webhook_endpoints WHERE id = $1', [id])
    return rowCount === 1
  }

  async putEvent(event: WebhookEventRecord): Promise<void> {
    await this.requireOrganization(event.organization_id)
    if (await this.event(event.id)) throw new RegistryError('conflict', `event ${event.id} exists`)
    await this.sql.query('INSERT INTO webhook_events (id, organization_id, record) VALUES ($1, $2, $3)',
      [event.id, event.organization_id, json(event)])
  }

  async putDelivery(delivery: WebhookDeliveryRecord): Promise<void> {
    if (!(await this.endpoint(delivery.endpoint_id))) throw notFound('webhook endpoint')
    if (!(await this.event(delivery.event_id))) throw notFound('event')
    const due = delivery.status === 'pending' ? delivery.next_attempt_at : null
    await this.sql.query(
      `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, next_attempt_at, record) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (id) DO UPDATE SET next_attempt_at = excluded.next_attempt_at, record = excluded.record`,
      [delivery.id, delivery.endpoint_id, delivery.event_id, due, json(delivery)],
    )
  }

  private async requireOrganization(id: string): Promise<void> {
    const { rowCount } = await this.sql.query('SELECT 1 FROM organizations WHERE id = $1', [id])
    if (!rowCount) throw notFound('organization')
  }
}
