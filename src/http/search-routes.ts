/** `GET /v1/search`: the organization's APIs, schemas and rulesets, ranked (src/domain/resources/search.ts). */
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { toPageRequest } from '../domain/resources/pagination.js'
import type { Registry } from '../domain/registry.js'
import { resourceView } from '../domain/resources/views.js'
import type { SearchHit as Hit } from '../domain/resources/search.js'
import type { ReadStores } from '../storage/port.js'
import type { Page, ResourceKind } from '../storage/registry-records.js'
import { actorOf, tenantOfRequest } from './auth.js'
import { Api, KEY_OR_SESSION, PageQuery, problems, Ruleset, Schema } from './schemas.js'

export const SearchQuery = Type.Object({
  q: Type.String({ minLength: 1, maxLength: 200, description: 'words to find; a word matches by prefix and with a typo or two' }),
  kind: Type.Optional(Type.Enum(['api', 'schema', 'ruleset'], { description: 'only resources of this kind' })),
  ...PageQuery.properties,
})

const SearchHit = Type.Object({
  kind: Type.Enum(['api', 'schema', 'ruleset']),
  score: Type.Number({ description: 'relevance: higher first' }),
  matched: Type.Array(Type.String(), { description: 'where the words were found: name, slug, description, title, document' }),
  resource: Type.Union([Api, Schema, Ruleset]),
})

/** A page of hits as the search routes answer it. */
export async function searchAnswer(stores: ReadStores, found: Page<Hit>) {
  return {
    data: await Promise.all(found.items.map(async (hit) => ({
      kind: hit.resource.kind, score: hit.score, matched: hit.matched, resource: await resourceView(stores, hit.resource),
    }))),
    total: found.total,
  }
}

export const SearchAnswer = Type.Object({ data: Type.Array(SearchHit), total: Type.Integer() })

export function registerSearchRoutes(app: FastifyInstance, registry: Registry): void {
  app.get('/v1/search', {
    schema: {
      tags: ['Organization'], security: KEY_OR_SESSION,
      summary: "Search the organization's APIs, schemas and rulesets: names, slugs, descriptions and their current documents (title, paths, operation ids, summaries, tags)",
      querystring: SearchQuery,
      response: { 200: SearchAnswer, ...problems(400, 401) },
    },
  }, async (request) => {
    const { q, kind, page, limit } = request.query as { q: string; kind?: ResourceKind; page?: number; limit?: number }
    const found = await registry.search.search(actorOf(request).organization.id, { q, kind }, toPageRequest(page, limit), tenantOfRequest(request))
    return searchAnswer(registry.storage.read, found)
  })
}
