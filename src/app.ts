import Fastify, { LogController, type FastifyInstance } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { Config } from './config.js'
import { newId } from './domain/ids.js'
import type { Registry } from './domain/registry.js'
import { notFound } from './errors.js'
import { requireKeys } from './http/auth.js'
import { registerBodyParsers } from './http/body-parsers.js'
import { registerProblemHandlers, sendProblem, toRegistryError } from './http/problems.js'
import { publicRoutes } from './http/public-routes.js'
import { KINDS, registerResourceRoutes } from './http/resource-routes.js'
import { registerServiceRoutes } from './http/service-routes.js'
import { compileValidator } from './http/validation.js'

export type AppConfig = Pick<Config, 'bodyLimit' | 'publicHost' | 'rateLimitPerMinute' | 'logLevel'>

const REQUEST_ID = /^[\w.:-]{1,128}$/

/** Builds the HTTP application around an open registry; `server.ts` starts it. */
export async function buildApp(registry: Registry, config: AppConfig, options: { logger?: boolean } = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger === false ? false : {
      level: config.logLevel,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'], censor: '[redacted]' },
    },
    bodyLimit: config.bodyLimit,
    // Per-request access logs cost throughput on every GET; errors are still logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id']
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : newId()
    },
    return503OnClosing: true,
    // Errors Fastify raises before routing (a bad URL escape, say) are problem+json like the rest.
    frameworkErrors: (error, _request, reply) => { sendProblem(reply, toRegistryError(error)) },
    routerOptions: { maxParamLength: 200 },
  })
  app.setValidatorCompiler(compileValidator)
  // Route response schemas document the service; replies are plain JSON.stringify, so a field is never
  // dropped or coerced by a schema that lags behind the objects.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data))
  app.decorateRequest('actor', null)
  registerProblemHandlers(app)
  registerBodyParsers(app)

  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id)
    reply.header('x-content-type-options', 'nosniff')
  })

  if (config.publicHost) {
    const publicHost = config.publicHost.toLowerCase()
    app.addHook('onRequest', async (request) => {
      const host = (request.headers.host ?? '').toLowerCase().replace(/:\d+$/, '')
      const path = request.url.split('?')[0]
      const isPublicRoute = path.startsWith('/@')
      if (path === '/healthz') return
      // The public host serves only the public registry; other hosts serve everything else.
      if (isPublicRoute !== (host === publicHost)) throw notFound()
    })
  }

  if (config.rateLimitPerMinute > 0) {
    await app.register(rateLimit, {
      max: config.rateLimitPerMinute,
      timeWindow: 60_000,
      hook: 'preHandler',
      keyGenerator: (request) => request.actor?.keyId ?? request.ip,
    })
  }

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'API Registry',
        version: '0.4.6',
        description: 'OpenAPI documents, JSON Schemas and Spectral rulesets with full version history and lint-gated publishes.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An organization key: sk_…' } } },
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { validatorUrl: null } as never })

  registerServiceRoutes(app)
  await app.register(async (v1) => {
    requireKeys(v1, registry)
    for (const kind of KINDS) registerResourceRoutes(v1, registry, kind)
  })
  await app.register(publicRoutes, { registry })
  return app
}
