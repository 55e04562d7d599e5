/** What the index stores. Records are plain JSON-compatible objects; times are RFC 3339 UTC strings. */
import type { ConvertedFrom, DocumentFormat, Finding, LintCounts, Severity } from '../documents/types.js'

export type ResourceKind = 'api' | 'schema' | 'ruleset'
export type Visibility = 'private' | 'public'
export type BlockingSeverity = 'off' | Exclude<Severity, 'hint'>
export type VersionSource = 'upload' | 'github' | 'gitlab' | 'restore'
/** How a new version must relate to earlier ones (issue 20, docs/changes.md). */
export type CompatibilityPolicy =
  | 'none' | 'backward' | 'forward' | 'full' | 'backward_transitive' | 'forward_transitive' | 'full_transitive'

export interface OrganizationRecord {
  id: string
  slug: string
  name: string
  created_at: string
  updated_at: string
}

/** What a key may do: `read` GETs only; `write` all but keys and organization settings; `admin` all. */
export type KeyRole = 'read' | 'write' | 'admin'
export const KEY_ROLES: readonly KeyRole[] = ['read', 'write', 'admin']

export interface KeyRecord {
  id: string
  organization_id: string
  name: string | null
  /** Absent on keys issued before roles existed: those are `admin`. */
  role?: KeyRole
  /** SHA-256 hex of the whole key; the key itself is never stored. */
  hash: string
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
}

export interface ResourceRecord {
  id: string
  organization_id: string
  kind: ResourceKind
  name: string
  slug: string
  visibility: Visibility
  description: string | null
  created_at: string
  updated_at: string
  /** Highest version number handed out so far; numbers are never reused. */
  last_number: number
  /** Api only. */
  logo_url?: string | null
  /** Api only: the attached ruleset. */
  ruleset_id?: string | null
  /** Api: its own override or null. Ruleset: its default threshold. */
  blocking_severity?: BlockingSeverity | null
  /** Api and schema: the compatibility gate; null or absent is `none`. */
  compatibility?: CompatibilityPolicy | null
}

export interface LintSummary {
  ruleset_id: string
  ruleset_version_id: string
  /** Key into the lint results (not shown to clients). */
  ruleset_checksum: string
  counts: LintCounts
}

export interface VersionRecord {
  id: string
  kind: ResourceKind
  resource_id: string
  organization_id: string
  number: number
  checksum: string
  /** SHA-256 hex of the stored bytes: with checksum and format, names the blob. */
  digest: string
  source: VersionSource
  restored_from: string | null
  size: number
  format: DocumentFormat
  created_at: string
  /** Api only. */
  openapi?: string
  title?: string
  version?: string
  lint?: LintSummary | null
  /**
   * Api only: the document was uploaded as a Swagger 2.0 document or a Postman collection and is stored
   * as its OpenAPI 3 conversion. Absent (versions before conversions existed, and any other upload):
   * not converted.
   */
  converted_from?: ConvertedFrom | null
}

export interface Page<T> {
  items: T[]
  total: number
}

export interface PageRequest {
  offset: number
  limit: number
}

/** Which resources a list holds and in which order (the console's search box and sort). */
export interface ListFilter {
  /** Only names that contain this, ignoring case. */
  nameContains?: string
  /** Names Z to A (default A to Z; ties by id either way). */
  descending?: boolean
}

export type { Finding }
