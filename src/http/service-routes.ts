import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { stringify } from 'yaml'

/** Health and the service's own OpenAPI description. */
export function registerServiceRoutes(app: FastifyInstance): void {
  app.get('/healthz', {
    schema: { tags: ['Service'], summary: 'The process is up', response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
  }, async () => ({ status: 'ok' as const }))

  let yaml: string | undefined
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  app.get('/openapi.yaml', { schema: { hide: true } }, async (_request, reply) => {
    yaml ??= stringify(app.swagger())
    return reply.type('application/yaml; charset=utf-8').send(yaml)
  })
}
