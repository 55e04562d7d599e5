import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { stringify } from 'yaml'
import type { Registry } from '../domain/registry.js'
import { RegistryError } from '../errors.js'
import { sendProblem } from './problems.js'
import { NO_KEY, problems } from './schemas.js'

const Readiness = Type.Object({ status: Type.Literal('ready'), storage: Type.Boolean(), workers: Type.Boolean() })

/** Health, readiness and the service's own OpenAPI description. */
export function registerServiceRoutes(app: FastifyInstance, registry: Registry): void {
  // Probes are never rate limited: behind a proxy they share one client address with the traffic.
  app.get('/healthz', {
    config: { rateLimit: false },
    schema: { tags: ['Service'], security: NO_KEY, summary: 'The process is up', response: { 200: Type.Object({ status: Type.Literal('ok') }), ...problems() } },
  }, async () => ({ status: 'ok' as const }))

  app.get('/readyz', {
    config: { rateLimit: false },
    schema: {
      tags: ['Service'], security: NO_KEY, summary: 'Ready to serve: the storage is open and a document worker is running',
      response: { 200: Readiness, ...problems(503) },
    },
  }, async (_request, reply) => {
    const { storage, workers } = await registry.readiness()
    if (storage && workers) return { status: 'ready' as const, storage, workers }
    const missing = [storage ? '' : 'the storage is not open', workers ? '' : 'no document worker is running'].filter(Boolean)
    return sendProblem(reply, new RegistryError('unavailable', `not ready: ${missing.join('; ')}`))
  })

  let yaml: string | undefined
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  app.get('/openapi.yaml', { schema: { hide: true } }, async (_request, reply) => {
    yaml ??= stringify(app.swagger())
    return reply.type('application/yaml; charset=utf-8').send(yaml)
  })
}
