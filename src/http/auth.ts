import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Actor } from '../domain/organizations.js'
import type { Registry } from '../domain/registry.js'

declare module 'fastify' {
  interface FastifyRequest {
    actor: Actor | null
  }
}

/** Every route registered in `app` (a `/v1` scope) requires a valid key. */
export function requireKeys(app: FastifyInstance, registry: Registry): void {
  // A callback hook: no promise per request on every authenticated route.
  app.addHook('onRequest', (request, _reply, done) => {
    try {
      request.actor = registry.organizations.authenticate(request.headers.authorization)
    } catch (error) {
      return done(error as Error)
    }
    done()
  })
}

/** Public routes: a key is optional, but one that is sent must be valid. */
export function optionalKeys(app: FastifyInstance, registry: Registry): void {
  app.addHook('onRequest', async (request) => {
    if (request.headers.authorization !== undefined) {
      request.actor = registry.organizations.authenticate(request.headers.authorization)
    }
  })
}

export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new Error('route without authentication')
  return request.actor
}
