import { RegistryError, notFound } from '../../errors.js'
import { sdkKeys } from './layout.js'
import { claimable, requireSameBuild, sdkWithBuildAdded, type BuildScope } from '../features/sdks.js'
import type { SdkStore } from '../port.js'
import type { BuildRecord, OutputRepositoryRecord, Page, PageRequest, ResourceRecord, SdkRecord, SdkTarget } from '../records.js'
import type { LmdbEnvironment, SdkDatabases } from './databases.js'
import type { Key, LmdbAccess } from './transaction-view.js'

/**
 * The sdks section on today's LMDB databases of the feature (`environment.sdks`, `SDK_DATABASES` in
 * layout.ts) and their keys, read and written as src/store/sdk-store.ts did: an existing
 * `./storage` is read as it is. No counters: totals are counts of the ordering databases.
 */
export class LmdbSdks implements SdkStore {
  private readonly db: SdkDatabases

  constructor(readonly access: LmdbAccess, readonly environment: LmdbEnvironment) {
    this.db = environment.sdks
  }

  // ---------------------------------------------------------------- SDKs

  async get(id: string): Promise<SdkRecord | undefined> {
    return this.access.get(this.db.sdks, id)
  }

  async bySlug(organizationId: string, slug: string): Promise<SdkRecord | undefined> {
    const id: string | undefined = this.access.get(this.db.sdkSlugs, sdkKeys.sdkSlug(organizationId, slug))
    return id === undefined ? undefined : this.get(id)
  }

  async list(organizationId: string, page: PageRequest): Promise<Page<SdkRecord>> {
    return this.page(this.db.sdkOrder, sdkKeys.sdkOrderRange(organizationId), page, (id) => this.access.get(this.db.sdks, id))
  }

  async sdksUsingApi(apiId: string): Promise<string[]> {
    return this.access.range(this.db.sdkApis, sdkKeys.sdkApiRange(apiId)).map(({ key }) => (key as string[])[1])
  }

  async create(sdk: SdkRecord): Promise<void> {
    if (sdk.last_build_number !== 0) throw new Error('an SDK is created without builds: add them')
    if (this.access.get(this.environment.index.organizations, sdk.organization_id) === undefined) throw notFound('organization')
    if (this.access.get(this.db.sdks, sdk.id) !== undefined) throw new RegistryError('conflict', `SDK ${sdk.id} exists`)
    this.checkApis(sdk)
    this.claimSlug(sdk)
    this.write(sdk)
    this.access.put(this.db.sdkOrder, sdkKeys.sdkOrder(sdk.organization_id, sdk.id), null)
  }

  async update(after: SdkRecord): Promise<void> {
    const before = await this.get(after.id)
    if (!before) throw notFound('sdk')
    if (after.organization_id !== before.organization_id) throw new Error('an SDK does not change organization')
    if (after.last_build_number !== before.last_build_number) throw new Error('last_build_number changes only through addBuild')
    this.checkApis(after)
    if (after.slug !== before.slug) {
      this.claimSlug(after)
      this.access.remove(this.db.sdkSlugs, sdkKeys.sdkSlug(before.organization_id, before.slug))
    }
    for (const api of before.apis) this.access.remove(this.db.sdkApis, sdkKeys.sdkApi(api.api_id, before.id))
    this.write(after)
  }

  async remove(id: string): Promise<SdkRecord | undefined> {
    const sdk = await this.get(id)
    if (!sdk) return undefined
    this.access.remove(this.db.sdkSlugs, sdkKeys.sdkSlug(sdk.organization_id, sdk.slug))
    this.access.remove(this.db.sdkOrder, sdkKeys.sdkOrder(sdk.organization_id, sdk.id))
    for (const api of sdk.apis) this.access.remove(this.db.sdkApis, sdkKeys.sdkApi(api.api_id, sdk.id))
    for (const { key } of this.access.range(this.db.sdkRepositories, sdkKeys.sdkRepositoryRange(id))) this.access.remove(this.db.sdkRepositories, key)
    for (const { key } of this.access.range(this.db.sdkBuilds, sdkKeys.sdkBuildRange(id))) {
      const buildId = (key as string[])[1]
      this.access.remove(this.db.sdkBuilds, key)
      this.access.remove(this.db.buildOrder, sdkKeys.buildOrder(sdk.organization_id, buildId))
      this.access.remove(this.db.buildQueue, buildId)
      this.access.remove(this.db.buildLogs, buildId)
      this.access.remove(this.db.buildArtifacts, buildId)
      this.access.remove(this.db.builds, buildId)
    }
    this.access.remove(this.db.sdks, id)
    return sdk
  }

  /** The record, and the reverse index of the APIs it attaches (the delete guard's). */
  private write(sdk: SdkRecord): void {
    this.access.put(this.db.sdks, sdk.id, sdk)
    this.access.put(this.db.sdkSlugs, sdkKeys.sdkSlug(sdk.organization_id, sdk.slug), sdk.id)
    for (const api of sdk.apis) this.access.put(this.db.sdkApis, sdkKeys.sdkApi(api.api_id, sdk.id), null)
  }

  private claimSlug(sdk: SdkRecord): void {
    const owner: string | undefined = this.access.get(this.db.sdkSlugs, sdkKeys.sdkSlug(sdk.organization_id, sdk.slug))
    if (owner !== undefined && owner !== sdk.id) throw new RegistryError('conflict', `slug '${sdk.slug}' is already used by another SDK`)
  }

  /** Attached APIs are APIs of the SDK's organization, pinned versions versions of them. */
  private checkApis(sdk: SdkRecord): void {
    const { index } = this.environment
    for (const attachment of sdk.apis) {
      const api: ResourceRecord | undefined = this.access.get(index.resources, attachment.api_id)
      if (!api || api.kind !== 'api' || api.organization_id !== sdk.organization_id) throw notFound('API')
      if (attachment.version_id === null) continue
      const at: [string, number] | undefined = this.access.get(index.versionIds, attachment.version_id)
      if (at?.[0] !== api.id) throw notFound('version')
    }
  }

  // ---------------------------------------------------------------- output repositories

  async repository(sdkId: string, target: SdkTarget): Promise<OutputRepositoryRecord | undefined> {
    return this.access.get(this.db.sdkRepositories, sdkKeys.sdkRepository(sdkId, target))
  }

  async repositories(sdkId: string): Promise<OutputRepositoryRecord[]> {
    return this.access.range<OutputRepositoryRecord>(this.db.sdkRepositories, sdkKeys.sdkRepositoryRange(sdkId)).map(({ value }) => value)
  }

  async putRepository(repository: OutputRepositoryRecord): Promise<void> {
    if (!(await this.get(repository.sdk_id))) throw notFound('sdk')
    this.access.put(this.db.sdkRepositories, sdkKeys.sdkRepository(repository.sdk_id, repository.target), repository)
  }

  async removeRepository(sdkId: string, target: SdkTarget): Promise<boolean> {
    if (!(await this.repository(sdkId, target))) return false
    this.access.remove(this.db.sdkRepositories, sdkKeys.sdkRepository(sdkId, target))
    return true
  }

  // ---------------------------------------------------------------- builds, the queue, logs and artifacts

  async build(id: string): Promise<BuildRecord | undefined> {
    return this.access.get(this.db.builds, id)
  }

  async builds(scope: BuildScope, page: PageRequest): Promise<Page<BuildRecord>> {
    const [db, range] = 'organizationId' in scope
      ? [this.db.buildOrder, sdkKeys.buildOrderRange(scope.organizationId)]
      : [this.db.sdkBuilds, sdkKeys.sdkBuildRange(scope.sdkId)]
    return this.page(db, range, page, (id) => this.access.get(this.db.builds, id))
  }

  async queue(): Promise<BuildRecord[]> {
    const builds: BuildRecord[] = []
    for (const { key } of this.access.range(this.db.buildQueue)) {
      const build = await this.build(key as string)
      if (build) builds.push(build)
    }
    return builds
  }

  async nextQueued(at: string): Promise<BuildRecord | undefined> {
    // The queue holds the running build(s) too: the first that is claimable. Reading the queue in
    // pages keeps a transaction's recorded reads short when it is long.
    for (let offset = 0; ; offset += QUEUE_PAGE) {
      const page = this.access.range(this.db.buildQueue, { offset, limit: QUEUE_PAGE })
      for (const { key } of page) {
        const build = await this.build(key as string)
        if (build && claimable(build, at)) return build
      }
      if (page.length < QUEUE_PAGE) return undefined
    }
  }

  async log(buildId: string): Promise<string | undefined> {
    return this.access.get(this.db.buildLogs, buildId)
  }

  async artifact(buildId: string): Promise<Buffer | undefined> {
    const value: Uint8Array | undefined = this.access.get(this.db.buildArtifacts, buildId)
    return value === undefined ? undefined : Buffer.from(value)
  }

  async addBuild(build: BuildRecord): Promise<SdkRecord> {
    const updated = await sdkWithBuildAdded(await this.get(build.sdk_id), build, (id) => this.build(id))
    this.access.put(this.db.sdks, updated.id, updated)
    this.access.put(this.db.builds, build.id, build)
    this.access.put(this.db.buildOrder, sdkKeys.buildOrder(build.organization_id, build.id), null)
    this.access.put(this.db.sdkBuilds, sdkKeys.sdkBuild(build.sdk_id, build.id), null)
    this.enqueue(build)
    return updated
  }

  async putBuild(build: BuildRecord): Promise<void> {
    requireSameBuild(await this.build(build.id), build)
    this.access.put(this.db.builds, build.id, build)
    this.enqueue(build)
  }

  async putLog(buildId: string, log: string): Promise<void> {
    if (log.includes('\u0000')) throw new Error('a build log holds no NUL character')
    if (!(await this.build(buildId))) throw notFound('build')
    this.access.put(this.db.buildLogs, buildId, log)
  }

  async putArtifact(buildId: string, artifact: Buffer): Promise<void> {
    if (!(await this.build(buildId))) throw notFound('build')
    this.access.put(this.db.buildArtifacts, buildId, artifact)
  }

  /** A build queued or running is in the queue; one that is done leaves it. */
  private enqueue(build: BuildRecord): void {
    if (build.status === 'queued' || build.status === 'running') this.access.put(this.db.buildQueue, build.id, null)
    else this.access.remove(this.db.buildQueue, build.id)
  }

  /** Newest first from an ordering database keyed [scope, id], with its total. */
  private page<T>(db: SdkDatabases[keyof SdkDatabases], range: { start: Key; end: Key }, page: PageRequest, record: (id: string) => T | undefined): Page<T> {
    const total = this.access.count(db, range)
    const items: T[] = []
    if (page.offset < total) {
      for (const { key } of this.access.range(db, { start: range.end, end: range.start, reverse: true, offset: page.offset, limit: page.limit })) {
        const found = record((key as string[])[1])
        if (found) items.push(found)
      }
    }
    return { items, total }
  }
}

/** Queue entries read at a time while looking for the next queued build. */
const QUEUE_PAGE = 16
