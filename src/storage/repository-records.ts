/**
 * Repository connections (issue 5): an API kept current from a file in a git repository, and the
 * outcome of its last sync. Stored exactly as src/store/repository-store.ts stored them (LMDB's
 * `repository-connections` database), so an existing `./storage` reads as it is. Re-exported by records.ts.
 */
import type { ProblemItem } from '../errors.js'
import type { StoredSecret } from './secret-keyring.js'

export type RepositoryProvider = 'github' | 'gitlab'

/** How a sync ended: a new version, the same content again, refused by the lint gate, or failed. */
export type SyncStatus = 'succeeded' | 'unchanged' | 'blocked' | 'failed'

export interface LastSyncRecord {
  status: SyncStatus
  /** What started it: `manual` (POST …/sync) or `webhook`. */
  trigger: 'manual' | 'webhook'
  /** The webhook delivery id, when a webhook started it. */
  delivery: string | null
  started_at: string
  finished_at: string
  /** The commit the file was read from (null when the fetch failed before a commit was known). */
  commit: string | null
  /** The version made current (succeeded) or already current (unchanged). */
  version_id: string | null
  version_number: number | null
  /** Why it failed or was blocked: the problem the upload route would have answered. */
  error: { code: string; detail: string; errors?: ProblemItem[] } | null
}

/** One per API at most, stored under the API's id. */
export interface RepositoryConnectionRecord {
  id: string
  api_id: string
  organization_id: string
  provider: RepositoryProvider
  /** As given (http or https, no credentials). */
  url: string
  /** `host[:port]/path` lowercased, without `.git` or a trailing slash: what webhook payloads are matched on. */
  normalized_url: string
  branch: string
  path: string
  /** Sealed (secret-keyring.ts); never served. */
  token: StoredSecret | null
  webhook_secret: StoredSecret | null
  created_at: string
  /** Also the connection's version: a sync records its outcome only on the connection it started from. */
  updated_at: string
  last_sync: LastSyncRecord | null
}

/** What asked for a sync. */
export interface SyncRequest {
  /** Names the request (a ULID): the runner that finishes a sync tells by it whether the lease is still its run's. */
  id: string
  trigger: LastSyncRecord['trigger']
  /** The webhook delivery id, when a webhook asked. */
  delivery: string | null
  requested_at: string
}

/**
 * The sync lease of one connection (issue 16, item 8), stored under its API's id while a sync of it runs
 * or waits: at most one sync runs, held by one runner until `until` (renewed while it works), and at
 * most one waits to run after it (`pending`: what was asked for while it ran; later asks join it).
 */
export interface SyncLeaseRecord {
  api_id: string
  running: { request: SyncRequest; holder: string; until: string } | null
  pending: SyncRequest | null
}
