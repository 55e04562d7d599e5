/** `GET /v1/overview`: the organization at a glance (the console's first page). */
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { organizationOverview } from '../domain/accounts/overview.js'
import type { Registry } from '../domain/registry.js'
import { connectionView } from '../domain/repository-sync/repository-sync.js'
import { versionView } from '../domain/resources/views.js'
import type { ResourceRecord } from '../storage/registry-records.js'
import { actorOf } from './auth.js'
import { Connection } from './repository-routes.js'
import { Data, KEY_OR_SESSION, problems, RulesetVersion, SchemaVersion, Slug, SpecVersion, Ulid } from './schemas.js'
import { Build, buildView } from './sdk-routes.js'

const ResourceRef = Type.Object({ id: Ulid, name: Type.String(), slug: Slug })
const Count = Type.Integer({ minimum: 0 })

const Overview = Type.Object({
  counts: Type.Object({ apis: Count, schemas: Count, rulesets: Count, sites: Count, sdks: Count, builds: Count }),
  recent_versions: Type.Array(Type.Object({
    kind: Type.Enum(['api', 'schema', 'ruleset']),
    resource: ResourceRef,
    version: Type.Union([SpecVersion, SchemaVersion, RulesetVersion]),
  }), { description: 'the newest versions across the organization, newest first (versions published since this release)' }),
  failed_syncs: Type.Array(Type.Object({ api: ResourceRef, repository: Connection }), { description: 'repository connections whose last sync failed or was blocked, newest first' }),
  failed_builds: Type.Array(Build, { description: 'failed builds among the newest 100, newest first' }),
})

const ref = (resource: ResourceRecord) => ({ id: resource.id, name: resource.name, slug: resource.slug })

export function registerOverviewRoutes(app: FastifyInstance, registry: Registry): void {
  app.get('/v1/overview', {
    schema: {
      tags: ['Organization'], security: KEY_OR_SESSION,
      summary: 'The organization at a glance: counts, latest versions, failed syncs and builds',
      response: { 200: Data(Overview), ...problems(401) },
    },
  }, async (request) => {
    const overview = await organizationOverview(registry, actorOf(request))
    return {
      data: {
        counts: overview.counts,
        recent_versions: overview.recentVersions.map(({ resource, version }) => ({ kind: resource.kind, resource: ref(resource), version: versionView(version) })),
        failed_syncs: overview.failedSyncs.map(({ api, connection }) => ({ api: ref(api), repository: connectionView(connection, registry.secrets) })),
        failed_builds: overview.failedBuilds.map(buildView),
      },
    }
  })
}
