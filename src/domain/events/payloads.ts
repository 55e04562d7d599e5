/**
 * What a delivery's `data` says beyond what the outbox stored: a version event gains the summary of
 * what changed from the version before it (the changelog's diff, computed once per pair of documents
 * in the document workers and cached), worked out when it is first delivered, not in the transaction
 * that wrote the event (a transaction does storage calls only).
 */
import { LRUCache } from 'lru-cache'
import type { Storage } from '../../storage/port.js'
import type { ResourceKind, WebhookEventRecord } from '../../storage/records.js'
import { listedChanges } from '../changes/changelog.js'
import { isDiffable, summaryView, type Changes } from '../changes/changes.js'

/** Breaking changes a version event lists, at most (the summary counts them all). */
const BREAKING_LISTED = 50

interface VersionEventData {
  resource: { id: string; kind: ResourceKind }
  version: { id: string; number: number }
}

export function deliveredData(storage: Storage, changes: Changes): (event: WebhookEventRecord) => Promise<Record<string, unknown>> {
  // Every endpoint and every retry of an event says the same: worked out once per event.
  const made = new LRUCache<string, Promise<Record<string, unknown>>>({ max: 1000 })
  return (event) => {
    if (event.type !== 'version.created' && event.type !== 'version.restored') return Promise.resolve(event.data)
    let data = made.get(event.id)
    if (!data) {
      data = withChanges(storage, changes, event).catch(() => ({ ...event.data, changes: null }))
      made.set(event.id, data)
    }
    return data
  }
}

async function withChanges(storage: Storage, changes: Changes, event: WebhookEventRecord): Promise<Record<string, unknown>> {
  const { resource, version } = event.data as unknown as VersionEventData
  const kind = resource.kind
  if (!isDiffable(kind) || version.number === 1) return { ...event.data, changes: null }
  const [current, previous] = await Promise.all([
    storage.read.versions.byId(version.id), storage.read.versions.get(resource.id, version.number - 1),
  ])
  // The resource was deleted before the event was delivered: its documents are gone with it.
  if (!current || !previous) return { ...event.data, changes: null }
  const result = await changes.diff(kind, changes.side(previous), changes.side(current))
  const breaking = listedChanges(result, 'breaking').slice(0, BREAKING_LISTED).map(({ check, message }) => ({ check, message }))
  return { ...event.data, changes: { from: previous.number, summary: summaryView(result), breaking } }
}
