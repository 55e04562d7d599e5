/**
 * What the storage port stores. The records are today's (src/storage/registry-records.ts and the mirror's journal
 * types), re-exported here so that code written against the port imports its types from one place and
 * the on-disk shape of an existing `./storage` stays exactly what it was.
 */
import type { StoredSecret } from './secret-keyring.js'
import type { DocumentFormat } from '../documents/types.js'
import type { Visibility } from './registry-records.js'

export type {
  KeyRecord, ListFilter, OrganizationRecord, Page, PageRequest, ResourceKind, ResourceRecord, VersionRecord, VersionSource,
} from './registry-records.js'
export type { Finding } from '../documents/types.js'
export type { DiffResult } from '../documents/diff/types.js'
/** The git mirror's journal, history, heads and remotes, and search's terms: their records. */
export * from './mirror-records.js'
export type { StoredSecret }
/** SDKs, output repositories and builds (issue 7): their records, kept where the port's section is. */
export * from './sdk-records.js'
/** Repository connections and their last sync (issue 5): their records, kept where the port's section is. */
export * from './repository-records.js'

// ---------------------------------------------------------------- blobs

/**
 * A stored text: its canonical checksum (what the document is), the SHA-256 of its bytes (which text
 * it is: key order, YAML comments) and its format.
 */
export interface BlobRef {
  checksum: string
  digest: string
  format: DocumentFormat
}

/** Where document texts are kept: files under `<storage>/blobs` (LMDB) or rows (PostgreSQL). */
export interface BlobStore {
  /**
   * Writes the bytes unless present (temporary file, fsync, rename). A blob already there is touched,
   * so that `gc` sees it as young while the upload that found it commits.
   */
  put(ref: BlobRef, bytes: string | Buffer): Promise<{ created: boolean; size: number }>
  get(ref: BlobRef): Promise<Buffer>
  has(ref: BlobRef): Promise<boolean>
  /** Every stored blob (for verify and gc). */
  list(): AsyncIterable<BlobRef & { size: number; modifiedMs: number }>
  /**
   * Deletes one blob, only when it was last written or touched before `unchangedSince` (ms epoch)
   * if given; answers the bytes freed (0 when it was not there or is younger).
   */
  remove(ref: BlobRef, unchangedSince?: number): Promise<number>
  /**
   * Stores that write through temporary files: deletes those last written before `olderThan` (ms
   * epoch), which a crash during a write leaves behind; answers the bytes freed.
   */
  removeTemporaries?(olderThan: number): Promise<number>
}

// ---------------------------------------------------------------- outbound events (issue 20)

/** What an organization's webhook endpoints can subscribe to (docs/webhooks.md). */
export const WEBHOOK_EVENT_TYPES = [
  'version.created', 'version.restored', 'upload.blocked', 'sync.failed', 'build.succeeded', 'build.failed',
  'resource.created', 'resource.updated', 'resource.deleted',
] as const
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/** Where an organization's events are delivered. */
export interface WebhookEndpointRecord {
  id: string
  organization_id: string
  url: string
  description: string | null
  /** The event types it receives; empty: every type. */
  event_types: WebhookEventType[]
  enabled: boolean
  /** Why the registry disabled it (it failed for days); null when enabled, or disabled by its owner. */
  disabled_reason: string | null
  /** The signing secret (`whsec_…`), sealed like every secret the registry keeps. */
  secret: StoredSecret
  /** The first failed attempt since the last successful one; null while deliveries succeed. */
  failing_since: string | null
  created_at: string
  updated_at: string
}

/** Something that happened, written in the transaction of the change it reports (the outbox). */
export interface WebhookEventRecord {
  /** Also the `webhook-id` of its deliveries: receivers deduplicate by it. */
  id: string
  organization_id: string
  type: WebhookEventType
  created_at: string
  data: Record<string, unknown>
}

/** One attempt to deliver an event to an endpoint, as the delivery log shows it. */
export interface WebhookAttempt {
  attempt: number
  at: string
  /** The endpoint's HTTP status; null when no answer came (refused, unreachable, timed out). */
  status_code: number | null
  duration_ms: number
  /** The start of the endpoint's answer (redacted), or why there was none. */
  response: string | null
}

/** An event on its way to one endpoint. */
export interface WebhookDeliveryRecord {
  id: string
  organization_id: string
  endpoint_id: string
  event_id: string
  event_type: WebhookEventType
  /** pending: due at `next_attempt_at` (a delivery being sent is pending, due again when its lease ends). */
  status: 'pending' | 'succeeded' | 'failed'
  /** Attempts started, a crashed one included, over every round. */
  attempts: number
  /** Attempts made before the latest redelivery (its round of retries counts from there); absent: none. */
  redelivered_after?: number
  next_attempt_at: string | null
  /** The latest attempts, oldest first (bounded). */
  log: WebhookAttempt[]
  created_at: string
  updated_at: string
}

// ---------------------------------------------------------------- console sessions (issue 17)

/** A console sign-in session, stored by the SHA-256 hex of its id. */
export interface SessionRecord {
  /** The key the session was opened with: its role, organization and revocation apply. */
  key_id: string
  organization_id: string
  created_at: string
  expires_at: string
}

// ---------------------------------------------------------------- documentation sites (issue 6)

/** A hosted documentation site (stored as it was in src/store/site-store.ts: LMDB's `sites` database). */
export interface SiteRecord {
  id: string
  organization_id: string
  name: string
  slug: string
  /** Public title shown on the pages; null: the name is shown. */
  title: string | null
  /** APIs of the same organization, in the order the landing page lists them. */
  api_ids: string[]
  visibility: Visibility
  /** Lowercase host names the site answers on. */
  domains: string[]
  created_at: string
  updated_at: string
}

/** A page of a site, written in Markdown. */
export interface GuideRecord {
  id: string
  organization_id: string
  site_id: string
  slug: string
  title: string
  markdown: string
  position: number
  created_at: string
  updated_at: string
}
