import { createServer, type IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerFactory } from 'fastify'
import { Type } from 'typebox'
import type { Registry } from '../domain/registry.js'
import { couldBeSiteHost, normalizeHost, type PublishedApi, type SiteRecord, type Sites } from '../domain/sites/sites.js'
import { RegistryError, notFound } from '../errors.js'
import { SiteAssets } from '../sites/assets.js'
import {
  changelogPage, guidePage, landingPage, notFoundPage, referenceIndexPage, referencePage, referencePartPage, type SiteApiSummary, type SiteContext,
} from '../sites/pages.js'
import { registryNotFoundPage } from '../sites/registry-pages.js'
import { sendAsset } from './asset-reply.js'
import { sendDocument, sendGzippedJson } from './document-reply.js'
import { sendPage } from './html-reply.js'
import { changelogItem } from '../sites/changelog.js'
import { DocumentResponses, FormatQuery, GzippedJsonResponses, HtmlPage, NO_KEY, problems } from './schemas.js'

/**
 * Requests to a site's own domain are routed under this internal prefix (see `siteHostRewriter`), so
 * that such a host serves the site's pages and nothing else. Without the mark the rewrite leaves on
 * the request, the prefix answers 404.
 */
export const SITE_HOST_PREFIX = '/_site-host'
const SITE_ID = Symbol('the site this request\'s host names')
type MarkedRequest = IncomingMessage & { [SITE_ID]?: string }


/**
 * Fastify's `rewriteUrl`: a request whose Host is one of a site's domains goes to that site's pages.
 * One Map lookup per request (none while no site has a domain); `/healthz` and `/readyz` stay
 * reachable on every host, and the public registry's host is never taken by a site.
 */
export function siteHostRewriter(sites: Sites, publicHost?: string): (req: IncomingMessage) => string {
  const registryHost = publicHost === undefined ? undefined : normalizeHost(publicHost)
  return (req) => {
    const url = req.url ?? '/'
    const siteId = sites.siteForHost(req.headers.host)
    if (siteId === undefined || url === '/healthz' || url === '/readyz') return url
    if (!couldBeSiteHost(req.headers.host, registryHost)) return url
    ;(req as MarkedRequest)[SITE_ID] = siteId
    return SITE_HOST_PREFIX + url
  }
}

/**
 * Fastify's `serverFactory`: the HTTP server Fastify would make, whose requests (those whose Host could
 * be a site's: `couldBeSiteHost`; an IP address, a name without a dot, the public host never is) wait until the domain
 * map holds every committed domain change (`Sites.refreshed`, one small read, shared by the requests
 * that arrive together) before `siteHostRewriter` routes them, so that a domain another replica added
 * or removed routes on the next request to this one. `app.inject` calls the router directly and skips
 * this wait: in-process, the map follows only this process's own changes (applied at once).
 */
export function siteHostServer(sites: Sites, publicHost?: string): FastifyServerFactory {
  const registryHost = publicHost === undefined ? undefined : normalizeHost(publicHost)
  return (route, options) => {
    const server = createServer(options.http ?? {}, (req, res) => {
      if (!couldBeSiteHost(req.headers.host, registryHost)) return route(req, res)
      void sites.refreshed().then(() => route(req, res))
    })
    // What Fastify sets on the server it makes itself (its defaults are filled in by then).
    server.keepAliveTimeout = options.keepAliveTimeout as number
    server.requestTimeout = options.requestTimeout as number
    server.setTimeout(options.connectionTimeout as number)
    if ((options.maxRequestsPerSocket as number) > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket as number
    return server
  }
}

interface Located {
  site: SiteRecord
  /** Path prefix of the site's pages in links. */
  base: string
}

/** Finds the site a request is for (404 when there is no such public site). */
type Locate = (request: FastifyRequest) => Promise<Located>

/** Versions on a site's changelog page, newest first (the full history is in the public registry's changelog). */
const CHANGELOG_PAGE_VERSIONS = 50

const PageParams = {
  guide: Type.String({ maxLength: 200 }), api: Type.String({ maxLength: 200 }), part: Type.String({ maxLength: 200 }), file: Type.String({ maxLength: 200 }),
}
const SiteParams = { org: Type.String({ minLength: 1, maxLength: 64 }), site: Type.String({ minLength: 1, maxLength: 64 }) }

/** What a page route answers: the page, or the site's own "Page not found" (HTML too). */
const PageResponses = (page: string) => ({
  200: HtmlPage(page),
  ...problems(400),
  404: HtmlPage("Page not found: the site's own page when the site is public, a bare one otherwise"),
})

/** An API as the pages show it: its slug and name, and title and version from its current document. */
const apiSummary = ({ api, current }: PublishedApi): SiteApiSummary => ({
  slug: api.slug, name: api.name, title: current.title ?? null, version: current.version ?? null, description: api.description,
})

/**
 * The public pages of documentation sites: at `/@{org}/sites/{slug}/…` (on the public registry's host
 * when `REGISTRY_PUBLIC_HOST` is set, else on every host) and at the root of each site domain.
 */
export async function sitePages(app: FastifyInstance, options: { registry: Registry }): Promise<void> {
  const { registry } = options
  const sites = registry.sites
  const parts = registry.referenceParts
  const assets = SiteAssets.shared()

  const contextOf = async ({ site, base }: Located): Promise<SiteContext> => ({
    base,
    title: site.title ?? site.name,
    apis: (await sites.publishedApis(site)).map(apiSummary),
    guides: (await sites.publicGuides(site)).map((g) => ({ slug: g.slug, title: g.title })),
    assets: assets.urls(base),
  })

  /** The site's own 404 page when the site is there (public), else the bare one. */
  const notFoundFor = async (request: FastifyRequest, locate: Locate): Promise<string> => {
    try {
      return notFoundPage(await contextOf(await locate(request)))
    } catch (error) {
      if (!(error instanceof RegistryError) || error.code !== 'not_found') throw error
      return registryNotFoundPage()
    }
  }

  /** An HTML page; a missing site, guide or API is the HTML 404 page. */
  const page = (locate: Locate, render: (request: FastifyRequest) => string | Promise<string>) =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      let status = 200
      let body: string
      try {
        body = await render(request)
      } catch (error) {
        if (!(error instanceof RegistryError) || error.code !== 'not_found') throw error
        status = 404
        body = await notFoundFor(request, locate)
      }
      return sendPage(reply, status, body)
    }

  const register = (prefix: string, params: Record<string, ReturnType<typeof Type.String>>, hide: boolean,
    locate: Locate) => {
    const schema = (summary: string, extra: Record<string, ReturnType<typeof Type.String>> = {}) => ({
      hide, tags: ['Sites (pages)'], security: NO_KEY, summary, params: Type.Object({ ...params, ...extra }),
    })
    const pageSchema = (summary: string, extra: Record<string, ReturnType<typeof Type.String>> = {}) => ({ ...schema(summary, extra), response: PageResponses(summary) })
    const param = (request: FastifyRequest, name: string) => (request.params as Record<string, string>)[name]

    // Described at its address without the slash, which redirects here (a path ending in a slash is ambiguous to many tools).
    app.get(`${prefix}/`, { schema: { ...pageSchema("A site's landing page (HTML)"), hide: true } },
      page(locate, async (request) => landingPage(await contextOf(await locate(request)))))

    app.get(`${prefix}/guides/:guide`, { schema: pageSchema('A guide (HTML)', { guide: PageParams.guide }) }, page(locate, async (request) => {
      const located = await locate(request)
      return guidePage(await contextOf(located), await sites.publicGuide(located.site, param(request, 'guide')))
    }))

    // A large document's reference is an index of parts, each on its own page (domain/sites/reference-parts.ts).
    app.get(`${prefix}/apis/:api`, { schema: pageSchema("An API's reference page (HTML, Scalar), or the index of its parts", { api: PageParams.api }) }, page(locate, async (request) => {
      const located = await locate(request)
      const published = await sites.publishedApi(located.site, param(request, 'api'))
      if (!parts.isSplit(published.current)) return referencePage(await contextOf(located), apiSummary(published))
      return referenceIndexPage(await contextOf(located), apiSummary(published), await parts.parts(published.current))
    }))

    app.get(`${prefix}/apis/:api/changelog`, { schema: pageSchema("An API's changelog (HTML)", { api: PageParams.api }) }, page(locate, async (request) => {
      const located = await locate(request)
      const published = await sites.publishedApi(located.site, param(request, 'api'))
      const { items, total } = await registry.changelog.page(published.api, { offset: 0, limit: CHANGELOG_PAGE_VERSIONS })
      return changelogPage(await contextOf(located), apiSummary(published), items.map(changelogItem), total)
    }))

    app.get(`${prefix}/apis/:api/parts/:part`, {
      schema: pageSchema("One part of a large API's reference (HTML, Scalar)", { api: PageParams.api, part: PageParams.part }),
    }, page(locate, async (request) => {
      const located = await locate(request)
      const published = await sites.publishedApi(located.site, param(request, 'api'))
      if (!parts.isSplit(published.current)) throw notFound('part')
      const all = await parts.parts(published.current)
      const part = all.find((p) => p.slug === param(request, 'part'))
      if (!part) throw notFound('part')
      // Scalar asks for the part's document next: start building it now.
      parts.part(published.current, part.slug).catch((error: unknown) => request.log.warn({ err: error }, 'building a reference part failed'))
      return referencePartPage(await contextOf(located), apiSummary(published), all, part)
    }))

    app.get(`${prefix}/apis/:api/parts/:part/openapi.json`, {
      schema: {
        ...schema("A part of a large API's document, for its reference page, with ETag", { api: PageParams.api, part: PageParams.part }),
        response: { ...GzippedJsonResponses, ...problems(400, 404) },
      },
    }, async (request, reply) => {
      const { current } = await sites.publishedApi((await locate(request)).site, param(request, 'api'))
      if (!parts.isSplit(current)) throw notFound('part')
      const slug = param(request, 'part')
      const { gzipped } = await parts.part(current, slug)
      return sendGzippedJson(request, reply, `"${current.checksum}/${slug}"`, gzipped)
    })

    app.get(`${prefix}/apis/:api/openapi.json`, {
      schema: {
        ...schema("The API's current document for its reference page, with ETag", { api: PageParams.api }),
        querystring: FormatQuery, response: { ...DocumentResponses, ...problems(400, 404) },
      },
    }, async (request, reply) => {
      const { current } = await sites.publishedApi((await locate(request)).site, param(request, 'api'))
      return sendDocument(request, reply, registry.versions, current, 'public')
    })

    // Any other path under the site: the site's own "Page not found" (docs/sites.md).
    app.get(`${prefix}/*`, { schema: { hide: true } }, page(locate, () => {
      throw notFound()
    }))

    app.get(`${prefix}/_assets/:file`, {
      schema: {
        ...schema('A static file of the pages (Scalar, styles, icon), cached as immutable (its name changes with its content)', { file: PageParams.file }),
        response: {
          200: {
            description: 'the file (Content-Encoding: gzip when the request accepts it)',
            content: Object.fromEntries(['text/javascript', 'text/css', 'image/svg+xml'].map((type) => [type, { schema: Type.String() }])),
          },
          ...problems(400, 404),
        },
      },
    }, async (request, reply) => {
      await locate(request)
      const asset = assets.get(param(request, 'file'))
      if (!asset) throw notFound('file')
      return sendAsset(request, reply, asset)
    })
  }

  register('/@:org/sites/:site', SiteParams, false, async (request) => {
    const { org, site } = request.params as { org: string; site: string }
    return { site: await sites.publicSite(org, site), base: `/@${org}/sites/${site}` }
  })
  app.get('/@:org/sites/:site', {
    schema: {
      tags: ['Sites (pages)'], security: NO_KEY, params: Type.Object(SiteParams),
      summary: "A public site: redirects to its landing page (HTML), the same address with a slash at the end",
      response: {
        301: { type: 'null', description: "Moved Permanently to the site's landing page", headers: { location: Type.String({ description: '/@{org}/sites/{site}/' }) } },
        ...problems(400, 404),
      },
    },
  }, async (request, reply) => {
    const { org, site } = request.params as { org: string; site: string }
    await sites.publicSite(org, site)
    return reply.redirect(`/@${encodeURIComponent(org)}/sites/${encodeURIComponent(site)}/`, 301)
  })

  register(SITE_HOST_PREFIX, {}, true, async (request) => {
    const siteId = (request.raw as MarkedRequest)[SITE_ID]
    if (siteId === undefined) throw notFound()
    return { site: await sites.publicSiteById(siteId), base: '' }
  })
}
