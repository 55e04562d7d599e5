/** The objects of the `/v1` API the console shows (see /openapi.json). */

export type Kind = 'api' | 'schema' | 'ruleset'
export type Visibility = 'private' | 'public'
export type Severity = 'error' | 'warn' | 'info' | 'hint'
export type BlockingSeverity = 'off' | 'error' | 'warn' | 'info'
export type Role = 'read' | 'write' | 'admin'

export interface Version {
  id: string
  number: number
  checksum: string
  source: 'upload' | 'github' | 'gitlab' | 'restore'
  restored_from: string | null
  size: number
  format: 'json' | 'yaml'
  created_at: string
  api_id?: string
  schema_id?: string
  ruleset_id?: string
  openapi?: string | null
  title?: string | null
  version?: string | null
  lint?: { ruleset_id: string; ruleset_version_id: string; counts: Record<Severity, number> } | null
}

export interface Resource {
  id: string
  name: string
  slug: string
  visibility: Visibility
  description: string | null
  created_at: string
  updated_at: string
  current: Version | null
  /** APIs */
  logo_url?: string | null
  ruleset_id?: string | null
  blocking_severity?: BlockingSeverity | null
  effective_blocking_severity?: BlockingSeverity
}

export interface Finding {
  code: string
  message: string
  severity: Severity
  path: (string | number)[]
}

export interface Session {
  organization: { id: string; slug: string; name: string }
  key: { id: string; name: string | null; role: Role }
  csrf_token: string | null
  expires_at: string | null
}

export interface Key {
  id: string
  name: string | null
  role: Role
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
}

export interface Site {
  id: string
  name: string
  slug: string
  title: string | null
  api_ids: string[]
  visibility: Visibility
  domains: string[]
  created_at: string
  updated_at: string
}

export interface Guide {
  id: string
  slug: string
  title: string
  markdown: string
  position: number
  updated_at: string
}

export type Target = 'typescript' | 'php'
export const TARGET_LABELS: Record<Target, string> = { typescript: 'TypeScript', php: 'PHP' }

export interface OutputRepository {
  target: Target
  provider: 'git' | 'github' | 'gitlab'
  url: string
  base_branch: string
  api_url: string | null
  has_token: boolean
  updated_at: string
}

export interface Sdk {
  id: string
  name: string
  slug: string
  targets: Target[]
  apis: { api_id: string; version_id: string | null }[]
  config: Record<string, unknown>
  repositories: OutputRepository[]
  created_at: string
  updated_at: string
}

export type BuildStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled'

export interface Build {
  id: string
  sdk_id: string
  number: number
  target: Target
  status: BuildStatus
  attempts: number
  inputs: { apis: { api_id: string; slug: string; name: string; version_id: string; checksum: string }[]; generator: { name: string; version: string } }
  repository: { provider: string; url: string; base_branch: string } | null
  output: {
    branch: string | null
    commit: string | null
    files: string[]
    pull_request: { number: number; url: string; branch: string; base: string; title: string } | null
    reason: 'unchanged' | 'git_provider' | 'archive_only' | null
  } | null
  error: string | null
  created_at: string
  started_at: string | null
  finished_at: string | null
}

export interface LastSync {
  status: 'succeeded' | 'unchanged' | 'blocked' | 'failed'
  trigger: 'manual' | 'webhook'
  started_at: string
  finished_at: string
  commit: string | null
  version_number: number | null
  error: { code: string; detail: string; errors?: { message: string; path?: (string | number)[]; severity?: string; code?: string; file?: string }[] } | null
}

export interface Connection {
  provider: 'github' | 'gitlab'
  url: string
  branch: string
  path: string
  has_token: boolean
  has_webhook_secret: boolean
  webhook_path: string
  last_sync: LastSync | null
  updated_at: string
}

export interface MirrorStatus {
  head: string | null
  url: string | null
  token_set: boolean
  last_pushed_commit: string | null
  last_pushed_at: string | null
  last_error: string | null
  last_error_at: string | null
}

export type WebhookEventType =
  | 'version.created' | 'version.restored' | 'upload.blocked' | 'sync.failed' | 'build.succeeded' | 'build.failed'
  | 'resource.created' | 'resource.updated' | 'resource.deleted'

/** An outbound webhook endpoint (`/v1/webhooks`, admin keys only; docs/webhooks.md). */
export interface WebhookEndpoint {
  id: string
  url: string
  description: string | null
  /** Empty: every type. */
  event_types: WebhookEventType[]
  enabled: boolean
  /** Why the registry disabled it (every delivery failed for 5 days). */
  disabled_reason: string | null
  failing_since: string | null
  secret_status: 'none' | 'stored' | 'needs_reentry'
  created_at: string
  updated_at: string
}

export interface WebhookAttempt {
  attempt: number
  at: string
  /** Null when no answer came. */
  status_code: number | null
  duration_ms: number
  /** The start of the endpoint's answer, or why there was none. */
  response: string | null
}

export interface WebhookDelivery {
  id: string
  /** The webhook-id header of every attempt. */
  event_id: string
  event_type: WebhookEventType
  status: 'pending' | 'succeeded' | 'failed'
  attempts: number
  next_attempt_at: string | null
  log: WebhookAttempt[]
  created_at: string
}
