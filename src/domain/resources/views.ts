/** The objects clients see (CONTRACT §3), built from stored records. */
import { roleOf } from '../accounts/organizations.js'
import type { ReadStores } from '../../storage/port.js'
import type {
  BlockingSeverity, KeyRecord, OrganizationRecord, ResourceKind, ResourceRecord, VersionRecord,
} from '../../storage/registry-records.js'

const PARENT_FIELD: Record<ResourceKind, string> = { api: 'api_id', schema: 'schema_id', ruleset: 'ruleset_id' }

export function versionView(version: VersionRecord): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: version.id,
    organization_id: version.organization_id,
    [PARENT_FIELD[version.kind]]: version.resource_id,
    number: version.number,
    checksum: version.checksum,
    source: version.source,
    restored_from: version.restored_from,
    size: version.size,
    format: version.format,
    created_at: version.created_at,
    updated_at: version.created_at,
  }
  if (version.kind === 'api') {
    view.openapi = version.openapi ?? null
    view.title = version.title ?? null
    view.version = version.version ?? null
    view.lint = version.lint
      ? { ruleset_id: version.lint.ruleset_id, ruleset_version_id: version.lint.ruleset_version_id, counts: version.lint.counts }
      : null
    view.converted_from = version.converted_from ?? null
  }
  return view
}

/** The threshold that applies to an API: its own, else its ruleset's default (undefined: none, or gone), else `off`. */
export function severityOf(api: ResourceRecord, ruleset: ResourceRecord | undefined): BlockingSeverity {
  if (api.blocking_severity) return api.blocking_severity
  if (!api.ruleset_id) return 'off'
  return ruleset?.blocking_severity ?? 'error'
}

/**
 * The fields a client sets on a resource, in the order views show them: the API view and the mirror's
 * metadata file both start from these.
 */
export function settableFields(resource: ResourceRecord): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    name: resource.name,
    slug: resource.slug,
    visibility: resource.visibility,
    description: resource.description,
  }
  if (resource.kind === 'api') {
    fields.logo_url = resource.logo_url ?? null
    fields.ruleset_id = resource.ruleset_id ?? null
    fields.blocking_severity = resource.blocking_severity ?? null
  } else if (resource.kind === 'ruleset') {
    fields.blocking_severity = resource.blocking_severity ?? 'error'
  }
  if (resource.kind !== 'ruleset') fields.compatibility = resource.compatibility ?? 'none'
  return fields
}

/** A resource as clients see it: its settings, the threshold that applies, and its current version. */
export async function resourceView(stores: ReadStores, resource: ResourceRecord): Promise<Record<string, unknown>> {
  const { current, ruleset } = await resourceViewRecords(stores, resource)
  return resourceViewOf(resource, current, ruleset)
}

/** What a resource's view is made of besides the resource: its current version and (APIs) its ruleset. */
export interface ResourceViewRecords {
  current: VersionRecord | undefined
  ruleset: ResourceRecord | undefined
}

export async function resourceViewRecords(stores: ReadStores, resource: ResourceRecord): Promise<ResourceViewRecords> {
  const current = await stores.versions.currentOf(resource)
  const ruleset = resource.kind === 'api' && resource.ruleset_id ? await stores.resources.get(resource.ruleset_id) : undefined
  return { current, ruleset }
}

/** `resourceView` from the records read: a pure function of them. */
export function resourceViewOf(resource: ResourceRecord, current: VersionRecord | undefined, ruleset: ResourceRecord | undefined): Record<string, unknown> {
  const view: Record<string, unknown> = { id: resource.id, organization_id: resource.organization_id, ...settableFields(resource) }
  if (resource.kind === 'api') view.effective_blocking_severity = severityOf(resource, ruleset)
  view.current = current ? versionView(current) : null
  view.created_at = resource.created_at
  view.updated_at = resource.updated_at
  return view
}

export function organizationView(org: OrganizationRecord): Record<string, unknown> {
  return { id: org.id, slug: org.slug, name: org.name, created_at: org.created_at, updated_at: org.updated_at }
}

/** A key as listed: never its secret or hash. */
export function keyView(key: KeyRecord): Record<string, unknown> {
  return {
    id: key.id, organization_id: key.organization_id, name: key.name, role: roleOf(key), created_at: key.created_at,
    last_used_at: key.last_used_at, revoked_at: key.revoked_at,
  }
}
