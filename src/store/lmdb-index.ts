import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { open, type Database, type RootDatabase } from 'lmdb'
import { RegistryError, notFound } from '../errors.js'
import type { RegistryIndex, SlugMode, VersionBuilder } from './interfaces.js'
import { DATABASES, MIRROR_DATABASES, keys, type Scope } from './layout.js'
import { appendToJournal, type JournalDatabases } from '../storage/lmdb/journal-append.js'
import type { JournalChange } from '../storage/mirror-records.js'
import type {
  KeyRecord, ListFilter, OrganizationRecord, Page, PageRequest, ResourceKind, ResourceRecord, VersionRecord,
} from './records.js'

/** Keys of the index's databases: lmdb's ordered-binary encoding of strings, numbers and arrays of them. */
export type IndexKey = string | number | (string | number)[]
type Key = IndexKey
type Databases = { -readonly [name in keyof typeof DATABASES]: Database<any, Key> }

export const INDEX_FILE = 'registry.mdb'

/**
 * No database of the index caches decoded records. lmdb's `validated` cache did not see writes made by
 * another process (the CLI revoking a key, importing or restoring): a revoked key kept authenticating
 * and the server's next write put the cached record back. Every read goes to the memory map; writes
 * read the record they change inside their own transaction, where it is always the latest.
 */
/** The LMDB implementation of the index: one environment under `<storage>/index`. */
export class LmdbIndex implements RegistryIndex {
  /** The environment: the storage port's LMDB adapter shares it while features move onto the port. */
  readonly root: RootDatabase<any, Key>
  private readonly db: Databases
  /**
   * The git mirror's journal (the port's `mirror` section reads and writes the same databases): every
   * resource change below appends to it in its transaction, until resource deletion moves onto the port.
   */
  private readonly journal: JournalDatabases
  /** Called after a transaction that appended to the journal has committed (the mirror writer's nudge). */
  onJournal: (() => void) | undefined

  constructor(directory: string, options: { readOnly?: boolean } = {}) {
    mkdirSync(directory, { recursive: true })
    this.root = open<any, Key>({ path: join(directory, INDEX_FILE), maxDbs: 64, readOnly: options.readOnly })
    const db = {} as Databases
    for (const [field, name] of Object.entries(DATABASES)) {
      db[field as keyof Databases] = this.root.openDB<any, Key>({ name, cache: false })
    }
    this.db = db
    const { journal, meta, history } = this.databases(MIRROR_DATABASES)
    this.journal = { journal, meta, history }
  }

  /** A write transaction whose changes are journaled for the git mirror. */
  private journaled<T>(work: () => T): Promise<T> {
    return this.atomic(work).then((result) => {
      this.onJournal?.()
      return result
    })
  }

  // ---------------------------------------------------------------- feature stores

  /**
   * A named database of this environment for a feature's own store (sites, SDKs, the mirror journal…),
   * declared in `layout.ts` like the rest. Writes made inside `transaction` (or inside a callback the
   * index runs in its own transaction, such as a delete guard) commit together with it.
   */
  database<V = any>(name: string): Database<V, Key> {
    return this.root.openDB<V, Key>({ name, cache: false })
  }

  /** A feature store's named databases, one per entry of its block in `layout.ts`. */
  databases<T extends Record<string, string>>(names: T): { -readonly [field in keyof T]: Database<any, Key> } {
    const opened = {} as { -readonly [field in keyof T]: Database<any, Key> }
    for (const field of Object.keys(names) as (keyof T)[]) opened[field] = this.database(names[field])
    return opened
  }

  /** The LMDB index behind a registry index: feature stores need its named databases and transactions. */
  static require(index: RegistryIndex, feature: string): LmdbIndex {
    if (!(index instanceof LmdbIndex)) throw new Error(`${feature} need the LMDB index`)
    return index
  }

  /** One write transaction over the whole environment: the commit point of a feature's change. */
  transaction<T>(work: () => T): Promise<T> {
    return this.atomic(work)
  }

  /**
   * Every write of the index goes through here. lmdb's batched `transaction()` commits the writes a
   * callback made before it threw; the work runs in a child transaction so that a throw (a refused
   * change, a failed check) undoes all of its writes and the commit holds only whole changes.
   */
  private atomic<T>(work: () => T): Promise<T> {
    // (lmdb types childTransaction as a promise; awaiting flattens either form.)
    return this.root.transaction(() => this.root.childTransaction(work)) as Promise<unknown> as Promise<T>
  }

  // ---------------------------------------------------------------- organizations and keys

  listOrganizations(): OrganizationRecord[] {
    return [...this.db.organizations.getRange().map(({ value }) => value as OrganizationRecord)]
  }

  getOrganization(id: string): OrganizationRecord | undefined {
    return this.db.organizations.get(id)
  }

  getOrganizationBySlug(slug: string): OrganizationRecord | undefined {
    const id = this.db.organizationSlugs.get(slug)
    return id === undefined ? undefined : this.db.organizations.get(id)
  }

  async createOrganization(org: OrganizationRecord, firstKey: KeyRecord): Promise<void> {
    await this.atomic(() => {
      if (this.db.organizationSlugs.get(org.slug) !== undefined) {
        throw new RegistryError('conflict', `organization slug '${org.slug}' is already taken`)
      }
      this.db.organizations.put(org.id, org)
      this.db.organizationSlugs.put(org.slug, org.id)
      this.putKey(firstKey)
    })
  }

  private putKey(key: KeyRecord): void {
    this.db.keys.put(key.id, key)
    this.db.keyHashes.put(key.hash, key.id)
  }

  // ---------------------------------------------------------------- resources

  getResource(id: string): ResourceRecord | undefined {
    return this.db.resources.get(id)
  }

  getResourceBySlug(organizationId: string, kind: ResourceKind, slug: string): ResourceRecord | undefined {
    const id = this.db.resourceSlugs.get(keys.resourceSlug(organizationId, kind, slug))
    return id === undefined ? undefined : this.db.resources.get(id)
  }

  listResources(organizationId: string, kind: ResourceKind, page: PageRequest, publicOnly = false, filter: ListFilter = {}): Page<ResourceRecord> {
    const scope: Scope = publicOnly ? 'public' : 'all'
    const bounds = keys.resourceNameRange(organizationId, kind, scope)
    const range = filter.descending ? { start: bounds.end, end: bounds.start, reverse: true } : bounds
    const record = (key: unknown): ResourceRecord | undefined => this.db.resources.get((key as string[])[4])
    if (filter.nameContains) return this.searchNames(range, filter.nameContains, page, record)
    const total: number = this.db.counts.get(keys.count(organizationId, kind, scope)) ?? 0
    if (page.offset >= total) return { items: [], total }
    const items: ResourceRecord[] = []
    for (const key of this.db.resourceNames.getKeys({ ...range, offset: page.offset, limit: page.limit })) {
      const found = record(key)
      if (found) items.push(found)
    }
    return { items, total }
  }

  /**
   * A page of the names in `range` that contain `text`, ignoring case: one pass over the names'
   * index keys (no record is read but the page's), about a millisecond per 2,000 names.
   */
  private searchNames(range: object, text: string, page: PageRequest, record: (key: unknown) => ResourceRecord | undefined): Page<ResourceRecord> {
    const needle = text.toLowerCase()
    const items: ResourceRecord[] = []
    let total = 0
    for (const key of this.db.resourceNames.getKeys(range)) {
      if (!(key as string[])[3].toLowerCase().includes(needle)) continue
      if (total >= page.offset && items.length < page.limit) {
        const found = record(key)
        if (found) items.push(found)
      }
      total += 1
    }
    return { items, total }
  }

  async createResource(
    record: ResourceRecord,
    slugMode: SlugMode,
    firstVersion?: (resource: ResourceRecord) => VersionRecord,
    guard?: () => void,
  ): Promise<{ resource: ResourceRecord; version?: VersionRecord }> {
    return this.journaled(() => {
      guard?.()
      const slug = this.freeSlug(record.organization_id, record.kind, record.slug, slugMode)
      let resource: ResourceRecord = { ...record, slug }
      const version = firstVersion?.(resource)
      if (version) resource = { ...resource, last_number: version.number }
      this.db.resources.put(resource.id, resource)
      this.db.resourceSlugs.put(keys.resourceSlug(resource.organization_id, resource.kind, slug), resource.id)
      this.addToListings(resource)
      if (resource.kind === 'api' && resource.ruleset_id) {
        this.db.rulesetApis.put(keys.rulesetApi(resource.ruleset_id, resource.id), null)
      }
      if (version) this.putCurrentVersion(version)
      this.journalAppend(resource.organization_id, resource.created_at, { change: 'create', resource })
      if (version) this.journalAppend(resource.organization_id, version.created_at, { change: 'version', resource, version })
      return { resource, version }
    })
  }

  async updateResource(id: string, change: (current: ResourceRecord) => ResourceRecord): Promise<ResourceRecord> {
    return this.journaled(() => {
      const before: ResourceRecord | undefined = this.db.resources.get(id)
      if (!before) throw notFound()
      const after = change(before)
      if (after.slug !== before.slug) {
        this.freeSlug(after.organization_id, after.kind, after.slug, 'explicit')
        this.db.resourceSlugs.remove(keys.resourceSlug(before.organization_id, before.kind, before.slug))
        this.db.resourceSlugs.put(keys.resourceSlug(after.organization_id, after.kind, after.slug), id)
      }
      if (after.name !== before.name || after.visibility !== before.visibility) {
        this.removeFromListings(before)
        this.addToListings(after)
      }
      if (after.kind === 'api' && after.ruleset_id !== before.ruleset_id) {
        if (before.ruleset_id) this.db.rulesetApis.remove(keys.rulesetApi(before.ruleset_id, id))
        if (after.ruleset_id) this.db.rulesetApis.put(keys.rulesetApi(after.ruleset_id, id), null)
      }
      this.db.resources.put(id, after)
      this.journalAppend(after.organization_id, after.updated_at, { change: 'update', before, resource: after })
      return after
    })
  }

  countApisUsingRuleset(rulesetId: string): number {
    return this.db.rulesetApis.getCount(keys.rulesetApiRange(rulesetId))
  }

  /** Answers a free slug (must run inside a write transaction). */
  private freeSlug(org: string, kind: ResourceKind, wanted: string, mode: SlugMode): string {
    const taken = (slug: string) => this.db.resourceSlugs.get(keys.resourceSlug(org, kind, slug)) !== undefined
    if (!taken(wanted)) return wanted
    if (mode === 'explicit') throw new RegistryError('conflict', `slug '${wanted}' is already used by another ${kind}`)
    for (let n = 2; ; n++) {
      const suffix = `-${n}`
      const candidate = wanted.slice(0, 64 - suffix.length).replace(/-+$/, '') + suffix
      if (!taken(candidate)) return candidate
    }
  }

  private scopes(resource: ResourceRecord): Scope[] {
    return resource.visibility === 'public' ? ['all', 'public'] : ['all']
  }

  private addToListings(resource: ResourceRecord): void {
    for (const scope of this.scopes(resource)) {
      this.db.resourceNames.put(keys.resourceName(resource.organization_id, resource.kind, scope, resource.name, resource.id), null)
      this.adjustCount(keys.count(resource.organization_id, resource.kind, scope), 1)
    }
  }

  private removeFromListings(resource: ResourceRecord): void {
    for (const scope of this.scopes(resource)) {
      this.db.resourceNames.remove(keys.resourceName(resource.organization_id, resource.kind, scope, resource.name, resource.id))
      this.adjustCount(keys.count(resource.organization_id, resource.kind, scope), -1)
    }
  }

  private adjustCount(key: Key, delta: number): void {
    const next = (this.db.counts.get(key) ?? 0) + delta
    if (next > 0) this.db.counts.put(key, next)
    else this.db.counts.remove(key)
  }

  // ---------------------------------------------------------------- versions

  getCurrentVersion(resourceId: string): VersionRecord | undefined {
    // The current version's record itself, not its id: one read on every GET of a resource. (Storage
    // written before that change holds the id.)
    const current: VersionRecord | string | undefined = this.db.current.get(resourceId)
    return typeof current === 'string' ? this.getVersionById(current) : current
  }

  getVersion(resourceId: string, number: number): VersionRecord | undefined {
    return this.db.versions.get(keys.version(resourceId, number))
  }

  getVersionById(id: string): VersionRecord | undefined {
    const at = this.db.versionIds.get(id) as [string, number] | undefined
    return at === undefined ? undefined : this.db.versions.get(at)
  }

  listVersions(resourceId: string, page: PageRequest): Page<VersionRecord> {
    const resource: ResourceRecord | undefined = this.db.resources.get(resourceId)
    if (!resource) return { items: [], total: 0 }
    const range = keys.versionRange(resourceId)
    const total = this.db.versions.getCount(range)
    const items = [...this.db.versions
      .getRange({ start: range.end, end: range.start, reverse: true, offset: page.offset, limit: page.limit })
      .map(({ value }) => value as VersionRecord)]
    return { items, total }
  }

  async appendVersion(resourceId: string, build: VersionBuilder): Promise<{ version: VersionRecord; created: boolean }> {
    return this.journaled(() => {
      const resource: ResourceRecord | undefined = this.db.resources.get(resourceId)
      if (!resource) throw notFound()
      const outcome = build(resource, this.getCurrentVersion(resourceId), resource.last_number + 1)
      if ('unchanged' in outcome) return { version: outcome.unchanged, created: false }
      const { version } = outcome
      this.putCurrentVersion(version)
      const updated = { ...resource, last_number: version.number, updated_at: version.created_at }
      this.db.resources.put(resourceId, updated)
      this.journalAppend(resource.organization_id, version.created_at, { change: 'version', resource: updated, version })
      return { version, created: true }
    })
  }

  private putCurrentVersion(version: VersionRecord): void {
    this.db.versions.put(keys.version(version.resource_id, version.number), version)
    this.db.versionIds.put(version.id, [version.resource_id, version.number])
    this.db.organizationVersions.put(keys.organizationVersion(version.organization_id, version.id), [version.resource_id, version.number])
    this.db.current.put(version.resource_id, version)
    this.db.validDocuments.put(keys.validDocument(version.kind, version.checksum), true)
    this.addToTally(['versions-written', version.kind, version.source], 1)
  }

  private addToTally(key: Key, delta: number): void {
    this.db.tallies.put(key, (this.db.tallies.get(key) ?? 0) + delta)
  }

  /** Appends to the mirror's journal: must run inside this index's write transaction. */
  private journalAppend(organizationId: string, at: string, change: JournalChange): void {
    appendToJournal(this.journal, organizationId, at, change)
  }

  // ---------------------------------------------------------------- derived facts

  isKnownValid(kind: ResourceKind, checksum: string): boolean {
    return this.db.validDocuments.get(keys.validDocument(kind, checksum)) === true
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * A compacted copy: live pages only. Free pages can still hold what was overwritten (the plaintext
   * of a secret sealed since, say), and a backup must not carry it.
   */
  async backup(directory: string): Promise<void> {
    mkdirSync(directory, { recursive: true })
    await this.root.backup(join(directory, INDEX_FILE), true)
  }

  async close(): Promise<void> {
    await this.root.close()
  }
}
