/**
 * The records of the SDK feature (issue 7) as both adapters store them: the LMDB databases of
 * `SDK_DATABASES` (src/storage/lmdb/layout.ts) hold them as they are, PostgreSQL's `record` columns as json.
 * Re-exported by records.ts.
 */
import type { StoredSecret } from './secret-keyring.js'
import type { SecretRef } from './secret-slots.js'

export const SDK_TARGETS = ['typescript', 'php'] as const
export type SdkTarget = (typeof SDK_TARGETS)[number]

export const PROVIDERS = ['git', 'github', 'gitlab'] as const
export type Provider = (typeof PROVIDERS)[number]

export const BUILD_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'canceled'] as const
export type BuildStatus = (typeof BUILD_STATUSES)[number]

export interface SdkApiAttachment {
  api_id: string
  /** A pinned version; null: a build takes the API's current version when it is queued. */
  version_id: string | null
}

export interface SdkConfig {
  package_name?: string
  package_version?: string
  description?: string
  license?: string
  typescript?: { package_name?: string }
  php?: { package_name?: string; namespace?: string }
}

export interface SdkRecord {
  id: string
  organization_id: string
  name: string
  slug: string
  targets: SdkTarget[]
  apis: SdkApiAttachment[]
  config: SdkConfig
  /** Builds numbered 1, 2, 3… per SDK; never reused. */
  last_build_number: number
  created_at: string
  updated_at: string
}

export interface OutputRepositoryRecord {
  sdk_id: string
  target: SdkTarget
  provider: Provider
  url: string
  base_branch: string
  /** Base URL of the provider's REST API; null: derived from `url` (see docs/sdks.md). */
  api_url: string | null
  /** Write-only: used for git and the provider's API, never served; sealed (secret-keyring.ts). */
  token: StoredSecret | null
  created_at: string
  updated_at: string
}

/** Where an output repository's token is: its additional authenticated data names the SDK and the target. */
export function outputRepositorySecretRef(repository: Pick<OutputRepositoryRecord, 'sdk_id' | 'target'>): SecretRef {
  return { holder: 'sdk-output-repository', sdk_id: repository.sdk_id, target: repository.target, field: 'token' }
}

export interface BuildInputs {
  apis: { api_id: string; slug: string; name: string; version_id: string; checksum: string }[]
  config_checksum: string
  generator: { name: string; version: string }
}

export interface PullRequest {
  number: number
  url: string
  branch: string
  base: string
  title: string
}

export interface BuildOutput {
  /** The pushed branch; null when nothing was pushed (unchanged). */
  branch: string | null
  commit: string | null
  /** Paths of the generated files, sorted. */
  files: string[]
  pull_request: PullRequest | null
  /**
   * Why there is no pull request: `unchanged` (the base branch already holds this tree), `git_provider`
   * (a plain git remote: the branch is the deliverable) or `archive_only` (asked for without delivery:
   * the artifact is the deliverable).
   */
  reason: 'unchanged' | 'git_provider' | 'archive_only' | null
}

export interface BuildRecord {
  id: string
  organization_id: string
  sdk_id: string
  /** 1, 2, 3… per SDK. */
  number: number
  target: SdkTarget
  status: BuildStatus
  /** Runs started (a run interrupted by a crash counts; one interrupted by a clean shutdown does not). */
  attempts: number
  inputs: BuildInputs
  /** The SDK's name, slug and config as they were when the build was queued (what it generates from). */
  sdk: { name: string; slug: string }
  config: SdkConfig
  /**
   * Where the build delivers: the repository as it was when the build was queued (without the token);
   * null for an archive-only build.
   */
  repository: { provider: Provider; url: string; base_branch: string } | null
  output: BuildOutput | null
  error: string | null
  created_at: string
  updated_at: string
  started_at: string | null
  finished_at: string | null
  /**
   * Who runs this build and until when (a running build only): the runner renews it while it works, and
   * a running build whose lease ended (or that has none: claimed before leases, by a process now gone)
   * is claimed again by any replica. Not shown in the API.
   */
  lease?: BuildLease | null
}

/** A runner's claim on a running build: its holder (one per runner, process and replica) and its end. */
export interface BuildLease {
  holder: string
  /** RFC 3339 UTC, compared as text with the claimer's `now()`. */
  until: string
}
