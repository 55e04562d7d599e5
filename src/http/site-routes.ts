import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { toPageRequest } from '../domain/resources/pagination.js'
import type { Registry } from '../domain/registry.js'
import {
  DOMAIN_MAX_LENGTH, DOMAIN_PATTERN, guideView, siteView, type GuideInput, type SiteInput, type SiteUpdate,
} from '../domain/sites/sites.js'
import { actorOf } from './auth.js'
import { Data, IdOrSlug, KEY_OR_SESSION, List, Name, Nullable, PageQuery, problems, Slug, Ulid, Visibility } from './schemas.js'

const Title = Type.String({ minLength: 1, maxLength: 200 })
const Domain = Type.String({
  pattern: DOMAIN_PATTERN, maxLength: DOMAIN_MAX_LENGTH,
  description: 'a host name such as docs.example.com (no scheme, no port); stored lowercase; unique across the registry',
})
const ApiIds = Type.Array(Ulid, { uniqueItems: true, maxItems: 100, description: 'APIs of the same organization, in the order the site lists them' })
const Domains = Type.Array(Domain, { uniqueItems: true, maxItems: 20 })
const Position = Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'guides are ordered by position, then slug' })
const strict = { additionalProperties: false }

const Site = Type.Object({
  id: Ulid,
  organization_id: Ulid,
  name: Type.String(),
  slug: Slug,
  title: Nullable(Type.String({ description: 'shown on the pages; null: the name is shown' })),
  api_ids: Type.Array(Ulid),
  visibility: Visibility,
  domains: Type.Array(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
})

const Guide = Type.Object({
  id: Ulid,
  organization_id: Ulid,
  site_id: Ulid,
  slug: Slug,
  title: Type.String(),
  markdown: Type.String(),
  position: Type.Integer(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
})

/** Every field but `name` is optional on create; on update, `name` is too. */
const siteFields = {
  slug: Type.Optional(Slug),
  title: Type.Optional(Nullable(Title)),
  api_ids: Type.Optional(ApiIds),
  visibility: Type.Optional(Visibility),
  domains: Type.Optional(Domains),
}
const SiteCreate = Type.Object({ name: Name, ...siteFields }, strict)
const SiteChange = Type.Object({ name: Type.Optional(Name), ...siteFields }, strict)

const GuideBody = Type.Object({
  title: Title,
  markdown: Type.String({ maxLength: 1_000_000, description: 'CommonMark; raw HTML is shown as text' }),
  position: Type.Optional(Position),
}, strict)

const SiteParams = Type.Object({ site: IdOrSlug })
const GuideParams = Type.Object({ site: IdOrSlug, slug: Slug })
const errors = problems
const security = KEY_OR_SESSION
const tags = ['Sites']

/** `/v1/sites` and their guides (issue 6); registered inside the key-protected `/v1` scope. */
export async function siteRoutes(app: FastifyInstance, options: { registry: Registry }): Promise<void> {
  const sites = options.registry.sites
  // The site's id, also when the path names it by slug.
  const siteId = async (request: FastifyRequest) => (await sites.require(actorOf(request), (request.params as { site: string }).site)).id

  app.get('/v1/sites', {
    schema: { tags, security, summary: 'List sites, by name', querystring: PageQuery, response: { 200: List(Site), ...errors(400, 401) } },
  }, async (request) => {
    const { page, limit } = request.query as { page?: number; limit?: number }
    const result = await sites.list(actorOf(request), toPageRequest(page, limit))
    return { data: result.items.map(siteView), total: result.total }
  })

  app.post('/v1/sites', {
    schema: { tags, security, summary: 'Create a site', body: SiteCreate, response: { 201: Data(Site), ...errors(400, 401, 403, 409, 413, 415, 422) } },
  }, async (request, reply) => {
    const site = await sites.create(actorOf(request), request.body as SiteInput)
    return reply.status(201).send({ data: siteView(site) })
  })

  app.get('/v1/sites/:site', {
    schema: { tags, security, summary: 'Get a site', params: SiteParams, response: { 200: Data(Site), ...errors(400, 401, 404) } },
  }, async (request) => ({ data: siteView(await sites.require(actorOf(request), (request.params as { site: string }).site)) }))

  app.patch('/v1/sites/:site', {
    schema: {
      tags, security, summary: 'Update a site (api_ids and domains are replaced as a whole)', params: SiteParams, body: SiteChange,
      response: { 200: Data(Site), ...errors(400, 401, 403, 404, 409, 413, 415, 422) },
    },
  }, async (request) => ({ data: siteView(await sites.update(actorOf(request), await siteId(request), request.body as SiteUpdate)) }))

  app.delete('/v1/sites/:site', {
    schema: { tags, security, summary: 'Delete a site and its guides', params: SiteParams, response: { 204: Type.Null(), ...errors(400, 401, 403, 404) } },
  }, async (request, reply) => {
    await sites.remove(actorOf(request), await siteId(request))
    return reply.status(204).send()
  })

  app.get('/v1/sites/:site/guides', {
    schema: {
      tags, security, summary: "A site's guides, by position then slug", params: SiteParams, querystring: PageQuery,
      response: { 200: List(Guide), ...errors(400, 401, 404) },
    },
  }, async (request) => {
    const { page, limit } = request.query as { page?: number; limit?: number }
    const result = await sites.listGuides(actorOf(request), await siteId(request), toPageRequest(page, limit))
    return { data: result.items.map(guideView), total: result.total }
  })

  app.put('/v1/sites/:site/guides/:slug', {
    schema: {
      tags, security, summary: 'Create (201) or replace (200) a guide', params: GuideParams, body: GuideBody,
      response: { 200: Data(Guide), 201: Data(Guide), ...errors(400, 401, 403, 404, 413, 415) },
    },
  }, async (request, reply) => {
    const { slug } = request.params as { slug: string }
    const { guide, created } = await sites.putGuide(actorOf(request), await siteId(request), slug, request.body as GuideInput)
    return reply.status(created ? 201 : 200).send({ data: guideView(guide) })
  })

  app.get('/v1/sites/:site/guides/:slug', {
    schema: { tags, security, summary: 'Get a guide', params: GuideParams, response: { 200: Data(Guide), ...errors(400, 401, 404) } },
  }, async (request) => ({
    data: guideView(await sites.getGuide(actorOf(request), await siteId(request), (request.params as { slug: string }).slug)),
  }))

  app.delete('/v1/sites/:site/guides/:slug', {
    schema: { tags, security, summary: 'Delete a guide', params: GuideParams, response: { 204: Type.Null(), ...errors(400, 401, 403, 404) } },
  }, async (request, reply) => {
    await sites.removeGuide(actorOf(request), await siteId(request), (request.params as { slug: string }).slug)
    return reply.status(204).send()
  })
}
