import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type, type TSchema } from 'typebox'
import { diffView } from '../domain/changes/changes.js'
import { changelogEntryView } from '../domain/changes/changelog.js'
import { toPageRequest } from '../domain/resources/pagination.js'
import type { Registry } from '../domain/registry.js'
import type { Classification } from '../documents/diff/types.js'
import { tenantOfRequest } from './auth.js'
import type { ResourceRecord } from '../storage/registry-records.js'
import { Change, ChangelogEntry, ChangeSummary, Classification as ClassificationSchema, KEY_OR_SESSION, List, PageQuery, problems } from './schemas.js'

/** What the resource routes lend the change routes: their path, parameters and resource lookup. */
export interface ResourceRouteContext {
  item: string
  params: TSchema
  tags: string[]
  version: TSchema
  resourceOf: (request: FastifyRequest) => Promise<ResourceRecord>
}

const errors = problems
const security = KEY_OR_SESSION

export const DiffQuery = Type.Object({
  from: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'version number; default: the version before `to`' })),
  to: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'version number; default: the current version' })),
  classification: Type.Optional(ClassificationSchema),
  ...PageQuery.properties,
})

/** `GET …/diff` and `GET …/changelog` of APIs and schemas (docs/changes.md). */
export function registerChangeRoutes(app: FastifyInstance, registry: Registry, route: ResourceRouteContext): void {
  const Diff = Type.Object({
    data: Type.Object({ from: route.version, to: route.version, summary: ChangeSummary, changes: Type.Array(Change) }),
    total: Type.Integer({ description: 'changes of the class asked for (all when none), across pages' }),
  })
  app.get(`${route.item}/diff`, {
    schema: {
      tags: route.tags, security, summary: 'What changed between two versions, breaking changes first', params: route.params,
      querystring: DiffQuery, response: { 200: Diff, ...errors(400, 401, 404, 503) },
    },
  }, async (request) => {
    const query = request.query as { from?: number; to?: number; classification?: Classification; page?: number; limit?: number }
    const diff = await registry.changes.between(await route.resourceOf(request), query.from, query.to, tenantOfRequest(request))
    return diffView(diff, toPageRequest(query.page, query.limit), query.classification)
  })

  app.get(`${route.item}/changelog`, {
    schema: {
      tags: route.tags, security, summary: 'Every version, newest first, with what changed from the version before it',
      params: route.params, querystring: PageQuery, response: { 200: List(ChangelogEntry(route.version)), ...errors(400, 401, 404, 503) },
    },
  }, async (request) => {
    const { page, limit } = request.query as { page?: number; limit?: number }
    const result = await registry.changelog.page(await route.resourceOf(request), toPageRequest(page, limit), tenantOfRequest(request))
    return { data: result.items.map(changelogEntryView), total: result.total }
  })
}
