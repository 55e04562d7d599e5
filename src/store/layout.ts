/**
 * Every key layout of the LMDB index, in one place. Keys are arrays encoded with lmdb's ordered-binary
 * encoding, so ranges over a prefix come back sorted element by element.
 */
import type { ResourceKind } from './records.js'

/** Named databases of the one LMDB environment, and what each maps. */
export const DATABASES = {
  /** organization id → OrganizationRecord */
  organizations: 'organizations',
  /** organization slug → organization id */
  organizationSlugs: 'organization-slugs',
  /** key id → KeyRecord */
  keys: 'keys',
  /** SHA-256 hex of a key → key id */
  keyHashes: 'key-hashes',
  /** resource id → ResourceRecord (APIs, schemas, rulesets; later sites and SDKs) */
  resources: 'resources',
  /** [org, kind, slug] → resource id */
  resourceSlugs: 'resource-slugs',
  /** [org, kind, visibility scope, name, id] → null: ordered pages ('all' and 'public' scopes) */
  resourceNames: 'resource-names',
  /** [org, kind, scope] → number of resources, for `total` */
  counts: 'counts',
  /** [resource id, number] → VersionRecord */
  versions: 'versions',
  /** version id → [resource id, number] */
  versionIds: 'version-ids',
  /** resource id → the current VersionRecord (a copy of the one under versions, read on every GET) */
  current: 'current',
  /** [ruleset id, api id] → null: which APIs use a ruleset */
  rulesetApis: 'ruleset-apis',
  /** [ruleset version checksum, document checksum] → Finding[] */
  lintResults: 'lint-results',
  /** [resource kind, checksum] → true once a version with that content was committed for that kind */
  validDocuments: 'valid-documents',
} as const

export type Scope = 'all' | 'public'

export const keys = {
  resourceSlug: (org: string, kind: ResourceKind, slug: string) => [org, kind, slug],
  resourceName: (org: string, kind: ResourceKind, scope: Scope, name: string, id: string) => [org, kind, scope, name, id],
  /** Bounds of all names of one (org, kind, scope), for getRange. */
  resourceNameRange: (org: string, kind: ResourceKind, scope: Scope) => ({
    start: [org, kind, scope],
    // '\uffff' sorts after every name a client can send (names are valid UTF-16 strings).
    end: [org, kind, scope, '\uffff'],
  }),
  count: (org: string, kind: ResourceKind, scope: Scope) => [org, kind, scope],
  version: (resourceId: string, number: number) => [resourceId, number],
  versionRange: (resourceId: string) => ({ start: [resourceId, 0], end: [resourceId, Number.MAX_SAFE_INTEGER] }),
  rulesetApi: (rulesetId: string, apiId: string) => [rulesetId, apiId],
  rulesetApiRange: (rulesetId: string) => ({ start: [rulesetId], end: [rulesetId, '\uffff'] }),
  lintResult: (rulesetChecksum: string, documentChecksum: string) => [rulesetChecksum, documentChecksum],
  validDocument: (kind: string, checksum: string) => [kind, checksum],
}
