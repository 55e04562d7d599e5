import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { changelogEntryView } from '../domain/changes/changelog.js'
import { toPageRequest } from '../domain/resources/pagination.js'
import type { Registry } from '../domain/registry.js'
import type { Reader } from '../domain/resources/registry-refs.js'
import { resourceView, versionView } from '../domain/resources/views.js'
import { optionalKeys } from './auth.js'
import { sendDocument } from './document-reply.js'
import { KINDS } from './resource-routes.js'
import type { ResourceKind, ResourceRecord } from '../storage/registry-records.js'
import { atomFeed, changelogItem } from '../sites/changelog.js'
import { SearchAnswer, searchAnswer, SearchQuery } from './search-routes.js'
import { ChangelogEntry, Data, DocumentResponses, FormatQuery, List, OPTIONAL_KEY, PageQuery, problems, Slug } from './schemas.js'

/**
 * Whose schemas a bundled public document may show: a key of the resource's organization sees its
 * private schemas too; anyone else, public ones only.
 */
function readerOf(request: FastifyRequest, resource: ResourceRecord): Reader {
  return request.actor?.organization.id === resource.organization_id ? { organizationId: resource.organization_id } : 'public'
}

/** Versions in a changelog's Atom feed: readers poll it, and keep what they saw. */
const FEED_ENTRIES = 20

const OrgSlug = Type.String({ minLength: 1, maxLength: 64, description: "the organization's slug" })
const security = OPTIONAL_KEY
const tags = ['Public registry']

/**
 * The public registry (CONTRACT §6): public APIs, schemas and rulesets by organization and slug, no key
 * needed. A key of the same organization also reaches its private resources.
 */
export async function publicRoutes(app: FastifyInstance, options: { registry: Registry }): Promise<void> {
  const { registry } = options
  const pub = registry.publicRegistry
  optionalKeys(app, registry)

  app.get('/@:org/search', {
    schema: {
      tags, security, params: Type.Object({ org: OrgSlug }), querystring: SearchQuery,
      summary: "Search an organization's public APIs, schemas and rulesets (a key of the organization also finds its private ones), ranked as GET /v1/search",
      response: { 200: SearchAnswer, ...problems(400, 401, 404) },
    },
  }, async (request) => {
    const { q, kind, page, limit } = request.query as { q: string; kind?: ResourceKind; page?: number; limit?: number }
    const { org } = request.params as { org: string }
    return searchAnswer(registry.storage.read, await pub.search(org, { q, kind }, toPageRequest(page, limit), request.actor ?? undefined))
  })

  for (const k of KINDS) {
    const collection = `/@:org/${k.plural}`
    const item = `${collection}/:slug`
    const ItemParams = Type.Object({ org: OrgSlug, slug: Slug })
    const resourceOf = (request: FastifyRequest) => {
      const { org, slug } = request.params as { org: string; slug: string }
      return pub.get(org, k.kind, slug, request.actor ?? undefined)
    }

    app.get(collection, {
      schema: { tags, security, summary: `Public ${k.plural} of an organization`, params: Type.Object({ org: OrgSlug }), querystring: PageQuery, response: { 200: List(k.object), ...problems(400, 401, 404) } },
    }, async (request) => {
      const { page, limit } = request.query as { page?: number; limit?: number }
      const { org } = request.params as { org: string }
      const result = await pub.list(org, k.kind, toPageRequest(page, limit), request.actor ?? undefined)
      return { data: await Promise.all(result.items.map((r) => resourceView(registry.storage.read, r))), total: result.total }
    })

    app.get(item, {
      schema: { tags, security, summary: `A public ${k.kind}`, params: ItemParams, response: { 200: Data(k.object), ...problems(400, 401, 404) } },
    }, async (request) => ({ data: await resourceView(registry.storage.read, await resourceOf(request)) }))

    app.get(`${item}/latest`, {
      schema: { tags, security, summary: 'The current document, with ETag', params: ItemParams, querystring: FormatQuery, response: { ...DocumentResponses, ...problems(400, 401, 404, 422) } },
    }, async (request, reply) => {
      const resource = await resourceOf(request)
      return sendDocument(request, reply, registry.versions, await registry.versions.current(resource), readerOf(request, resource))
    })

    app.get(`${item}/versions`, {
      schema: { tags, security, summary: 'Versions, newest first', params: ItemParams, querystring: PageQuery, response: { 200: List(k.version), ...problems(400, 401, 404) } },
    }, async (request) => {
      const { page, limit } = request.query as { page?: number; limit?: number }
      const result = await registry.versions.list(await resourceOf(request), toPageRequest(page, limit))
      return { data: result.items.map(versionView), total: result.total }
    })

    if (k.kind === 'api' || k.kind === 'schema') {
      app.get(`${item}/changelog`, {
        schema: { tags, security, summary: 'The changelog: versions newest first, with what changed from the one before', params: ItemParams, querystring: PageQuery, response: { 200: List(ChangelogEntry(k.version)), ...problems(400, 401, 404, 503) } },
      }, async (request) => {
        const { page, limit } = request.query as { page?: number; limit?: number }
        const result = await registry.changelog.page(await resourceOf(request), toPageRequest(page, limit))
        return { data: result.items.map(changelogEntryView), total: result.total }
      })

      app.get(`${item}/changelog.atom`, {
        schema: {
          tags, security, summary: 'The changelog as an Atom feed (the 20 latest versions)', params: ItemParams,
          response: { 200: { description: 'an Atom feed', content: { 'application/atom+xml': { schema: Type.String() } } }, ...problems(400, 401, 404, 503) },
        },
      }, async (request, reply) => {
        const resource = await resourceOf(request)
        const { items } = await registry.changelog.page(resource, toPageRequest(1, FEED_ENTRIES))
        const { org } = request.params as { org: string }
        const base = `${request.protocol}://${request.host}/@${encodeURIComponent(org)}/${k.plural}/${encodeURIComponent(resource.slug)}`
        const body = atomFeed({
          id: `${base}/changelog.atom`,
          title: `${resource.name}: changelog`,
          self: `${base}/changelog.atom`,
          alternate: `${base}/changelog`,
          updated: items[0]?.version.created_at ?? resource.created_at,
          items: items.map(changelogItem),
          entryLink: (entry) => `${base}/versions/${entry.number}`,
        })
        return reply.type('application/atom+xml; charset=utf-8').send(body)
      })
    }

    app.get(`${item}/versions/:number`, {
      schema: {
        tags, security, summary: "One version's document, by number", querystring: FormatQuery,
        params: Type.Object({ org: OrgSlug, slug: Slug, number: Type.Integer({ minimum: 1 }) }),
        response: { ...DocumentResponses, ...problems(400, 401, 404, 422) },
      },
    }, async (request, reply) => {
      const resource = await resourceOf(request)
      const version = await registry.versions.byNumber(resource, (request.params as { number: number }).number)
      return sendDocument(request, reply, registry.versions, version, readerOf(request, resource))
    })
  }
}
