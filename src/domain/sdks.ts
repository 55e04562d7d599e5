/**
 * SDKs (issue 7): generation configs for one or more APIs with one or more language targets, their
 * output repositories, and queueing, listing and canceling builds. The builds themselves are run by
 * `BuildRunner` (build-runner.ts).
 *
 * An API attached to an SDK cannot be deleted (409, like a ruleset attached to APIs): the SDK names
 * it, and builds would break. Detach it first (PATCH the SDK's `apis`).
 */
import { canonicalJson, checksumOf } from '../documents/canonical.js'
import { RegistryError, notFound } from '../errors.js'
import type { RegistryIndex } from '../store/interfaces.js'
import type { Page, PageRequest, ResourceRecord } from '../store/records.js'
import type {
  BuildInputs, BuildRecord, OutputRepositoryRecord, Provider, SdkApiAttachment, SdkConfig, SdkRecord, SdkTarget,
} from '../store/sdk-records.js'
import { outputRepositorySecretRef, type SdkStore } from '../store/sdk-store.js'
import { generatorOf } from '../sdk/generate.js'
import { apiBase } from '../sdk/providers.js'
import { newId, now, resolveRef } from './ids.js'
import { OutboundPolicy } from './outbound.js'
import type { Actor } from './organizations.js'
import type { Secrets } from './secrets.js'
import { checkSlug, deriveSlug } from './slugs.js'
import { refuseControlCharacters } from './stored-urls.js'

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

export class Sdks {
  /** Set by the runner. */
  signals: BuildSignals = { queued: () => {}, canceled: () => {} }

  constructor(
    private readonly store: SdkStore,
    private readonly index: RegistryIndex,
    /** Seals output repository tokens when stored. */
    private readonly secrets: Secrets,
    /** REGISTRY_OUTBOUND_HOSTS: checked here for `url` and `api_url`, and again by each build's requests. */
    private readonly outbound: OutboundPolicy = OutboundPolicy.DEFAULT,
  ) {}

  /** Refuses the deletion of an API that an SDK attaches (a `Resources.deleteHooks` entry). */
  readonly guardApiDelete = (resource: ResourceRecord): void => {
    if (resource.kind !== 'api') return
    const users = this.store.sdksUsingApi(resource.id).length
    if (users > 0) throw new RegistryError('conflict', `the API is attached to ${users} SDK${users === 1 ? '' : 's'}; detach it first`)
  }

  // ---------------------------------------------------------------- SDKs

  /** An SDK of the actor's organization, by id or slug (see resolveRef); anything else is the same 404. */
  require(actor: ActorScope, ref: string): SdkRecord {
    const org = actor.organization.id
    const byId = (id: string) => {
      const found = this.store.getSdk(id)
      return found?.organization_id === org ? found : undefined
    }
    const sdk = resolveRef(ref, byId, (slug) => {
      const id = this.store.sdkIdBySlug(org, slug)
      return id === undefined ? undefined : byId(id)
    })
    if (!sdk) throw notFound('sdk')
    return sdk
  }

  list(actor: ActorScope, page: PageRequest): Page<SdkRecord> {
    return this.store.listSdks(actor.organization.id, page)
  }

  repositories(sdk: SdkRecord): OutputRepositoryRecord[] {
    return this.store.listRepositories(sdk.id)
  }

  async create(actor: ActorScope, input: SdkCreateInput): Promise<SdkRecord> {
    const org = actor.organization.id
    checkSlug(input.slug)
    const at = now()
    return this.store.transaction(() => {
      const sdk: SdkRecord = {
        id: newId(),
        organization_id: org,
        name: input.name,
        slug: this.freeSlug(org, input.slug ?? deriveSlug(input.name, 'sdk'), input.slug !== undefined),
        targets: uniqueTargets(input.targets),
        apis: this.checkApis(org, input.apis),
        config: input.config ?? {},
        last_build_number: 0,
        created_at: at,
        updated_at: at,
      }
      this.store.putSdk(sdk)
      return sdk
    })
  }

  async update(actor: ActorScope, id: string, input: SdkUpdateInput): Promise<SdkRecord> {
    this.require(actor, id)
    checkSlug(input.slug)
    return this.store.transaction(() => {
      const before = this.require(actor, id)
      const next: SdkRecord = { ...before, updated_at: now() }
      if (input.name !== undefined) next.name = input.name
      if (input.slug !== undefined && input.slug !== before.slug) next.slug = this.freeSlug(before.organization_id, input.slug, true)
      if (input.targets !== undefined) next.targets = uniqueTargets(input.targets)
      if (input.apis !== undefined) next.apis = this.checkApis(before.organization_id, input.apis)
      if (input.config !== undefined) next.config = input.config
      // A target that is no longer generated keeps no output repository.
      for (const target of before.targets) if (!next.targets.includes(target)) this.store.removeRepository(id, target)
      this.store.putSdk(next, before)
      return next
    })
  }

  /** Deletes the SDK with its repositories and builds; a running build is aborted. */
  async remove(actor: ActorScope, id: string): Promise<void> {
    this.require(actor, id)
    const running = await this.store.transaction(() => {
      const sdk = this.require(actor, id)
      const active = this.store.queuedBuilds().filter((b) => b.sdk_id === id).map((b) => b.id)
      this.store.removeSdk(sdk)
      return active
    })
    for (const buildId of running) this.signals.canceled(buildId)
  }

  private freeSlug(org: string, wanted: string, explicit: boolean): string {
    const taken = (slug: string) => this.store.sdkIdBySlug(org, slug) !== undefined
    if (!taken(wanted)) return wanted
    if (explicit) throw new RegistryError('conflict', `slug '${wanted}' is already used by another SDK`)
    for (let n = 2; ; n++) {
      const suffix = `-${n}`
      const candidate = wanted.slice(0, 64 - suffix.length).replace(/-+$/, '') + suffix
      if (!taken(candidate)) return candidate
    }
  }

  /** Each `api_id` (and `version_id`) must name an API (version) of the organization (inside the transaction). */
  private checkApis(org: string, apis: SdkCreateInput['apis']): SdkApiAttachment[] {
    const seen = new Set<string>()
    return apis.map((attachment, i) => {
      const api = this.index.getResource(attachment.api_id)
      if (!api || api.kind !== 'api' || api.organization_id !== org) {
        throw new RegistryError('invalid_reference', `apis[${i}].api_id '${attachment.api_id}' names no API of this organization`,
          [{ path: ['apis', i, 'api_id'], message: 'no such API in this organization' }])
      }
      if (seen.has(api.id)) throw new RegistryError('invalid_request', `apis[${i}]: the API is attached twice`)
      seen.add(api.id)
      const versionId = attachment.version_id ?? null
      if (versionId !== null && this.index.getVersionById(versionId)?.resource_id !== api.id) {
        throw new RegistryError('invalid_reference', `apis[${i}].version_id '${versionId}' names no version of that API`,
          [{ path: ['apis', i, 'version_id'], message: 'no such version of this API' }])
      }
      return { api_id: api.id, version_id: versionId }
    })
  }

  // ---------------------------------------------------------------- output repositories

  repository(actor: ActorScope, sdkId: string, target: SdkTarget): OutputRepositoryRecord {
    const sdk = this.require(actor, sdkId)
    const repository = this.store.getRepository(sdk.id, target)
    if (!repository) throw notFound('output repository')
    return repository
  }

  async putRepository(actor: ActorScope, sdkId: string, target: SdkTarget, input: RepositoryInput): Promise<{ repository: OutputRepositoryRecord; created: boolean }> {
    checkRepositoryUrl(input)
    checkOutboundHosts(this.outbound, input)
    return this.store.transaction(() => {
      const sdk = this.require(actor, sdkId)
      if (!sdk.targets.includes(target)) throw new RegistryError('invalid_request', `'${target}' is not a target of this SDK (targets: ${sdk.targets.join(', ')})`)
      const before = this.store.getRepository(sdk.id, target)
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
      this.store.putRepository(repository)
      return { repository, created: before === undefined }
    })
  }

  async removeRepository(actor: ActorScope, sdkId: string, target: SdkTarget): Promise<void> {
    await this.store.transaction(() => {
      const sdk = this.require(actor, sdkId)
      if (!this.store.removeRepository(sdk.id, target)) throw notFound('output repository')
    })
  }

  // ---------------------------------------------------------------- builds

  /**
   * Queues one build per requested target (default: all of the SDK's). A build delivers to its target's
   * output repository, so targets without one are left out (422 `no_output_repository` when none is
   * left); an archive-only request builds every requested target and delivers nothing.
   */
  async queue(actor: ActorScope, sdkId: string, request: BuildRequest = {}): Promise<BuildRecord[]> {
    const sdk = this.require(actor, sdkId)
    const generators = new Map<SdkTarget, { name: string; version: string }>()
    for (const target of sdk.targets) generators.set(target, await generatorOf(target))
    const builds = await this.store.transaction(() => {
      const current = this.require(actor, sdkId)
      const requested = requestedTargets(current, request.targets)
      const targets = request.archiveOnly ? requested : requested.filter((t) => this.store.getRepository(current.id, t))
      if (targets.length === 0) {
        throw new RegistryError('no_output_repository',
          'no requested target of this SDK has an output repository: PUT /v1/sdks/{sdk}/targets/{target}/repository first, or ask for an archive-only build ({"archive_only": true})')
      }
      const apis = this.resolveApis(current)
      const configChecksum = checksumOf(canonicalJson(current.config))
      const at = now()
      let number = current.last_build_number
      const queued = targets.map((target): BuildRecord => {
        const repository = request.archiveOnly ? undefined : this.store.getRepository(current.id, target)!
        const generator = generators.get(target) ?? { name: 'unknown', version: '0' }
        const inputs: BuildInputs = { apis, config_checksum: configChecksum, generator }
        return {
          id: newId(), organization_id: current.organization_id, sdk_id: current.id, number: ++number, target,
          status: 'queued', attempts: 0, inputs, sdk: { name: current.name, slug: current.slug }, config: current.config,
          repository: repository ? { provider: repository.provider, url: repository.url, base_branch: repository.base_branch } : null,
          output: null, error: null, created_at: at, updated_at: at, started_at: null, finished_at: null,
        }
      })
      for (const build of queued) this.store.addBuild(build)
      this.store.putSdk({ ...current, last_build_number: number }, current)
      return queued
    })
    this.signals.queued()
    return builds
  }

  /** The API versions a build uses: pinned ones, or each API's current version (inside the transaction). */
  private resolveApis(sdk: SdkRecord): BuildInputs['apis'] {
    return sdk.apis.map((attachment, i) => {
      const api = this.index.getResource(attachment.api_id)
      const version = attachment.version_id ? this.index.getVersionById(attachment.version_id) : this.index.getCurrentVersion(attachment.api_id)
      if (!api || !version) {
        throw new RegistryError('invalid_reference', `apis[${i}]: the API has no uploaded version to generate from`,
          [{ path: ['apis', i, 'api_id'], message: 'upload a document to this API first' }])
      }
      return { api_id: api.id, slug: api.slug, name: api.name, version_id: version.id, checksum: version.checksum }
    })
  }

  requireBuild(actor: ActorScope, id: string): BuildRecord {
    const build = this.store.getBuild(id)
    if (!build || build.organization_id !== actor.organization.id) throw notFound('build')
    return build
  }

  listBuilds(actor: ActorScope, page: PageRequest, sdkId?: string): Page<BuildRecord> {
    if (sdkId === undefined) return this.store.listBuilds({ org: actor.organization.id }, page)
    return this.store.listBuilds({ sdkId: this.require(actor, sdkId).id }, page)
  }

  log(actor: ActorScope, id: string): string {
    return this.store.getLog(this.requireBuild(actor, id).id) ?? ''
  }

  artifact(actor: ActorScope, id: string): Buffer {
    const build = this.requireBuild(actor, id)
    const artifact = this.store.getArtifact(build.id)
    if (!artifact) throw notFound('artifact (the build has not generated its files)')
    return artifact
  }

  /** Cancels a queued build (it never runs) or a running one (its generator or delivery is aborted). */
  async cancel(actor: ActorScope, id: string): Promise<BuildRecord> {
    this.requireBuild(actor, id)
    const build = await this.store.transaction(() => {
      const current = this.requireBuild(actor, id)
      if (current.status !== 'queued' && current.status !== 'running') {
        throw new RegistryError('conflict', `the build is already ${current.status}`)
      }
      const at = now()
      const canceled: BuildRecord = { ...current, status: 'canceled', error: 'canceled by request', updated_at: at, finished_at: at }
      this.store.putBuild(canceled)
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
