/**
 * The port's sdks section (issue 7, issue 16): SDKs, their output repositories (one per target), and
 * builds with their queue, logs and artifacts. Reads inside a transaction (`SdkStore`) or from the
 * committed state (`SdkReader`); every write inside `storage.transaction`.
 *
 * What every adapter enforces whatever the domain does: one slug per organization (409), an SDK only
 * of an existing organization and attaching only APIs of it (404), one output repository per SDK and
 * target, builds only of an existing SDK and of its organization (404) numbered 1, 2, 3… per SDK (409),
 * logs and artifacts only of an existing build (404); removing an SDK takes its repositories, builds,
 * logs and artifacts with it. What stays in the domain: choosing a free slug, checking the attached
 * APIs and versions (422 before the adapter's 404), the SDK's targets, the runner's rules.
 */
import { RegistryError, notFound } from '../../errors.js'
import type {
  BuildRecord, OutputRepositoryRecord, Page, PageRequest, SdkRecord, SdkTarget,
} from '../records.js'

/**
 * The SDK as `addBuild` leaves it (`last_build_number` moved to the build's), after the checks every
 * adapter makes: the SDK exists in the build's organization (404) and the build is its next (409).
 */
export async function sdkWithBuildAdded(
  sdk: SdkRecord | undefined, build: BuildRecord, existing: (id: string) => Promise<BuildRecord | undefined>,
): Promise<SdkRecord> {
  if (!sdk || sdk.organization_id !== build.organization_id) throw notFound('sdk')
  if (build.number !== sdk.last_build_number + 1) {
    throw new RegistryError('conflict', `build ${build.number} is not the next of SDK ${sdk.id} (${sdk.last_build_number + 1})`)
  }
  if (await existing(build.id)) throw new RegistryError('conflict', `build ${build.id} exists`)
  return { ...sdk, last_build_number: build.number }
}

/**
 * A build a runner may claim at `at` (RFC 3339, compared as text): queued, or running on a lease that
 * ended at or before `at`, or on none (claimed before leases existed, by a process that is gone).
 */
export function claimable(build: BuildRecord, at: string): boolean {
  if (build.status === 'queued') return true
  return build.status === 'running' && (!build.lease || build.lease.until <= at)
}

/**
 * What every adapter checks before `putBuild` replaces a build: it exists (404), and its SDK,
 * organization and number are the stored ones.
 */
export function requireSameBuild(before: BuildRecord | undefined, build: BuildRecord): void {
  if (!before) throw notFound('build')
  if (build.sdk_id !== before.sdk_id || build.organization_id !== before.organization_id || build.number !== before.number) {
    throw new Error("a build's SDK, organization and number do not change")
  }
}

/** Which builds a listing shows: an organization's or one SDK's. */
export type BuildScope = { organizationId: string } | { sdkId: string }

export interface SdkReader {
  get(id: string): Promise<SdkRecord | undefined>
  bySlug(organizationId: string, slug: string): Promise<SdkRecord | undefined>
  /** One organization's SDKs, newest first (ids are ULIDs), with the total. */
  list(organizationId: string, page: PageRequest): Promise<Page<SdkRecord>>
  /**
   * The ids of the SDKs that attach an API, in id order: an API's deletion is refused while there is
   * one (read inside the deletion's transaction).
   */
  sdksUsingApi(apiId: string): Promise<string[]>

  repository(sdkId: string, target: SdkTarget): Promise<OutputRepositoryRecord | undefined>
  /** One SDK's output repositories, by target. */
  repositories(sdkId: string): Promise<OutputRepositoryRecord[]>

  build(id: string): Promise<BuildRecord | undefined>
  /** Newest first, with the total. */
  builds(scope: BuildScope, page: PageRequest): Promise<Page<BuildRecord>>
  /** The queue: builds queued or running, oldest first. */
  queue(): Promise<BuildRecord[]>
  /**
   * The oldest build a runner may claim at `at` (`claimable`: queued, or running on an ended lease):
   * what a runner claims next, inside the transaction that marks it running under its own lease. Two
   * concurrent claims never both take one build: on PostgreSQL the row is locked `FOR UPDATE SKIP
   * LOCKED` (a concurrent claimer passes to the next one) and the serializable commit refuses the rest;
   * on LMDB the commit re-checks what was read.
   */
  nextQueued(at: string): Promise<BuildRecord | undefined>
  /** A build's log; undefined when none was written. */
  log(buildId: string): Promise<string | undefined>
  /** The build's generated files (a .tar.gz); undefined when none were generated. */
  artifact(buildId: string): Promise<Buffer | undefined>
}

export interface SdkStore extends SdkReader {
  /**
   * Inserts a new SDK; 404 when its organization, an attached API (an API of that organization) or a
   * pinned version of it does not exist, 409 `conflict` when the slug is taken in the organization or
   * the id exists.
   */
  create(sdk: SdkRecord): Promise<void>
  /**
   * Replaces an SDK (its slug and attached APIs with it); 404 when gone or as `create`, 409 on a taken
   * slug. `last_build_number` changes only through `addBuild`.
   */
  update(sdk: SdkRecord): Promise<void>
  /** Removes an SDK with its output repositories, builds, logs and artifacts; answers it, undefined when it was not there. */
  remove(id: string): Promise<SdkRecord | undefined>

  /** Inserts or replaces the output repository of (sdk_id, target); 404 when the SDK does not exist. */
  putRepository(repository: OutputRepositoryRecord): Promise<void>
  /** False when there was none. */
  removeRepository(sdkId: string, target: SdkTarget): Promise<boolean>

  /**
   * Inserts a build (a `queued` or `running` one joins the queue) as its SDK's next: its number must be
   * the SDK's `last_build_number + 1` (409 `conflict` otherwise, and when the id exists), so numbers are
   * gapless and never reused; answers the SDK as updated (`last_build_number`, nothing else). 404 when
   * its SDK does not exist or is another organization's.
   */
  addBuild(build: BuildRecord): Promise<SdkRecord>
  /**
   * Replaces a build (its status decides whether it is in the queue); 404 when it does not exist. Its SDK,
   * organization and number do not change.
   */
  putBuild(build: BuildRecord): Promise<void>
  /** Replaces a build's log (text without NUL characters, which PostgreSQL's text refuses); 404 when the build does not exist. */
  putLog(buildId: string, log: string): Promise<void>
  /** Replaces a build's artifact; 404 when the build does not exist. */
  putArtifact(buildId: string, artifact: Buffer): Promise<void>
}
