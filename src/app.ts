import { randomBytes } from 'node:crypto'
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import swagger from '@fastify/swagger'
import type { Config, TrustProxy } from './config.js'
import type { Registry } from './domain/registry.js'
import { notFound } from './errors.js'
import { requireKeys } from './http/auth.js'
import { registerBodyParsers } from './http/body-parsers.js'
import { decodeRequestBodies } from './http/content-encoding.js'
import { registerProblemHandlers, sendProblem, toRegistryError } from './http/problems.js'
import { publicRoutes } from './http/public-routes.js'
import { KINDS, registerResourceRoutes } from './http/resource-routes.js'
import { clientErrorHandler } from './http/client-errors.js'
import { consoleRoutes } from './http/console-routes.js'
import { recordRequests, registerMetricsRoute } from './http/metrics-routes.js'
import { protectHtmlResponses } from './http/html-headers.js'
import { prefersHtml } from './http/html-reply.js'
import { throttleFailedAuthentication } from './http/auth-failures.js'
import { registerServiceRoutes } from './http/service-routes.js'
import { registerDocsRoutes } from './http/docs-routes.js'
import { registerHomeRoutes, registryNotFound } from './http/home-routes.js'
import { registerRepositoryRoutes } from './http/repository-routes.js'
import { registerKeyRoutes } from './http/key-routes.js'
import { registerEventRoutes } from './http/event-routes.js'
import { serviceDescription } from './http/description.js'
import { registerOverviewRoutes } from './http/overview-routes.js'
import { registerSearchRoutes } from './http/search-routes.js'
import { sessionRoutes } from './http/session-routes.js'
import { webhookRoutes } from './http/webhook-routes.js'
import { gitRoutes } from './http/git-routes.js'
import { registerMirrorRoutes } from './http/mirror-routes.js'
import { registerSdkRoutes } from './http/sdk-routes.js'
import { siteHostRewriter, siteHostServer, sitePages } from './http/site-pages.js'
import { siteRoutes } from './http/site-routes.js'
import { registerSharedSchemas } from './http/schemas.js'
import { compileValidator } from './http/validation.js'
import { RegistryMetrics } from './metrics/registry-metrics.js'
import { PACKAGE_VERSION } from './version.js'

export type AppConfig = Pick<Config, 'bodyLimit' | 'publicHost' | 'rateLimitPerMinute' | 'logLevel'>
  & Partial<Pick<Config, 'metricsToken' | 'authFailureLimit' | 'trustProxy'>>

const REQUEST_ID = /^[\w.:-]{1,128}$/
const SERVICE_TITLE = 'API Registry'

/**
 * Request ids: a random prefix per process and a counter. Unique across restarts and cheap: a ULID per
 * request cost about 5% of a small GET (a crypto random fill each time).
 */
function requestIds(): () => string {
  const prefix = randomBytes(6).toString('base64url')
  let counter = 0
  return () => `${prefix}-${(++counter).toString(36)}`
}

/** A hop count as a function (Fastify takes one at run time, but its types do not say so). */
function fastifyTrustProxy(trust: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof trust === 'number' ? (_address, hop) => hop < trust : trust
}

/** Headers on every response, errors included. */
function setCommonHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id)
  reply.header('x-content-type-options', 'nosniff')
}

/**
 * Builds the HTTP application around an open registry; `server.ts` starts it. `metrics` should be the
 * object the registry was opened with, so that `/metrics` also shows the domain's and workers' work;
 * without it, only HTTP metrics are recorded.
 */
export async function buildApp(
  registry: Registry, config: AppConfig, options: { logger?: boolean; metrics?: RegistryMetrics } = {},
): Promise<FastifyInstance> {
  const metrics = options.metrics ?? new RegistryMetrics()
  const nextRequestId = requestIds()
  // The sites' domain map, read from storage before the first request is routed by its Host.
  await registry.sites.load()
  const app = Fastify({
    logger: options.logger === false ? false : {
      level: config.logLevel,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'], censor: '[redacted]' },
    },
    bodyLimit: config.bodyLimit,
    // The client address (request.ip) for rate limits and /metrics: X-Forwarded-For only from the
    // proxies REGISTRY_TRUST_PROXY names, never by default (anyone could write it).
    trustProxy: fastifyTrustProxy(config.trustProxy ?? false),
    // Per-request access logs cost throughput on every GET: only at debug and trace level. Errors are
    // always logged by the error handler. Neither ever holds a header (see the redact paths).
    logController: new LogController({ disableRequestLogging: !['debug', 'trace'].includes(config.logLevel) }),
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id']
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : nextRequestId()
    },
    return503OnClosing: true,
    clientErrorHandler,
    // Errors Fastify raises before routing (a bad URL escape, say) are problem+json like the rest.
    frameworkErrors: (error, request, reply) => {
      setCommonHeaders(request, reply)
      sendProblem(reply, toRegistryError(error))
    },
    routerOptions: { maxParamLength: 200 },
    // A request to a site's own domain is routed to that site's pages (one Map lookup per request), on
    // a map that holds other replicas' domain changes too (checked before each request is routed).
    rewriteUrl: siteHostRewriter(registry.sites, config.publicHost),
    serverFactory: siteHostServer(registry.sites, config.publicHost),
  })
  app.setValidatorCompiler(compileValidator)
  // Route response schemas document the service; replies are plain JSON.stringify, so a field is never
  // dropped or coerced by a schema that lags behind the objects.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data))
  app.decorateRequest('actor', null)
  recordRequests(app, metrics)
  protectHtmlResponses(app)
  // Why a sync, a delivery or a push failed is the operator's to read, in the server's log.
  registry.log.use(app.log)
  metrics.track(registry)
  // SDK builds run while the app serves: queued builds (those left by a restart too) start when it is ready.
  app.addHook('onReady', (done) => { registry.builds.start(); done() })
  app.addHook('onClose', async () => { await registry.builds.stop() })
  // Webhook deliveries are sent while the app serves: those left due by a restart go out when it is ready.
  app.addHook('onReady', (done) => { registry.deliverer.start(); done() })
  // Repository syncs other processes left mid-sync are taken over when their leases end (closed with the registry).
  app.addHook('onReady', (done) => { registry.repositorySync.start(); done() })
  app.addHook('onClose', async () => { await registry.deliverer.stop() })
  app.addHook('onClose', (_instance, done) => {
    metrics.untrack()
    done()
  })
  const service = { name: SERVICE_TITLE, version: PACKAGE_VERSION }
  registerProblemHandlers(app, registryNotFound(service))
  registerBodyParsers(app)
  decodeRequestBodies(app)

  // Set when the request arrives rather than in onSend: error replies keep headers set before them, and
  // an onSend phase on every response cost more than the rest of a small GET's hooks together. A
  // callback hook, not an async one: no promise per request on the hottest path.
  app.addHook('onRequest', (request, reply, done) => {
    setCommonHeaders(request, reply)
    done()
  })

  throttleFailedAuthentication(app, config.authFailureLimit ?? 0)

  if (config.publicHost) {
    const publicHost = config.publicHost.toLowerCase()
    app.addHook('onRequest', async (request, reply) => {
      const host = (request.headers.host ?? '').toLowerCase().replace(/:\d+$/, '')
      const path = request.url.split('?')[0]
      const isPublicRoute = path.startsWith('/@')
      // `/` answers on every host: on the public host it is the public index (src/http/home-routes.ts).
      if (path === '/healthz' || path === '/readyz' || path === '/') return
      // The public host serves only the public registry; other hosts serve everything else.
      if (isPublicRoute === (host === publicHost)) return
      if (prefersHtml(request.headers.accept)) return registryNotFound(service)(reply)
      throw notFound()
    })
  }

  if (config.rateLimitPerMinute > 0) {
    await app.register(rateLimit, {
      max: config.rateLimitPerMinute,
      timeWindow: 60_000,
      hook: 'preHandler',
      keyGenerator: (request) => request.actor?.keyId ?? request.ip,
      // The limit headers go out with a 429 (and Retry-After) only: computing them for every response
      // cost a tenth of a small GET.
      addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
    })
  }

  registerSharedSchemas(app)
  await app.register(swagger, serviceDescription({ title: SERVICE_TITLE, version: PACKAGE_VERSION }))

  registerServiceRoutes(app, registry)
  registerDocsRoutes(app, SERVICE_TITLE)
  registerHomeRoutes(app, registry, { ...service, publicHost: config.publicHost })
  registerMetricsRoute(app, metrics, config.metricsToken)
  await app.register(async (v1) => {
    requireKeys(v1, registry)
    for (const kind of KINDS) registerResourceRoutes(v1, registry, kind)
    registerMirrorRoutes(v1, registry)
    registerSdkRoutes(v1, registry)
    registerRepositoryRoutes(v1, registry)
    registerKeyRoutes(v1, registry)
    registerEventRoutes(v1, registry)
    registerOverviewRoutes(v1, registry)
    registerSearchRoutes(v1, registry)
    await v1.register(siteRoutes, { registry })
  })
  // Console sign-in: POST /v1/session takes a key in its body, so it is outside the key-protected scope.
  await app.register(sessionRoutes, { registry })
  await app.register(publicRoutes, { registry })
  // Repository webhooks: no key (signed), raw bodies for the signature, in their own scope.
  await app.register(webhookRoutes, { registry })
  // git clone over smart HTTP: its own scope (own auth, no JSON body parsers).
  await app.register(gitRoutes, { registry, bodyLimit: config.bodyLimit })
  await app.register(sitePages, { registry })
  // The web console: a single-page app over /v1, with its own Content-Security-Policy.
  await app.register(consoleRoutes)
  return app
}
