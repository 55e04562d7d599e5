/**
 * The SDK feature's store: SDKs, their output repositories, builds, the persistent build queue, build
 * logs and artifacts, in named databases of the index's LMDB environment (`SDK_DATABASES`). Writes that
 * belong together run in one `transaction` of the index, so they commit with one another (and, inside
 * a delete hook, with the deletion of an API).
 */
import type { Database } from 'lmdb'
import type { RegistryIndex } from './interfaces.js'
import { SDK_DATABASES, sdkKeys } from './layout.js'
import { LmdbIndex, type IndexKey } from './lmdb-index.js'
import type { Page, PageRequest } from './records.js'
import type { BuildRecord, OutputRepositoryRecord, SdkRecord, SdkTarget } from './sdk-records.js'
import type { StoredSecret } from './secret-keyring.js'
import { sameStoredSecret, type SecretHolder, type SecretRef, type SecretSlot } from './secret-slots.js'

type Key = IndexKey
type Databases = { -readonly [name in keyof typeof SDK_DATABASES]: Database<any, Key> }

/** Where an output repository's token is: its additional authenticated data names the SDK and the target. */
export function outputRepositorySecretRef(repository: Pick<OutputRepositoryRecord, 'sdk_id' | 'target'>): SecretRef {
  return { holder: 'sdk-output-repository', sdk_id: repository.sdk_id, target: repository.target, field: 'token' }
}

export class SdkStore implements SecretHolder {
  private readonly db: Databases

  constructor(private readonly index: LmdbIndex) {
    this.db = index.databases(SDK_DATABASES)
  }

  /** The store of a registry index; SDKs need the LMDB index (named databases, shared transactions). */
  static of(index: RegistryIndex): SdkStore {
    return new SdkStore(LmdbIndex.require(index, 'SDKs'))
  }

  /** One write transaction: the commit point of a change. */
  transaction<T>(work: () => T): Promise<T> {
    return this.index.transaction(work)
  }

  // ---------------------------------------------------------------- SDKs

  getSdk(id: string): SdkRecord | undefined {
    return this.db.sdks.get(id)
  }

  sdkIdBySlug(org: string, slug: string): string | undefined {
    return this.db.sdkSlugs.get(sdkKeys.sdkSlug(org, slug))
  }

  /** Newest first. */
  listSdks(org: string, page: PageRequest): Page<SdkRecord> {
    const range = sdkKeys.sdkOrderRange(org)
    const total = this.db.sdkOrder.getCount(range)
    const items: SdkRecord[] = []
    for (const key of this.db.sdkOrder.getKeys({ start: range.end, end: range.start, reverse: true, offset: page.offset, limit: page.limit })) {
      const sdk = this.getSdk((key as string[])[1])
      if (sdk) items.push(sdk)
    }
    return { items, total }
  }

  /** Writes an SDK and its slug and API references, replacing `before` (in a transaction). */
  putSdk(sdk: SdkRecord, before?: SdkRecord): void {
    if (before) {
      this.db.sdkSlugs.remove(sdkKeys.sdkSlug(before.organization_id, before.slug))
      for (const api of before.apis) this.db.sdkApis.remove(sdkKeys.sdkApi(api.api_id, before.id))
    }
    this.db.sdks.put(sdk.id, sdk)
    this.db.sdkOrder.put(sdkKeys.sdkOrder(sdk.organization_id, sdk.id), null)
    this.db.sdkSlugs.put(sdkKeys.sdkSlug(sdk.organization_id, sdk.slug), sdk.id)
    for (const api of sdk.apis) this.db.sdkApis.put(sdkKeys.sdkApi(api.api_id, sdk.id), null)
  }

  /** Removes an SDK with its repositories, builds, logs and artifacts (in a transaction). */
  removeSdk(sdk: SdkRecord): void {
    this.db.sdkSlugs.remove(sdkKeys.sdkSlug(sdk.organization_id, sdk.slug))
    this.db.sdkOrder.remove(sdkKeys.sdkOrder(sdk.organization_id, sdk.id))
    for (const api of sdk.apis) this.db.sdkApis.remove(sdkKeys.sdkApi(api.api_id, sdk.id))
    // Keys are collected before removing: no removal while a range is being read.
    for (const key of [...this.db.sdkRepositories.getKeys(sdkKeys.sdkRepositoryRange(sdk.id))]) this.db.sdkRepositories.remove(key)
    for (const key of [...this.db.sdkBuilds.getKeys(sdkKeys.sdkBuildRange(sdk.id))]) {
      const buildId = (key as string[])[1]
      this.db.sdkBuilds.remove(key)
      this.db.buildOrder.remove(sdkKeys.buildOrder(sdk.organization_id, buildId))
      this.db.buildQueue.remove(buildId)
      this.db.buildLogs.remove(buildId)
      this.db.buildArtifacts.remove(buildId)
      this.db.builds.remove(buildId)
    }
    this.db.sdks.remove(sdk.id)
  }

  /** SDK ids that attach an API. */
  sdksUsingApi(apiId: string): string[] {
    return [...this.db.sdkApis.getKeys(sdkKeys.sdkApiRange(apiId))].map((key) => (key as string[])[1])
  }

  // ---------------------------------------------------------------- output repositories

  getRepository(sdkId: string, target: SdkTarget): OutputRepositoryRecord | undefined {
    return this.db.sdkRepositories.get(sdkKeys.sdkRepository(sdkId, target))
  }

  listRepositories(sdkId: string): OutputRepositoryRecord[] {
    return [...this.db.sdkRepositories.getRange(sdkKeys.sdkRepositoryRange(sdkId)).map(({ value }) => value as OutputRepositoryRecord)]
  }

  putRepository(repository: OutputRepositoryRecord): void {
    this.db.sdkRepositories.put(sdkKeys.sdkRepository(repository.sdk_id, repository.target), repository)
  }

  removeRepository(sdkId: string, target: SdkTarget): boolean {
    return this.db.sdkRepositories.removeSync(sdkKeys.sdkRepository(sdkId, target))
  }

  *secretSlots(): Iterable<SecretSlot> {
    for (const { value } of this.db.sdkRepositories.getRange()) {
      const repository = value as OutputRepositoryRecord
      if (repository.token === null) continue
      const organization = this.getSdk(repository.sdk_id)?.organization_id ?? ''
      yield { ref: outputRepositorySecretRef(repository), organization_id: organization, value: repository.token }
    }
  }

  replaceSecret(ref: SecretRef, expected: StoredSecret, next: StoredSecret): Promise<boolean> {
    return this.transaction(() => {
      if (ref.holder !== 'sdk-output-repository') return false
      const repository = this.getRepository(ref.sdk_id, ref.target as SdkTarget)
      if (!repository || !sameStoredSecret(repository.token, expected)) return false
      this.putRepository({ ...repository, token: next })
      return true
    })
  }

  // ---------------------------------------------------------------- builds and the queue

  getBuild(id: string): BuildRecord | undefined {
    return this.db.builds.get(id)
  }

  /** Adds a build and queues it (in a transaction). */
  addBuild(build: BuildRecord): void {
    this.db.builds.put(build.id, build)
    this.db.buildOrder.put(sdkKeys.buildOrder(build.organization_id, build.id), null)
    this.db.sdkBuilds.put(sdkKeys.sdkBuild(build.sdk_id, build.id), null)
    this.db.buildQueue.put(build.id, null)
  }

  /** Updates a build; a build that is done leaves the queue (in a transaction). */
  putBuild(build: BuildRecord): void {
    this.db.builds.put(build.id, build)
    if (build.status === 'queued' || build.status === 'running') this.db.buildQueue.put(build.id, null)
    else this.db.buildQueue.remove(build.id)
  }

  /** Builds in the queue (queued or running), oldest first. */
  queuedBuilds(): BuildRecord[] {
    const builds: BuildRecord[] = []
    for (const id of this.db.buildQueue.getKeys()) {
      const build = this.getBuild(id as string)
      if (build) builds.push(build)
    }
    return builds
  }

  /** Newest first: the organization's builds, or one SDK's. */
  listBuilds(scope: { org: string } | { sdkId: string }, page: PageRequest): Page<BuildRecord> {
    const [db, range] = 'org' in scope
      ? [this.db.buildOrder, sdkKeys.buildOrderRange(scope.org)]
      : [this.db.sdkBuilds, sdkKeys.sdkBuildRange(scope.sdkId)]
    const total = db.getCount(range)
    const items: BuildRecord[] = []
    for (const key of db.getKeys({ start: range.end, end: range.start, reverse: true, offset: page.offset, limit: page.limit })) {
      const build = this.getBuild((key as string[])[1])
      if (build) items.push(build)
    }
    return { items, total }
  }

  getLog(buildId: string): string | undefined {
    return this.db.buildLogs.get(buildId)
  }

  putLog(buildId: string, log: string): void {
    this.db.buildLogs.put(buildId, log)
  }

  getArtifact(buildId: string): Buffer | undefined {
    const value: Uint8Array | undefined = this.db.buildArtifacts.get(buildId)
    return value === undefined ? undefined : Buffer.from(value)
  }

  putArtifact(buildId: string, artifact: Buffer): void {
    this.db.buildArtifacts.put(buildId, artifact)
  }
}
