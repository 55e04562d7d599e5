/**
 * Every named database and key layout of the LMDB adapter's environment, in one place: those of an
 * existing `./storage`, which the adapter reads as they are. Keys are arrays encoded with lmdb's
 * ordered-binary encoding, so ranges over a prefix come back sorted element by element.
 */
import type { ResourceKind } from '../records.js'

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
  /**
   * Storage-wide tallies that every process (server and CLI) keeps in its own writes, for /metrics:
   * ['versions-written', kind, source] → versions committed; ['blobs', 'count' | 'bytes'] → blobs
   * created minus blobs removed, and their bytes, since the tally began
   */
  tallies: 'tallies',
  /** [diff method, from checksum, to checksum] → DiffResult: the diff of two documents, computed once */
  diffResults: 'diff-results',
  /**
   * [org, version id] → [resource id, number]: an organization's versions of every resource in ULID
   * (time) order, for "latest versions" (written since the console; older versions are not listed).
   */
  organizationVersions: 'organization-versions',
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
  diffResult: (method: string, fromChecksum: string, toChecksum: string) => [method, fromChecksum, toChecksum],
  organizationVersion: (org: string, versionId: string) => [org, versionId],
  organizationVersionRange: (org: string) => ({ start: [org, ''], end: [org, '\uffff'] }),
}

// ---------------------------------------------------------------- SDKs and builds (issue 7)

/** Named databases of the SDK feature (the storage port's LMDB adapter, `src/storage/lmdb/sdks.ts`). */
export const SDK_DATABASES = {
  /** sdk id → SdkRecord */
  sdks: 'sdks',
  /** [org, sdk id] → null: an organization's SDKs, ULID order (newest last) */
  sdkOrder: 'sdk-order',
  /** [org, slug] → sdk id */
  sdkSlugs: 'sdk-slugs',
  /** [api id, sdk id] → null: which SDKs attach an API (delete guard) */
  sdkApis: 'sdk-apis',
  /** [sdk id, target] → OutputRepositoryRecord (holds the token; never served) */
  sdkRepositories: 'sdk-repositories',
  /** build id → BuildRecord */
  builds: 'builds',
  /** [org, build id] → null: an organization's builds, ULID order */
  buildOrder: 'build-order',
  /** [sdk id, build id] → null: an SDK's builds, ULID order */
  sdkBuilds: 'sdk-builds',
  /** build id → null: builds queued or running, oldest first (the persistent queue) */
  buildQueue: 'build-queue',
  /** build id → string: the build's log (bounded) */
  buildLogs: 'build-logs',
  /** build id → Buffer: the generated files as a deterministic .tar.gz */
  buildArtifacts: 'build-artifacts',
} as const

export const sdkKeys = {
  sdkOrder: (org: string, id: string) => [org, id],
  sdkOrderRange: (org: string) => ({ start: [org, ''], end: [org, '\uffff'] }),
  sdkSlug: (org: string, slug: string) => [org, slug],
  sdkApi: (apiId: string, sdkId: string) => [apiId, sdkId],
  sdkApiRange: (apiId: string) => ({ start: [apiId, ''], end: [apiId, '\uffff'] }),
  sdkRepository: (sdkId: string, target: string) => [sdkId, target],
  sdkRepositoryRange: (sdkId: string) => ({ start: [sdkId, ''], end: [sdkId, '\uffff'] }),
  buildOrder: (org: string, id: string) => [org, id],
  buildOrderRange: (org: string) => ({ start: [org, ''], end: [org, '\uffff'] }),
  sdkBuild: (sdkId: string, buildId: string) => [sdkId, buildId],
  sdkBuildRange: (sdkId: string) => ({ start: [sdkId, ''], end: [sdkId, '\uffff'] }),
}

// ---------------------------------------------------------------- git mirror (issue 5)

/** The mirror's databases: a journal of changes the git writer applies, and per-organization state. */
export const MIRROR_DATABASES = {
  /** sequence number → JournalEntry (removed once applied to the organization's repository) */
  journal: 'mirror-journal',
  /** 'seq' → last sequence number handed out (numbers are never reused) */
  meta: 'mirror-meta',
  /** organization id → MirrorHead: the commit `main` points at, written with the entries it applied */
  heads: 'mirror-heads',
  /** organization id → MirrorRemote: the push mirror (its token never leaves the store) */
  remotes: 'mirror-remotes',
  /**
   * [organization id, sequence number] → HistoryEntry: every change ever journaled, kept after it is
   * applied (renames, metadata changes and deletions are nowhere else), so that a rebuild writes the
   * history a continuously running mirror wrote
   */
  history: 'mirror-history',
} as const

// ---------------------------------------------------------------- sites (issue 6)

/** Named databases of the sites feature (the storage port's LMDB adapter, `src/storage/lmdb/sites.ts`). */
export const SITE_DATABASES = {
  /** site id → SiteRecord */
  sites: 'sites',
  /** [org, slug] → site id */
  siteSlugs: 'site-slugs',
  /** [org, name, id] → null: an organization's sites by name (ties by id), for pages */
  siteNames: 'site-names',
  /** org → number of sites, for `total` */
  siteCounts: 'site-counts',
  /** domain (lowercase host name) → site id: one owner per domain across the whole registry */
  siteDomains: 'site-domains',
  /** 'stamp' → a number raised at the commit of each change of `site-domains` (SiteReader.domainsStamp) */
  siteDomainStamp: 'site-domain-stamp',
  /** [api id, site id] → null: which sites list an API (an API's delete drops it from them) */
  siteApis: 'site-apis',
  /** [site id, guide slug] → GuideRecord */
  siteGuides: 'site-guides',
  /** [site id, position, guide slug] → null: a site's guides in page order */
  siteGuideOrder: 'site-guide-order',
} as const

export const siteKeys = {
  siteSlug: (org: string, slug: string) => [org, slug],
  siteName: (org: string, name: string, id: string) => [org, name, id],
  siteNameRange: (org: string) => ({ start: [org], end: [org, '\uffff'] }),
  siteApi: (apiId: string, siteId: string) => [apiId, siteId],
  siteApiRange: (apiId: string) => ({ start: [apiId], end: [apiId, '\uffff'] }),
  guide: (siteId: string, slug: string) => [siteId, slug],
  guideRange: (siteId: string) => ({ start: [siteId], end: [siteId, '\uffff'] }),
  guideOrder: (siteId: string, position: number, slug: string) => [siteId, position, slug],
  guideOrderRange: (siteId: string) => ({ start: [siteId], end: [siteId, Number.MAX_SAFE_INTEGER] }),
}

// ---------------------------------------------------------------- repository sync (issue 5)

/** Named databases of repository sync and webhooks (the storage port's LMDB adapter, `src/storage/lmdb/repositories.ts`). */
export const REPOSITORY_DATABASES = {
  /** api id → RepositoryConnectionRecord (holds the token and webhook secret; never served) */
  repositoryConnections: 'repository-connections',
  /** [normalized repository url, branch, api id] → null: the APIs a webhook push for that repository syncs */
  repositoryBranches: 'repository-branches',
  /** [provider, delivery id] → time first seen (ms): webhook deliveries already handled */
  webhookDeliveries: 'webhook-deliveries',
  /** [time first seen (ms), provider, delivery id] → null: oldest first, so the deliveries stay bounded */
  webhookDeliveryOrder: 'webhook-delivery-order',
  /** api id → SyncLeaseRecord: the sync of the connection running (on whose lease) and the one waiting */
  syncLeases: 'repository-sync-leases',
  /** [due (RFC 3339), api id] → null: the sync leases by when a runner may claim them (features/repositories.ts `syncLeaseDue`) */
  syncLeaseDue: 'repository-sync-due',
} as const

export const repositoryKeys = {
  repositoryBranch: (url: string, branch: string, apiId: string) => [url, branch, apiId],
  /** Every branch and API connected to one normalized repository url. */
  repositoryRange: (url: string) => ({ start: [url], end: [url, '\uffff'] }),
  webhookDelivery: (provider: string, id: string) => [provider, id],
  webhookDeliveryOrder: (at: number, provider: string, id: string) => [at, provider, id],
  syncLeaseDue: (due: string, apiId: string) => [due, apiId],
  /** The sync leases due at or before `at`, oldest first. */
  syncLeaseDueBy: (at: string) => ({ start: [''], end: [at, '\uffff'] }),
}

// ---------------------------------------------------------------- console sessions (issue 17)

/** Named databases of console sign-in sessions (the storage port's LMDB adapter, `src/storage/lmdb/sessions.ts`). */
export const SESSION_DATABASES = {
  /** SHA-256 hex of a session id → SessionRecord (the id itself lives only in the browser's cookie) */
  sessions: 'sessions',
  /** [expires_at, session hash] → null: oldest expiry first, so expired sessions are swept in order */
  sessionExpiry: 'session-expiry',
} as const

export const sessionKeys = {
  expiry: (expiresAt: string, hash: string) => [expiresAt, hash],
  /** Every session that expired at or before `at`. */
  expiredRange: (at: string) => ({ start: [''], end: [at, '\uffff'] }),
}

// ---------------------------------------------------------------- search (issue 17)

/** Named databases of search (the storage port's LMDB adapter, `src/storage/lmdb/search.ts`). */
export const SEARCH_DATABASES = {
  /** document checksum → SearchTerms: what search finds in a document, read once per document */
  searchTerms: 'search-terms',
} as const
