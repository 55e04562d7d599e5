/**
 * The port's repositories section (issue 16): what repository sync reads and writes, inside a
 * transaction (`RepositoryStore`) or from the committed state (`RepositoryReader`): each API's
 * repository connection (with its sealed secrets and its last sync), found by API, by repository (the
 * webhooks) and by organization, the inbound webhook deliveries already handled (bounded), and each
 * connection's sync lease (the sync running, on whose lease, and the one waiting after it).
 */
import type { LastSyncRecord, RepositoryConnectionRecord, RepositoryProvider, SyncLeaseRecord } from '../records.js'

/** Inbound webhook deliveries remembered: far more than a provider redelivers, small enough to never matter. */
export const MAX_DELIVERIES = 10_000

/**
 * When a sync lease may be claimed by any runner (RFC 3339, compared as text): when its running sync's
 * lease ends; with none running, at once (when the waiting one was asked for). A running sync with one
 * waiting is not due before its lease ends: its holder runs the waiting one after it.
 */
export function syncLeaseDue(lease: SyncLeaseRecord): string {
  if (lease.running) return lease.running.until
  if (lease.pending) return lease.pending.requested_at
  throw new Error('a sync lease holds a running or a waiting sync')
}

export interface RepositoryReader {
  /** The API's connection. */
  get(apiId: string): Promise<RepositoryConnectionRecord | undefined>
  /**
   * Every connection to one repository (any branch, any provider), by normalized url (exactly: a url
   * that merely starts with it is another repository); by branch, then API id.
   */
  byRepository(normalizedUrl: string): Promise<RepositoryConnectionRecord[]>
  /** An organization's connections, in API id order. */
  list(organizationId: string): Promise<RepositoryConnectionRecord[]>
  /** The API's sync lease; undefined while no sync of it runs or waits. */
  syncLease(apiId: string): Promise<SyncLeaseRecord | undefined>
  /**
   * The sync lease due first (`syncLeaseDue`) at or before `at`: what a runner claims next, inside the
   * transaction that takes it under its own lease. Two concurrent claims never both take one: on
   * PostgreSQL the row is locked `FOR UPDATE SKIP LOCKED` (a concurrent claimer passes to the next) and
   * the serializable commit refuses the rest; on LMDB the commit re-checks what was read.
   */
  nextSync(at: string): Promise<SyncLeaseRecord | undefined>
}

export interface RepositoryStore extends RepositoryReader {
  /**
   * Creates or replaces the connection of its API (`api_id`); answers true when it created one. 404 when
   * no API of its organization has that id. `expectedVersion`, when given, is the `updated_at` of the
   * connection it must replace (null: there must be none), else 409 `conflict`.
   */
  put(connection: RepositoryConnectionRecord, expectedVersion?: string | null): Promise<boolean>
  /** Removes the API's connection (a disconnect, or the API's deletion), its sync lease with it; false when it had none. */
  remove(apiId: string): Promise<boolean>
  /**
   * Keeps a sync's outcome as the connection's `last_sync`, only when the connection is still the one
   * the sync started from (its `updated_at` is `connectionVersion`): answers whether it did. A
   * connection removed or replaced meanwhile is left as it is.
   */
  recordSync(apiId: string, connectionVersion: string, lastSync: LastSyncRecord): Promise<boolean>
  /**
   * Remembers an inbound webhook delivery id of a provider, seen at `atMs`: true the first time, false
   * when it was seen before. Keeps the newest `keep` (by time seen, then provider and id; default
   * `MAX_DELIVERIES`), forgetting older ones, so a forgotten id is new again. Concurrent claims of
   * different ids do not conflict on LMDB (the oldest are dropped at commit).
   */
  claimDelivery(provider: RepositoryProvider, id: string, atMs: number, keep?: number): Promise<boolean>
  /** Creates or replaces the API's sync lease (it must hold a running or a waiting sync); 404 when the API has no connection. */
  putSyncLease(lease: SyncLeaseRecord): Promise<void>
  /** Removes the API's sync lease (no sync runs or waits); false when there was none. */
  removeSyncLease(apiId: string): Promise<boolean>
}
