/**
 * The outbox (issue 20, item 8): an event is written in the same storage transaction as the change it
 * reports, with one pending delivery for each enabled endpoint of the organization that wants its type.
 * Nothing is sent from here: the deliverer sends after the commit, so a change that rolls back reports
 * nothing and a restart loses nothing.
 */
import type { Storage, Stores } from '../../storage/port.js'
import type {
  ResourceRecord, VersionRecord, WebhookDeliveryRecord, WebhookEndpointRecord, WebhookEventRecord, WebhookEventType,
} from '../../storage/records.js'
import { newId, now } from '../resources/ids.js'

/** True when `endpoint` receives events of `type`. */
export function wants(endpoint: WebhookEndpointRecord, type: WebhookEventType): boolean {
  return endpoint.enabled && (endpoint.event_types.length === 0 || endpoint.event_types.includes(type))
}

/** A pending delivery of `event` to `endpoint`, due at once. */
export function newDelivery(endpoint: WebhookEndpointRecord, event: WebhookEventRecord, at = now()): WebhookDeliveryRecord {
  return {
    id: newId(), organization_id: event.organization_id, endpoint_id: endpoint.id, event_id: event.id, event_type: event.type,
    status: 'pending', attempts: 0, next_attempt_at: at, log: [], created_at: at, updated_at: at,
  }
}

/**
 * Writes an event and its deliveries in the transaction `tx`; answers the event, or undefined when no
 * endpoint wants it (then nothing is written: an organization without endpoints keeps no outbox).
 */
export async function emitEvent(
  tx: Stores, organizationId: string, type: WebhookEventType, data: Record<string, unknown>, at = now(),
): Promise<WebhookEventRecord | undefined> {
  const endpoints = (await tx.webhooks.endpoints(organizationId)).filter((endpoint) => wants(endpoint, type))
  if (endpoints.length === 0) return undefined
  const event: WebhookEventRecord = { id: newId(), organization_id: organizationId, type, created_at: at, data }
  await tx.webhooks.putEvent(event)
  for (const endpoint of endpoints) await tx.webhooks.putDelivery(newDelivery(endpoint, event, at))
  return event
}

/** What an event says of a resource: enough to find it again, by id or by slug. */
export function resourceSummary(resource: ResourceRecord): Record<string, unknown> {
  return { id: resource.id, kind: resource.kind, slug: resource.slug, name: resource.name, visibility: resource.visibility }
}

/** The data of `version.created` and `version.restored`: the diff summary is added when it is delivered. */
export function versionEventData(resource: ResourceRecord, version: VersionRecord): Record<string, unknown> {
  return {
    resource: resourceSummary(resource),
    version: {
      id: version.id, number: version.number, checksum: version.checksum, source: version.source,
      restored_from: version.restored_from, created_at: version.created_at,
    },
  }
}

/** The event type of a new version. */
export const versionEventType = (version: VersionRecord): WebhookEventType =>
  version.source === 'restore' ? 'version.restored' : 'version.created'

/** What features outside the storage port are handed to report their events with (see reportEvent). */
export type ReportEvent = (organizationId: string, type: WebhookEventType, data: Record<string, unknown>) => Promise<void>

/**
 * Reports an event in a transaction of its own, for changes that commit outside the storage port
 * (resource deletion, SDK builds and repository syncs keep their state in the index until they move onto
 * it: a crash between their commit and this one loses the event) and for refusals, which store nothing else.
 */
export async function reportEvent(storage: Storage, organizationId: string, type: WebhookEventType, data: Record<string, unknown>): Promise<void> {
  await storage.transaction((tx) => emitEvent(tx, organizationId, type, data), organizationId)
}

/** `reportEvent` on one storage, for features that are handed a reporter. */
export const eventReporter = (storage: Storage): ReportEvent => (organizationId, type, data) => reportEvent(storage, organizationId, type, data)

/** For code that reports nothing (tests that build a runner or a sync without a registry). */
export const REPORT_NOTHING: ReportEvent = async () => {}
