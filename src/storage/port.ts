/**
 * The storage port: everything the domain stores, behind async repositories, with two adapters (LMDB
 * in `lmdb/`, PostgreSQL in `postgres/`). Design: /docs/storage.md. Every feature stores through it;
 * nothing outside src/storage opens LMDB, PostgreSQL or the blob folder.
 */
import type {
  BlobStore, DiffResult, Finding, JournalChange, JournalEntry, KeyRecord, ListFilter, OrganizationRecord, Page, PageRequest, ResourceKind,
  ResourceRecord, SessionRecord, VersionRecord, WebhookDeliveryRecord, WebhookEndpointRecord, WebhookEventRecord,
  HistoryEntry, HistoryPosition, MirrorHead, MirrorRemote, MirrorVersion,
} from './records.js'
import type { RepositoryReader, RepositoryStore } from './features/repositories.js'
import type { SdkReader, SdkStore } from './features/sdks.js'
import type { SiteReader, SiteStore } from './features/sites.js'
import type { TallyReader, TallyStore } from './features/tallies.js'
import type { SearchReader, SearchStore } from './features/search.js'
import type { SecretReader, SecretStore } from './features/secrets.js'

export type { RepositoryReader, RepositoryStore, SdkReader, SdkStore, SiteReader, SiteStore, TallyReader, TallyStore }
export type { SearchReader, SearchStore }
export type { SecretReader, SecretStore }

export interface Storage {
  readonly kind: 'lmdb' | 'postgres'
  /** Content-addressed and immutable: written before the transaction that refers to them. */
  readonly blobs: BlobStore
  /** Reads outside a transaction: the latest committed state. */
  readonly read: ReadStores
  /**
   * Runs `work` as one serializable transaction and commits it. `work` may run more than once (a
   * conflict with a concurrent writer, in this process or another, runs it again, a bounded number of
   * times, then 409 `conflict`): it must do nothing but storage calls on `tx` and pure computation; no
   * I/O, no metrics, no side effects. A throw rolls everything back and is rethrown.
   *
   * Within this process, transactions of one `lane` run one at a time and lanes run side by side
   * (lanes.ts): the domain names the organization whose records the transaction writes, so that one
   * organization's burst neither conflicts with itself nor delays another's. Without a lane (work
   * shared by organizations: caches, tallies), the one shared lane.
   */
  transaction<T>(work: (tx: Stores) => Promise<T>, lane?: string): Promise<T>
  /** Called after a commit that appended to the mirror journal (the mirror writer's nudge). */
  onCommit(listener: (what: { journal: boolean }) => void): void
  /**
   * The election of the git mirror's one writer among every process serving this storage: a lock file
   * in the storage directory on LMDB, a session-level advisory lock on PostgreSQL (several replicas).
   */
  writerElection(): Election
  close(): Promise<void>
  /**
   * Writes a consistent copy of the stored records to `directory` while writers go on (`registry
   * backup`; blobs are copied by the caller). Only the LMDB adapter has it: a PostgreSQL registry is
   * backed up with `pg_dump` (docs/storage.md).
   */
  snapshot?(directory: string): Promise<void>
}

/**
 * One holder at a time among the processes on one storage. Whoever holds it keeps it until `release`
 * or until its process (or, on PostgreSQL, its session) dies; the others take it over then.
 */
export interface Election {
  /** Holds it already, or takes it when free: false while another process holds it. */
  acquire(): Promise<boolean>
  /** Held as far as this process knows (a lost session clears it). */
  readonly held: boolean
  release(): Promise<void>
}

/** The repositories as seen inside a transaction: reads see the transaction's own writes. */
export interface Stores extends ReadStores {
  readonly organizations: OrganizationStore
  readonly keys: KeyStore
  readonly resources: ResourceStore
  readonly versions: VersionStore
  readonly mirror: MirrorJournalStore
  readonly webhooks: WebhookStore
  readonly results: ResultStore
  readonly sessions: SessionStore
  readonly sites: SiteStore
  readonly sdks: SdkStore
  readonly repositories: RepositoryStore
  readonly tallies: TallyStore
  readonly search: SearchStore
  readonly secrets: SecretStore
}

export interface ReadStores {
  readonly organizations: OrganizationReader
  readonly keys: KeyReader
  readonly resources: ResourceReader
  readonly versions: VersionReader
  readonly mirror: MirrorJournalReader
  readonly webhooks: WebhookReader
  readonly results: ResultReader
  readonly sessions: SessionReader
  /** Sites and guides, SDKs and builds, repository connections: features/ (each section in its own file). */
  readonly sites: SiteReader
  readonly sdks: SdkReader
  readonly repositories: RepositoryReader
  /** Counts for /metrics and verify (features/tallies.ts). */
  readonly tallies: TallyReader
  /** What search finds in each document, by checksum (features/search.ts). */
  readonly search: SearchReader
  /** The sealed secrets kept in the features' records, for their inventory and rotation (features/secrets.ts). */
  readonly secrets: SecretReader
}

// ---------------------------------------------------------------- organizations and keys

export interface OrganizationReader {
  get(id: string): Promise<OrganizationRecord | undefined>
  bySlug(slug: string): Promise<OrganizationRecord | undefined>
  /** Every organization, in id order. */
  list(): Promise<OrganizationRecord[]>
}

export interface OrganizationStore extends OrganizationReader {
  /** Inserts or replaces by id; 409 `conflict` when another organization has the slug. */
  put(organization: OrganizationRecord): Promise<void>
}

export interface KeyReader {
  get(id: string): Promise<KeyRecord | undefined>
  /** The key whose SHA-256 hex is `hash`. */
  byHash(hash: string): Promise<KeyRecord | undefined>
  /**
   * `byHash` and the key's organization, read together: every request with a key makes this read, and
   * on PostgreSQL it is then one round trip instead of two. `organization` is undefined only if it is gone.
   * With `along`, the resource a read request names may come in the same read (`resource`): set when
   * the key's organization has it; absent when it has not, or when the adapter leaves it to the caller
   * (LMDB, whose reads are local), who then reads it as usual.
   */
  byHashWithOrganization(hash: string, along?: ResourceLookup): Promise<KeyWithOrganization | undefined>
  /** One organization's keys, in id order (oldest first: ids are ULIDs). */
  list(organizationId: string): Promise<KeyRecord[]>
}

export interface KeyWithOrganization {
  key: KeyRecord
  organization: OrganizationRecord | undefined
  /** The resource of `along`, in the key's organization (see `byHashWithOrganization`). */
  resource?: ResourceRecord
}

/** A resource of the key's organization, of `kind`, by its id or its slug. */
export interface ResourceLookup {
  kind: ResourceKind
  by: 'id' | 'slug'
  ref: string
}

export interface KeyStore extends KeyReader {
  /** Inserts or replaces by id; 404 when its organization does not exist, 409 when another key has the hash. */
  put(key: KeyRecord): Promise<void>
}

// ---------------------------------------------------------------- resources and versions

export interface ResourceReader {
  get(id: string): Promise<ResourceRecord | undefined>
  bySlug(organizationId: string, kind: ResourceKind, slug: string): Promise<ResourceRecord | undefined>
  /**
   * A page by name (ties by id), with the total; `publicOnly` lists public resources only;
   * `filter.nameContains` keeps the names that contain it ignoring case (and `total` counts those),
   * `filter.descending` lists Z to A (ties by id descending).
   */
  list(organizationId: string, kind: ResourceKind, page: PageRequest, publicOnly?: boolean, filter?: ListFilter): Promise<Page<ResourceRecord>>
  countApisUsingRuleset(rulesetId: string): Promise<number>
}

export interface ResourceStore extends ResourceReader {
  /**
   * Inserts a new resource (`last_number` 0: versions come through `versions.append`); 409 `conflict`
   * when its slug is taken in its organization and kind, 404 when the organization does not exist.
   */
  create(resource: ResourceRecord): Promise<void>
  /** Replaces the stored record (name, slug, visibility, settings); 404 when gone, 409 on a taken slug. */
  update(resource: ResourceRecord): Promise<void>
  /** Removes a resource and all its versions; answers what was removed, undefined when it was not there. */
  remove(id: string): Promise<ResourceRecord | undefined>
}

export interface VersionReader {
  current(resourceId: string): Promise<VersionRecord | undefined>
  /**
   * The current version as this record of its resource names it: number `last_number`, undefined
   * before the first. Versions never change, so an adapter may keep them (PostgreSQL does: a resource's
   * view then costs no round trip for it), and may still answer one of a resource removed since.
   */
  currentOf(resource: ResourceRecord): Promise<VersionRecord | undefined>
  get(resourceId: string, number: number): Promise<VersionRecord | undefined>
  byId(id: string): Promise<VersionRecord | undefined>
  /** Newest first, with the total. */
  list(resourceId: string, page: PageRequest): Promise<Page<VersionRecord>>
  /** True once a version with this checksum was committed for a resource of this kind (kept after deletes). */
  isKnownValid(kind: ResourceKind, checksum: string): Promise<boolean>
  /** The organization's latest versions across its resources, newest first, at most `limit` (deleted resources' left out). */
  recent(organizationId: string, limit: number): Promise<VersionRecord[]>
  /**
   * Every stored version, a page at a time (verify and gc read them all): by resource id then number,
   * at most `limit` after the version `after` names (from the start without it). A page shorter than
   * `limit` is the last.
   */
  scan(after: Pick<VersionRecord, 'resource_id' | 'number'> | undefined, limit: number): Promise<VersionRecord[]>
}

export interface VersionStore extends VersionReader {
  /**
   * Appends its resource's next version and makes it current. Its number must be the resource's
   * `last_number + 1` (409 `conflict` otherwise), so numbers are gapless and never reused; answers the
   * resource as updated (`last_number`, `updated_at` = the version's `created_at`). 404 when the
   * resource does not exist.
   */
  append(version: VersionRecord): Promise<ResourceRecord>
}

// ---------------------------------------------------------------- the git mirror: journal, history, heads, remotes

/**
 * The git mirror's records (issue 5). The journal holds the changes the mirror writer has not applied
 * yet; the history keeps every change ever journaled (a `rebuild` request excepted), applied or not,
 * since renames, metadata changes and deleted resources are nowhere else; a head is the commit an
 * organization's `main` points at; a remote is where it is pushed. The git repositories themselves are
 * files derived from these records (src/git/git-repository.ts). Search follows an organization's
 * changes through its history too (`history`, `lastSeq`).
 */
export interface MirrorJournalReader {
  /**
   * Entries not yet applied, in sequence order, at most `limit`, those after sequence number `afterSeq`
   * when given (a page after the last one read). (On PostgreSQL sequence order is not commit order
   * across concurrent transactions: see docs/storage.md before a writer runs there.)
   */
  pending(limit: number, afterSeq?: number): Promise<JournalEntry[]>
  /** One organization's entries not yet applied, in sequence order (read with its history in one transaction by a rebuild). */
  pendingOf(organizationId: string): Promise<JournalEntry[]>
  /** One organization's history after sequence number `afterSeq` (default: all of it), in sequence order. */
  history(organizationId: string, afterSeq?: number): Promise<HistoryEntry[]>
  /** The sequence number of the organization's latest history entry; 0 before any. */
  lastSeq(organizationId: string): Promise<number>
  /**
   * The versions the history holds (deleted resources' too: their blobs are kept for a rebuild), by
   * organization then sequence number, at most `limit` after `after`; `next` is where the page stopped
   * when it is full (the following page may be empty), undefined when the history ends in it.
   */
  historyVersions(after: HistoryPosition | undefined, limit: number): Promise<{ versions: MirrorVersion[]; next: HistoryPosition | undefined }>
  head(organizationId: string): Promise<MirrorHead | undefined>
  remote(organizationId: string): Promise<MirrorRemote | undefined>
  /** The organizations with a push remote, in id order. */
  remoteOrganizations(): Promise<string[]>
}

export interface MirrorJournalStore extends MirrorJournalReader {
  /**
   * Appends a change to the journal (and the mirror's history). Commutative: the adapter assigns the
   * sequence number when the transaction commits, so concurrent appends never conflict.
   */
  append(organizationId: string, at: string, change: JournalChange): Promise<void>
  /**
   * The mirror writer's commit point: removes the entries it applied (numbers no longer pending are
   * ignored) and records the head they produced; 404 when the organization does not exist.
   */
  markApplied(organizationId: string, seqs: number[], head: MirrorHead): Promise<void>
  /** Removes entries without applying them (superseded by a rebuild); numbers no longer pending are ignored. */
  discard(seqs: number[]): Promise<void>
  /**
   * Writes an organization's history and pending journal entries as another storage numbered them
   * (`registry migrate`: a rebuild then gives the same commits, and what was pending is still pending),
   * each under its own number, and moves the sequence past the highest so later appends come after
   * them. 409 `conflict` when an entry with one of those numbers is there; 404 when the organization
   * does not exist. Journal entries must be the organization's.
   */
  copyIn(organizationId: string, history: HistoryEntry[], journal: JournalEntry[]): Promise<void>
  /** Inserts or replaces the organization's push remote; 404 when the organization does not exist. */
  putRemote(organizationId: string, remote: MirrorRemote): Promise<void>
  /** False when there was none. */
  removeRemote(organizationId: string): Promise<boolean>
}

// ---------------------------------------------------------------- outbound events (webhooks)

export interface WebhookReader {
  endpoint(id: string): Promise<WebhookEndpointRecord | undefined>
  /** One organization's endpoints, in id order (oldest first). */
  endpoints(organizationId: string): Promise<WebhookEndpointRecord[]>
  event(id: string): Promise<WebhookEventRecord | undefined>
  delivery(id: string): Promise<WebhookDeliveryRecord | undefined>
  /** One endpoint's deliveries, newest first, with the total. */
  deliveries(endpointId: string, page: PageRequest): Promise<Page<WebhookDeliveryRecord>>
  /** Pending deliveries whose `next_attempt_at` is `at` or earlier, soonest first, at most `limit`. */
  due(at: string, limit: number): Promise<WebhookDeliveryRecord[]>
}

export interface WebhookStore extends WebhookReader {
  /** Inserts or replaces by id; 404 when its organization does not exist. */
  putEndpoint(endpoint: WebhookEndpointRecord): Promise<void>
  /** Removes an endpoint and its deliveries; false when it was not there. */
  removeEndpoint(id: string): Promise<boolean>
  /** Inserts an event (the outbox); 404 when its organization does not exist. */
  putEvent(event: WebhookEventRecord): Promise<void>
  /** Inserts or replaces a delivery (and where it is due); 404 when its endpoint or event does not exist. */
  putDelivery(delivery: WebhookDeliveryRecord): Promise<void>
}

// ---------------------------------------------------------------- results computed from content

/**
 * Lint findings and diffs, each a pure function of the content it was computed from (a ruleset version's
 * and a document's checksums; a diff method's version and two documents' checksums): kept once computed,
 * never changed, so a put is a blind write that conflicts with nothing.
 */
export interface ResultReader {
  lint(rulesetChecksum: string, documentChecksum: string): Promise<Finding[] | undefined>
  diff(method: string, fromChecksum: string, toChecksum: string): Promise<DiffResult | undefined>
}

export interface ResultStore extends ResultReader {
  putLint(rulesetChecksum: string, documentChecksum: string, findings: Finding[]): Promise<void>
  putDiff(method: string, fromChecksum: string, toChecksum: string, result: DiffResult): Promise<void>
}

// ---------------------------------------------------------------- console sessions

/** Sessions by the SHA-256 hex of their id (the id itself is only in the browser's cookie). */
export interface SessionReader {
  get(hash: string): Promise<SessionRecord | undefined>
  /** The hashes of up to `limit` sessions that expired at or before `at`, oldest expiry first. */
  expired(at: string, limit: number): Promise<string[]>
}

export interface SessionStore extends SessionReader {
  /** Inserts or replaces a session. */
  put(hash: string, session: SessionRecord): Promise<void>
  /** False when there was no such session. */
  remove(hash: string): Promise<boolean>
}
