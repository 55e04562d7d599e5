/**
 * SDKs (issue 7): generation configs for one or more APIs with one or more language targets, their
 * output repositories, and queueing, listing and canceling builds. The builds themselves are run by
 * `BuildRunner` (build-runner.ts).
 *
 * An API attached to an SDK cannot be deleted (409, like a ruleset attached to APIs): the SDK names
 * it, and builds would break. Detach it first (PATCH the SDK's `apis`).
 *
 * Everything is stored through the storage port's `sdks` section (src/storage/features/sdks.ts): reads
 * from `storage.read`, every change one `storage.transaction` deciding on what it read through `tx`.
 */
import { canonicalJson, checksumOf } from '../../documents/canonical.js'
import { RegistryError, notFound } from '../../errors.js'
import type { ReadStores, Storage, Stores } from '../../storage/port.js'
import {
  outputRepositorySecretRef,
  type BuildInputs, type BuildRecord, type OutputRepositoryRecord, type Page, type PageRequest, type Provider, type ResourceRecord,
  type SdkApiAttachment, type SdkConfig, type SdkRecord, type SdkTarget,
} from '../../storage/records.js'
import { generatorOf } from '../../sdk/generate.js'
import { apiBase } from '../../sdk/providers.js'
import { isUlid, newId, now } from '../resources/ids.js'
import { OutboundPolicy } from '../outbound/outbound.js'
import type { Actor } from '../accounts/organizations.js'
import type { Secrets } from '../accounts/secrets.js'
import { checkSlug, deriveSlug } from '../resources/slugs.js'
import { refuseControlCharacters } from '../outbound/stored-urls.js'

export interface SdkCreateInput {
  name: string
  slug?: string
  targets: SdkTarget[]
  apis: { api_id: string; version_id?: string | null }[]
  config?: SdkConfig
}

export type SdkUpdateInput = Partial<SdkCreateInput>

export interface RepositoryInput {
  provider: Provider
  url: string
  base_branch?: string
  api_url?: string | null
  token?: string | null
}

type ActorScope = Pick<Actor, 'organization'>

/** Told when a build is queued or canceled, so the runner wakes up or aborts the run. */
export interface BuildSignals {
  queued(): void
  canceled(buildId: string): void
}

/**
 * Refuses the deletion of an API that SDKs attach (409), given their ids (read through
 * `tx.sdks.sdksUsingApi` in the deletion's transaction, registry.ts).
 */
export function refuseAttachedApiDelete(resource: ResourceRecord, sdkIds: string[]): void {
  if (resource.kind !== 'api') return
  const users = sdkIds.length
  if (users > 0) throw new RegistryError('conflict', `the API is attached to ${users} SDK${users === 1 ? '' : 's'}; detach it first`)
}

export class Sdks {
  /** Set by the runner. */
  signals: BuildSignals = { queued: () => {}, canceled: () => {} }

  constructor(
    private readonly storage: Storage,
    /** Seals output repository tokens when stored. */
    private readonly secrets: Secrets,
    /** REGISTRY_OUTBOUND_HOSTS: checked here for `url` and `api_url`, and again by each build's requests. */
    private readonly outbound: OutboundPolicy = OutboundPolicy.DEFAULT,
  ) {}

  // ---------------------------------------------------------------- SDKs

  /**
   * An SDK of the actor's organization, by id or slug (see resolveRef in ids.ts); anything else is the
   * same 404. Read from the committed state, or through a transaction's `tx`.
   */
  async require(actor: ActorScope, ref: string, read: ReadStores = this.storage.read): Promise<SdkRecord> {
    const org = actor.organization.id
    const byId = isUlid(ref) ? await read.sdks.get(ref) : undefined
    const sdk = (byId?.organization_id === org ? byId : undefined) ?? await read.sdks.bySlug(org, ref)
    if (!sdk) throw notFound('sdk')
    return sdk
  }

  list(actor: ActorScope, page: PageRequest): Promise<Page<SdkRecord>> {
    return this.storage.read.sdks.list(actor.organization.id, page)
  }

  repositories(sdk: SdkRecord): Promise<OutputRepositoryRecord[]> {
    return this.storage.read.sdks.repositories(sdk.id)
  }

  async create(actor: ActorScope, input: SdkCreateInput): Promise<SdkRecord> {
    const org = actor.organization.id
    checkSlug(input.slug)
    const at = now()
    return this.storage.transaction(async (tx) => {
      const slug = await this.freeSlug(tx, org, input.slug ?? deriveSlug(input.name, 'sdk'), input.slug !== undefined)
      const targets = uniqueTargets(input.targets)
      const sdk: SdkRecord = {
        id: newId(),
        organization_id: org,
        name: input.name,
        slug,
        targets,
        apis: await this.checkApis(tx, org, input.apis),
        config: input.config ?? {},
        last_build_number: 0,
        created_at: at,
        updated_at: at,
      }
      await tx.sdks.create(sdk)
      return sdk
    })
  }

  async update(actor: ActorScope, id: string, input: SdkUpdateInput): Promise<SdkRecord> {
    await this.require(actor, id)
    checkSlug(input.slug)
    return this.storage.transaction(async (tx) => {
      const before = await this.require(actor, id, tx)
      const next: SdkRecord = { ...before, updated_at: now() }
      if (input.name !== undefined) next.name = input.name
      if (input.slug !== undefined && input.slug !== before.slug) next.slug = await this.freeSlug(tx, before.organization_id, input.slug, true)
      if (input.targets !== undefined) next.targets = uniqueTargets(input.targets)
      if (input.apis !== undefined) next.apis = await this.checkApis(tx, before.organization_id, input.apis)
      if (input.config !== undefined) next.config = input.config
      // A target that is no longer generated keeps no output repository.
      for (const target of before.targets) if (!next.targets.includes(target)) await tx.sdks.removeRepository(before.id, target)
      await tx.sdks.update(next)
      return next
    })
  }

  /** Deletes the SDK with its repositories and builds; a running build is aborted. */
  async remove(actor: ActorScope, id: string): Promise<void> {
    await this.require(actor, id)
    const running = await this.storage.transaction(async (tx) => {
      const sdk = await this.require(actor, id, tx)
      const active = (await tx.sdks.queue()).filter((b) => b.sdk_id === sdk.id).map((b) => b.id)
      await tx.sdks.remove(sdk.id)
      return active
    })
    for (const buildId of running) this.signals.canceled(buildId)
  }

  private async freeSlug(tx: Stores, org: string, wanted: string, explicit: boolean): Promise<string> {
    const taken = async (slug: string) => (await tx.sdks.bySlug(org, slug)) !== undefined
    if (!(await taken(wanted))) return wanted
    if (explicit) throw new RegistryError('conflict', `slug '${wanted}' is already used by another SDK`)
    for (let n = 2; ; n++) {
      const suffix = `-${n}`
      const candidate = wanted.slice(0, 64 - suffix.length).replace(/-+$/, '') + suffix
      if (!(await taken(candidate))) return candidate
    }
  }

  /** Each `api_id` (and `version_id`) must name an API (version) of the organization (inside the transaction). */
  private async checkApis(tx: Stores, org: string, apis: SdkCreateInput['apis']): Promise<SdkApiAttachment[]> {
    const seen = new Set<string>()
    const attached: SdkApiAttachment[] = []
    for (const [i, attachment] of apis.entries()) {
      const api = await tx.resources.get(attachment.api_id)
      if (!api || api.kind !== 'api' || api.organization_id !== org) {
        throw new RegistryError('invalid_reference', `apis[${i}].api_id '${attachment.api_id}' names no API of this organization`,
          [{ path: ['apis', i, 'api_id'], message: 'no such API in this organization' }])
      }
      if (seen.has(api.id)) throw new RegistryError('invalid_request', `apis[${i}]: the API is attached twice`)
      seen.add(api.id)
      const versionId = attachment.version_id ?? null
      if (versionId !== null && (await tx.versions.byId(versionId))?.resource_id !== api.id) {
        throw new RegistryError('invalid_reference', `apis[${i}].version_id '${versionId}' names no version of that API`,
          [{ path: ['apis', i, 'version_id'], message: 'no such version of this API' }])
      }
      attached.push({ api_id: api.id, version_id: versionId })
    }
    return attached
  }

  // ---------------------------------------------------------------- output repositories

  async repository(actor: ActorScope, sdkId: string, target: SdkTarget): Promise<OutputRepositoryRecord> {
    const sdk = await this.require(actor, sdkId)
    const repository = await this.storage.read.sdks.repository(sdk.id, target)
    if (!repository) throw notFound('output repository')
    return repository
  }

  async putRepository(actor: ActorScope, sdkId: string, target: SdkTarget, input: RepositoryInput): Promise<{ repository: OutputRepositoryRecord; created: boolean }> {
    checkRepositoryUrl(input)
    checkOutboundHosts(this.outbound, input)
    return this.storage.transaction(async (tx) => {
      const sdk = await this.require(actor, sdkId, tx)
      if (!sdk.targets.includes(target)) throw new RegistryError('invalid_request', `'${target}' is not a target of this SDK (targets: ${sdk.targets.join(', ')})`)
      const before = await tx.sdks.repository(sdk.id, target)
      const at = now()
      const repository: OutputRepositoryRecord = {
        sdk_id: sdk.id, target, provider: input.provider, url: input.url, base_branch: input.base_branch ?? 'main',
        api_url: input.api_url ?? null,
        // Omitting the token keeps the stored one (it is write-only); null removes it.
        token: input.token === undefined ? (before?.token ?? null) : this.secrets.seal(outputRepositorySecretRef({ sdk_id: sdk.id, target }), input.token),
        created_at: before?.created_at ?? at, updated_at: at,
      }
      if (repository.provider !== 'git' && !repository.token) {
        throw new RegistryError('invalid_request', `a ${repository.provider} repository needs a token to open pull requests`)
      }
      await tx.sdks.putRepository(repository)
      return { repository, created: before === undefined }
    })
  }

  async removeRepository(actor: ActorScope, sdkId: string, target: SdkTarget): Promise<void> {
    await this.storage.transaction(async (tx) => {
      const sdk = await this.require(actor, sdkId, tx)
      if (!(await tx.sdks.removeRepository(sdk.id, target))) throw notFound('output repository')
    })
  }

  // ---------------------------------------------------------------- builds

  /**
   * Queues one build per requested target (default: all of the SDK's). A build delivers to its target's
   * output repository, so targets without one are left out (422 `no_output_repository` when none is
   * left); an archive-only request builds every requested target and delivers nothing.
   */
  async queue(actor: ActorScope, sdkId: string, request: BuildRequest = {}): Promise<BuildRecord[]> {
    const sdk = await this.require(actor, sdkId)
    const generators = new Map<SdkTarget, { name: string; version: string }>()
    for (const target of sdk.targets) generators.set(target, await generatorOf(target))
    const builds = await this.storage.transaction(async (tx) => {
      const current = await this.require(actor, sdkId, tx)
      const requested = requestedTargets(current, request.targets)
      const repositories = new Map<SdkTarget, OutputRepositoryRecord>()
      if (!request.archiveOnly) {
        for (const target of requested) {
          const repository = await tx.sdks.repository(current.id, target)
          if (repository) repositories.set(target, repository)
        }
      }
      const targets = request.archiveOnly ? requested : requested.filter((t) => repositories.has(t))
      if (targets.length === 0) {
        throw new RegistryError('no_output_repository',
          'no requested target of this SDK has an output repository: PUT /v1/sdks/{sdk}/targets/{target}/repository first, or ask for an archive-only build ({"archive_only": true})')
      }
      const apis = await this.resolveApis(tx, current)
      const configChecksum = checksumOf(canonicalJson(current.config))
      const at = now()
      let number = current.last_build_number
      const queued = targets.map((target): BuildRecord => {
        const repository = repositories.get(target)
        const generator = generators.get(target) ?? { name: 'unknown', version: '0' }
        const inputs: BuildInputs = { apis, config_checksum: configChecksum, generator }
        return {
          id: newId(), organization_id: current.organization_id, sdk_id: current.id, number: ++number, target,
          status: 'queued', attempts: 0, inputs, sdk: { name: current.name, slug: current.slug }, config: current.config,
          repository: repository ? { provider: repository.provider, url: repository.url, base_branch: repository.base_branch } : null,
          output: null, error: null, created_at: at, updated_at: at, started_at: null, finished_at: null,
        }
      })
      // Each is the SDK's next number (the adapter moves `last_build_number` with it).
      for (const build of queued) await tx.sdks.addBuild(build)
      return queued
    })
    this.signals.queued()
    return builds
  }

  /** The API versions a build uses: pinned ones, or each API's current version (inside the transaction). */
  private async resolveApis(tx: Stores, sdk: SdkRecord): Promise<BuildInputs['apis']> {
    const apis: BuildInputs['apis'] = []
    for (const [i, attachment] of sdk.apis.entries()) {
      const api = await tx.resources.get(attachment.api_id)
      const version = attachment.version_id ? await tx.versions.byId(attachment.version_id) : await tx.versions.current(attachment.api_id)
      if (!api || !version) {
        throw new RegistryError('invalid_reference', `apis[${i}]: the API has no uploaded version to generate from`,
          [{ path: ['apis', i, 'api_id'], message: 'upload a document to this API first' }])
      }
      apis.push({ api_id: api.id, slug: api.slug, name: api.name, version_id: version.id, checksum: version.checksum })
    }
    return apis
  }

  async requireBuild(actor: ActorScope, id: string, read: ReadStores = this.storage.read): Promise<BuildRecord> {
    const build = await read.sdks.build(id)
    if (!build || build.organization_id !== actor.organization.id) throw notFound('build')
    return build
  }

  async listBuilds(actor: ActorScope, page: PageRequest, sdkId?: string): Promise<Page<BuildRecord>> {
    if (sdkId === undefined) return this.storage.read.sdks.builds({ organizationId: actor.organization.id }, page)
    return this.storage.read.sdks.builds({ sdkId: (await this.require(actor, sdkId)).id }, page)
  }

  async log(actor: ActorScope, id: string): Promise<string> {
    return (await this.storage.read.sdks.log((await this.requireBuild(actor, id)).id)) ?? ''
  }

  async artifact(actor: ActorScope, id: string): Promise<Buffer> {
    const build = await this.requireBuild(actor, id)
    const artifact = await this.storage.read.sdks.artifact(build.id)
    if (!artifact) throw notFound('artifact (the build has not generated its files)')
    return artifact
  }

  /** Cancels a queued build (it never runs) or a running one (its generator or delivery is aborted). */
  async cancel(actor: ActorScope, id: string): Promise<BuildRecord> {
    await this.requireBuild(actor, id)
    const build = await this.storage.transaction(async (tx) => {
      const current = await this.requireBuild(actor, id, tx)
      if (current.status !== 'queued' && current.status !== 'running') {
        throw new RegistryError('conflict', `the build is already ${current.status}`)
      }
      const at = now()
      const canceled: BuildRecord = { ...current, status: 'canceled', error: 'canceled by request', updated_at: at, finished_at: at }
      await tx.sdks.putBuild(canceled)
      return canceled
    })
    this.signals.canceled(build.id)
    return build
  }
}

/** What a build request asks for: some of the SDK's targets (default all), with or without delivery. */
export interface BuildRequest {
  targets?: SdkTarget[]
  archiveOnly?: boolean
}

function requestedTargets(sdk: SdkRecord, targets: SdkTarget[] | undefined): SdkTarget[] {
  if (targets === undefined) return sdk.targets
  const unknown = targets.filter((t) => !sdk.targets.includes(t))
  if (unknown.length > 0) {
    throw new RegistryError('invalid_request', `targets: this SDK does not generate ${unknown.join(', ')} (its targets: ${sdk.targets.join(', ')})`)
  }
  return uniqueTargets(targets)
}

function uniqueTargets(targets: SdkTarget[]): SdkTarget[] {
  if (new Set(targets).size !== targets.length) throw new RegistryError('invalid_request', 'targets: each target at most once')
  return [...targets]
}

/**
 * The repository's host, and for GitHub and GitLab the host of the REST API pull requests are opened
 * through (`api_url`, or the one derived from `url`: api.github.com for github.com), must be allowed.
 */
export function checkOutboundHosts(outbound: OutboundPolicy, input: Pick<RepositoryInput, 'provider' | 'url' | 'api_url'>): void {
  outbound.check(input.url, 'url')
  if (input.provider === 'git') return
  const api = apiBase(input.provider, input.url, input.api_url ?? null)
  if (input.api_url) return outbound.check(api, 'api_url')
  const refusal = outbound.refusal(api)
  if (refusal !== undefined) {
    const message = `pull requests go through ${new URL(api).origin} (derived from url): ${refusal}`
    throw new RegistryError('invalid_request', `api_url: ${message}`, [{ path: ['api_url'], message }])
  }
}

function checkRepositoryUrl(input: RepositoryInput): void {
  refuseControlCharacters(input.url, 'url')
  refuseControlCharacters(input.api_url, 'api_url')
  for (const [field, value] of [['url', input.url], ['api_url', input.api_url]] as const) {
    if (value === undefined || value === null) continue
    let url: URL
    try {
      url = new URL(value)
    } catch {
      throw new RegistryError('invalid_request', `${field} must be an absolute http(s) URL`)
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new RegistryError('invalid_request', `${field} must be an http(s) URL`)
    if (url.username || url.password) throw new RegistryError('invalid_request', `${field} must not hold credentials: send the token in 'token'`)
  }
}
