/**
 * `/` and `/@{org}` (docs/api.md, "Browsers"): an HTML page for a browser, JSON for everyone else, from
 * the same public index. `/` is served on every host; on the public registry's host it shows only the
 * public index, since the rest of the service is not served there.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { OrganizationIndex, PublicResource } from '../domain/public/public-index.js'
import { toPageRequest } from '../domain/resources/pagination.js'
import type { Registry } from '../domain/registry.js'
import { RegistryError } from '../errors.js'
import { REGISTRY_PAGE_CSP, homePage, organizationPage, organizationSearchPage, registryNotFoundPage, type ServiceLinks } from '../sites/registry-pages.js'
import { prefersHtml, sendPage } from './html-reply.js'
import { Data, NO_KEY, Nullable, ProblemRef, problems } from './schemas.js'

const LINKS: ServiceLinks = { docs: '/docs', openapi: '/openapi.json', console: '/console' }

const Counts = Type.Object({ apis: Type.Integer(), schemas: Type.Integer(), rulesets: Type.Integer(), sites: Type.Integer() })
const Home = Type.Object({
  name: Type.String(),
  version: Type.String({ description: 'the version of the interface this server serves' }),
  links: Type.Object({ docs: Type.String(), openapi: Type.String(), console: Type.String() }, { description: 'absent on the public registry host' }),
  organizations: Type.Array(Type.Object({ slug: Type.String(), name: Type.String(), url: Type.String(), public: Counts }), {
    description: 'organizations with anything public, by slug (at most 100)',
  }),
})
const IndexEntry = Type.Object({
  slug: Type.String(), name: Type.String(), description: Nullable(Type.String()),
  version: Nullable(Type.String({ description: "the current version's info.version (APIs)" })),
  number: Nullable(Type.Integer({ description: 'the current version number; null before the first document' })),
  latest: Nullable(Type.String({ description: 'where the current document is' })),
})
const OrganizationIndexBody = Type.Object({
  organization: Type.Object({ slug: Type.String(), name: Type.String() }),
  apis: Type.Array(IndexEntry), schemas: Type.Array(IndexEntry), rulesets: Type.Array(IndexEntry),
  sites: Type.Array(Type.Object({ slug: Type.String(), name: Type.String(), title: Nullable(Type.String()), url: Type.String() })),
  totals: Counts,
})

function entry(org: string, plural: string, { resource, current }: PublicResource) {
  return {
    slug: resource.slug, name: resource.name, description: resource.description,
    version: current?.version ?? null, number: current?.number ?? null,
    latest: current ? `/@${org}/${plural}/${resource.slug}/latest` : null,
  }
}

function organizationJson(index: OrganizationIndex) {
  const org = index.organization.slug
  return {
    organization: { slug: org, name: index.organization.name },
    apis: index.apis.map((r) => entry(org, 'apis', r)),
    schemas: index.schemas.map((r) => entry(org, 'schemas', r)),
    rulesets: index.rulesets.map((r) => entry(org, 'rulesets', r)),
    sites: index.sites.map((s) => ({ slug: s.slug, name: s.name, title: s.title, url: `/@${org}/sites/${s.slug}/` })),
    totals: index.counts,
  }
}

/** Search results on a page of `/@{org}`. */
const SEARCH_PAGE = 20

type Service = { name: string; version: string }

/** One of the registry's own pages, under their policy; it varies with Accept (the same URL answers JSON). */
const page = (reply: FastifyReply, status: number, body: string) => sendPage(reply.header('vary', 'Accept'), status, body, REGISTRY_PAGE_CSP)

/** The registry's HTML "Page not found", for a browser that asks for a page that is not there. */
export const registryNotFound = (service: Service) => (reply: FastifyReply): FastifyReply => page(reply, 404, registryNotFoundPage(service))

export function registerHomeRoutes(app: FastifyInstance, registry: Registry, options: Service & { publicHost?: string }): void {
  const service = { name: options.name, version: options.version }
  const publicHost = options.publicHost?.toLowerCase()
  const onPublicHost = (request: FastifyRequest) =>
    publicHost !== undefined && (request.headers.host ?? '').toLowerCase().replace(/:\d+$/, '') === publicHost
  // With a public host, the organizations' indexes are served there only: link them on that host.
  const organizationUrl = (request: FastifyRequest, slug: string) =>
    publicHost !== undefined && !onPublicHost(request) ? `//${publicHost}/@${slug}` : `/@${slug}`

  app.get('/', {
    schema: {
      tags: ['Service'], security: NO_KEY,
      summary: 'What this server is and where to go: an HTML page for browsers (Accept: text/html), this JSON for others',
      response: {
        200: { description: 'JSON, or an HTML page when Accept ranks text/html above JSON', content: { 'application/json': { schema: Data(Home) }, 'text/html': { schema: Type.String() } } },
        ...problems(),
      },
    },
  }, async (request, reply) => {
    const links = onPublicHost(request) ? undefined : LINKS
    const organizations = (await registry.publicIndex.organizations()).map((entry) => ({ entry, href: organizationUrl(request, entry.organization.slug) }))
    if (prefersHtml(request.headers.accept)) return page(reply, 200, homePage(service, links, organizations))
    return reply.header('vary', 'Accept').send({
      data: {
        ...service, ...(links && { links }),
        organizations: organizations.map(({ entry: { organization, counts }, href }) => ({
          slug: organization.slug, name: organization.name, url: href, public: counts,
        })),
      },
    })
  })

  const organizationIndex = async (request: FastifyRequest, reply: FastifyReply) => {
    const html = prefersHtml(request.headers.accept)
    const { org } = request.params as { org: string }
    // A browser's search (the page's form): JSON clients search at /@{org}/search.
    const { q, page: number } = request.query as { q?: string; page?: number }
    const words = q?.trim()
    try {
      if (html && words) return page(reply, 200, organizationSearchPage(service, await registry.publicIndex.search(org, words, toPageRequest(number, SEARCH_PAGE))))
      const index = await registry.publicIndex.organization(org)
      if (html) return page(reply, 200, organizationPage(service, index))
      return reply.header('vary', 'Accept').send({ data: organizationJson(index) })
    } catch (error) {
      if (html && error instanceof RegistryError && error.code === 'not_found') return registryNotFound(service)(reply)
      throw error
    }
  }
  const params = Type.Object({ org: Type.String({ minLength: 1, maxLength: 64, description: "the organization's slug" }) })
  const querystring = Type.Object({
    q: Type.Optional(Type.String({ maxLength: 200, description: 'for a browser: the page lists the public resources that match these words (JSON clients: GET /@{org}/search)' })),
    page: Type.Optional(Type.Integer({ minimum: 1, description: "the page of a search's results" })),
  })
  app.get('/@:org', {
    schema: {
      tags: ['Public registry'], security: NO_KEY, params, querystring,
      summary: "An organization's public index: its public APIs, schemas, rulesets (the first 100 of each) and sites; an HTML page for browsers",
      response: {
        200: {
          description: 'JSON, or an HTML page when Accept ranks text/html above JSON (with ?q=, the page of search results)',
          content: { 'application/json': { schema: Data(OrganizationIndexBody) }, 'text/html': { schema: Type.String() } },
        },
        ...problems(400),
        404: {
          description: 'no such organization: problem+json (not_found), or the HTML page "Page not found" for a browser',
          content: { 'application/problem+json': { schema: ProblemRef }, 'text/html': { schema: Type.String() } },
        },
      },
    },
  }, organizationIndex)
  app.get('/@:org/', { schema: { hide: true, params, querystring } }, organizationIndex)
}
