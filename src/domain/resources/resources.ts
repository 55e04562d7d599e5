import { RegistryError, notFound } from '../../errors.js'
import { DEFAULT_RULESET } from '../../documents/defaults.js'
import type { ReadStores, Storage, Stores } from '../../storage/port.js'
import type {
  BlockingSeverity, CompatibilityPolicy, ListFilter, Page, PageRequest, ResourceKind, ResourceRecord, VersionRecord, Visibility,
} from '../../storage/registry-records.js'
import { emitEvent, resourceSummary, versionEventData } from '../events/outbox.js'
import { isUlid, newId, now } from './ids.js'
import { tenantOf, type Actor } from '../accounts/organizations.js'
import { checkSlug, deriveSlug } from './slugs.js'
import { refuseControlCharacters } from '../outbound/stored-urls.js'
import type { Uploads } from './uploads.js'

export interface CreateInput {
  name: string
  slug?: string
  visibility?: Visibility
  description?: string | null
  ruleset_id?: string
  blocking_severity?: BlockingSeverity
  /** APIs and schemas (docs/changes.md); null or absent is `none`. */
  compatibility?: CompatibilityPolicy | null
  document?: unknown
}

export interface UpdateInput {
  name?: string
  slug?: string
  visibility?: Visibility
  description?: string | null
  logo_url?: string | null
  ruleset_id?: string | null
  blocking_severity?: BlockingSeverity | null
  compatibility?: CompatibilityPolicy | null
}

/** `none` is stored as null, like an absent policy: one way to say there is no gate. */
function storedPolicy(policy: CompatibilityPolicy | null | undefined): CompatibilityPolicy | null {
  return policy === undefined || policy === null || policy === 'none' ? null : policy
}

/** What another feature does when a resource is deleted, inside the delete's transaction (`at`: the deletion's time). */
export type DeleteHook = (tx: Stores, resource: ResourceRecord, at: string) => Promise<void>

/** APIs, schemas and rulesets: the rules they share and the few where they differ. */
export class Resources {
  /**
   * Run inside the delete's transaction, after the resource's own checks: features that refer to
   * resources (sites listing APIs, SDKs attaching them, repository connections) drop or refuse the
   * reference there, through `tx`, so it commits or rolls back with the delete.
   */
  readonly deleteHooks: DeleteHook[] = []

  constructor(
    private readonly storage: Storage,
    private readonly uploads: Uploads,
  ) {}

  /**
   * A resource of this kind in the actor's organization, by id or slug (see resolveRef); anything else
   * is the same 404.
   */
  async require(actor: Pick<Actor, 'organization' | 'readAlong'>, kind: ResourceKind, ref: string): Promise<ResourceRecord> {
    const along = actor.readAlong
    if (along && along.kind === kind && along.ref === ref) return along.resource
    const org = actor.organization.id
    const { resources } = this.storage.read
    const found = isUlid(ref) ? await resources.get(ref) : undefined
    const resource = found && found.kind === kind && found.organization_id === org
      ? found
      : await resources.bySlug(org, kind, ref)
    if (!resource) throw notFound(kind)
    return resource
  }

  list(actor: Actor, kind: ResourceKind, page: PageRequest, filter?: ListFilter): Promise<Page<ResourceRecord>> {
    return this.storage.read.resources.list(actor.organization.id, kind, page, false, filter)
  }

  async create(actor: Actor, kind: ResourceKind, input: CreateInput): Promise<{ resource: ResourceRecord; version?: VersionRecord }> {
    const org = actor.organization.id
    checkSlug(input.slug)
    if (kind === 'api' && input.ruleset_id !== undefined) await this.requireRuleset(this.storage.read, org, input.ruleset_id)
    const document = kind === 'ruleset' && input.document === undefined ? DEFAULT_RULESET : input.document
    const prepared = document === undefined || kind === 'api' ? undefined : await this.uploads.prepareNew(kind, { document }, tenantOf(actor))
    if (prepared) await this.uploads.storeBlob(prepared, org)

    const at = now()
    const record: ResourceRecord = {
      id: newId(),
      organization_id: org,
      kind,
      name: input.name,
      slug: input.slug ?? deriveSlug(input.name, kind),
      visibility: input.visibility ?? 'private',
      description: input.description ?? null,
      created_at: at,
      updated_at: at,
      last_number: 0,
    }
    if (kind === 'api') {
      record.logo_url = null
      record.ruleset_id = input.ruleset_id ?? null
      record.blocking_severity = input.blocking_severity ?? null
    }
    if (kind === 'ruleset') record.blocking_severity = input.blocking_severity ?? 'error'
    if (kind !== 'ruleset') record.compatibility = storedPolicy(input.compatibility)
    const rulesetId = kind === 'api' ? input.ruleset_id : undefined
    const slugMode = input.slug === undefined ? 'derived' : 'explicit'
    return this.storage.transaction(async (tx) => {
      // The reference is checked again here: a ruleset deleted meanwhile refuses it.
      if (rulesetId !== undefined) await this.requireRuleset(tx, org, rulesetId)
      const slug = await freeSlug(tx, record, slugMode)
      let resource: ResourceRecord = { ...record, slug }
      await tx.resources.create(resource)
      let version: VersionRecord | undefined
      if (prepared) {
        // Dated with the resource, so that a new resource's updated_at is its created_at.
        version = { ...this.uploads.versionRecord(resource, 1, prepared, 'upload'), created_at: at }
        resource = await tx.versions.append(version)
      }
      await tx.mirror.append(org, resource.created_at, { change: 'create', resource })
      if (version) await tx.mirror.append(org, version.created_at, { change: 'version', resource, version })
      await emitEvent(tx, org, 'resource.created', { resource: resourceSummary(resource) }, resource.created_at)
      if (version) await emitEvent(tx, org, 'version.created', versionEventData(resource, version), version.created_at)
      return version ? { resource, version } : { resource }
    }, org)
  }

  async update(actor: Actor, kind: ResourceKind, id: string, input: UpdateInput): Promise<ResourceRecord> {
    await this.require(actor, kind, id)
    refuseControlCharacters(input.logo_url, 'logo_url')
    checkSlug(input.slug)
    return this.storage.transaction(async (tx) => {
      const current = await tx.resources.get(id)
      if (!current) throw notFound()
      if (kind === 'api' && input.ruleset_id) await this.requireRuleset(tx, current.organization_id, input.ruleset_id)
      const next: ResourceRecord = { ...current, updated_at: now() }
      if (input.name !== undefined) next.name = input.name
      if (input.slug !== undefined) next.slug = input.slug
      if (input.visibility !== undefined) next.visibility = input.visibility
      if (input.description !== undefined) next.description = input.description
      if (kind !== 'ruleset' && input.compatibility !== undefined) next.compatibility = storedPolicy(input.compatibility)
      if (kind === 'api') {
        if (input.logo_url !== undefined) next.logo_url = input.logo_url
        if (input.ruleset_id !== undefined) next.ruleset_id = input.ruleset_id
        if (input.blocking_severity !== undefined) next.blocking_severity = input.blocking_severity
      } else if (kind === 'ruleset' && input.blocking_severity !== undefined) {
        if (input.blocking_severity === null) throw new RegistryError('invalid_request', 'a ruleset default blocking_severity cannot be null')
        next.blocking_severity = input.blocking_severity
      }
      // The adapter refuses a slug taken by another resource of the kind (409).
      await tx.resources.update(next)
      await tx.mirror.append(next.organization_id, next.updated_at, { change: 'update', before: current, resource: next })
      await emitEvent(tx, next.organization_id, 'resource.updated', {
        resource: resourceSummary(next), changed: changedFields(current, next),
      }, next.updated_at)
      return next
    }, actor.organization.id)
  }

  /** Deletes a resource and its versions, its references in other features, its mirror entry and its event: one transaction. */
  async remove(actor: Actor, kind: ResourceKind, id: string): Promise<void> {
    const found = await this.require(actor, kind, id)
    await this.storage.transaction(async (tx) => {
      const resource = await tx.resources.get(found.id)
      if (!resource) throw notFound(kind)
      if (resource.kind === 'ruleset') {
        const users = await tx.resources.countApisUsingRuleset(resource.id)
        if (users > 0) {
          throw new RegistryError('conflict', `the ruleset is attached to ${users} API${users === 1 ? '' : 's'}; detach it first`)
        }
      }
      const at = now()
      for (const hook of this.deleteHooks) await hook(tx, resource, at)
      await tx.resources.remove(resource.id)
      await tx.mirror.append(resource.organization_id, at, { change: 'delete', resource })
      await emitEvent(tx, resource.organization_id, 'resource.deleted', { resource: resourceSummary(resource) }, at)
    }, found.organization_id)
  }

  private async requireRuleset(stores: ReadStores, org: string, rulesetId: string): Promise<void> {
    const ruleset = await stores.resources.get(rulesetId)
    if (!ruleset || ruleset.kind !== 'ruleset' || ruleset.organization_id !== org) {
      throw new RegistryError('invalid_reference', `ruleset_id '${rulesetId}' names no ruleset of this organization`,
        [{ path: ['ruleset_id'], message: 'no such ruleset in this organization' }])
    }
  }
}

/** The wanted slug when free; else an explicit one conflicts and a derived one gets `-2`, `-3`… */
async function freeSlug(tx: Stores, resource: ResourceRecord, mode: 'explicit' | 'derived'): Promise<string> {
  const taken = async (slug: string) => (await tx.resources.bySlug(resource.organization_id, resource.kind, slug)) !== undefined
  const wanted = resource.slug
  if (!(await taken(wanted))) return wanted
  if (mode === 'explicit') throw new RegistryError('conflict', `slug '${wanted}' is already used by another ${resource.kind}`)
  for (let n = 2; ; n++) {
    const suffix = `-${n}`
    const candidate = wanted.slice(0, 64 - suffix.length).replace(/-+$/, '') + suffix
    if (!(await taken(candidate))) return candidate
  }
}

/** The settable fields an update changed, by name (what `resource.updated` reports). */
function changedFields(before: ResourceRecord, after: ResourceRecord): string[] {
  const fields = new Set([...Object.keys(before), ...Object.keys(after)])
  fields.delete('updated_at')
  return [...fields].filter((field) => JSON.stringify(before[field as keyof ResourceRecord]) !== JSON.stringify(after[field as keyof ResourceRecord])).sort()
}
