/**
 * An organization at a glance (the console's overview, `GET /v1/overview`): how many of each thing it
 * has, its latest versions across resources, and what failed recently (repository syncs, SDK builds).
 */
import type { BuildRecord } from '../../storage/records.js'
import type { RepositoryConnectionRecord } from '../../storage/records.js'
import type { ResourceKind, ResourceRecord, VersionRecord } from '../../storage/registry-records.js'
import type { Actor } from './organizations.js'
import type { Registry } from '../registry.js'

export interface OrganizationOverview {
  counts: { apis: number; schemas: number; rulesets: number; sites: number; sdks: number; builds: number }
  recentVersions: { resource: ResourceRecord; version: VersionRecord }[]
  failedSyncs: { api: ResourceRecord; connection: RepositoryConnectionRecord }[]
  failedBuilds: BuildRecord[]
}

/** A page past the end: the lists answer only their `total`. */
const COUNT_ONLY = { offset: Number.MAX_SAFE_INTEGER, limit: 1 }
/** How far back the failed builds are looked for: the newest builds of the organization. */
const BUILDS_LOOKED_AT = 100

export async function organizationOverview(registry: Registry, actor: Actor, limit = 10): Promise<OrganizationOverview> {
  const org = actor.organization.id
  const { resources, versions } = registry.storage.read
  const count = async (kind: ResourceKind) => (await resources.list(org, kind, COUNT_ONLY)).total
  const withResource = async <T>(id: string, make: (resource: ResourceRecord) => T): Promise<T[]> => {
    const resource = await resources.get(id)
    return resource ? [make(resource)] : []
  }
  const recentVersions = (await Promise.all((await versions.recent(org, limit))
    .map((version) => withResource(version.resource_id, (resource) => ({ resource, version }))))).flat()
  const failedSyncs = (await Promise.all((await registry.repositorySync.failedSyncs(actor)).slice(0, limit)
    .map((connection) => withResource(connection.api_id, (api) => ({ api, connection }))))).flat()
  const builds = await registry.sdks.listBuilds(actor, { offset: 0, limit: BUILDS_LOOKED_AT })
  return {
    counts: {
      apis: await count('api'),
      schemas: await count('schema'),
      rulesets: await count('ruleset'),
      sites: (await registry.sites.list(actor, COUNT_ONLY)).total,
      sdks: (await registry.sdks.list(actor, COUNT_ONLY)).total,
      builds: builds.total,
    },
    recentVersions,
    failedSyncs,
    failedBuilds: builds.items.filter((build) => build.status === 'failed').slice(0, limit),
  }
}
