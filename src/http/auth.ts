import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Tenant } from '../domain/documents.js'
import { allows, tenantOf, type Actor, type ResourceNamed } from '../domain/accounts/organizations.js'
import type { Registry } from '../domain/registry.js'
import { csrfTokenMatches } from '../domain/accounts/sessions.js'
import { RegistryError } from '../errors.js'
import type { KeyRole, ResourceKind } from '../storage/registry-records.js'

declare module 'fastify' {
  interface FastifyRequest {
    actor: Actor | null
  }
  interface FastifyContextConfig {
    /** The least role a key needs for the route; by default `read` for GET and HEAD, `write` for the rest. */
    role?: KeyRole
    /** A read route that names one resource of `kind` in the path parameter `param` (read with the key). */
    resourceParam?: { kind: ResourceKind; param: string }
  }
}

/** The console's session cookie (set by `POST /v1/session`, sent only to `/v1`). */
export const SESSION_COOKIE = 'registry_session'
/** The header that must carry a session's CSRF token on every request from the session that changes something. */
export const CSRF_HEADER = 'x-registry-csrf'

const READS = new Set(['GET', 'HEAD'])

/** The session id in the request's `Cookie` header, if any. */
export function sessionIdOf(request: FastifyRequest): string | undefined {
  const cookies = request.headers.cookie
  if (cookies === undefined) return undefined
  for (const pair of cookies.split(';')) {
    const at = pair.indexOf('=')
    if (at > 0 && pair.slice(0, at).trim() === SESSION_COOKIE) return pair.slice(at + 1).trim()
  }
  return undefined
}

/**
 * What the actor may do on this route: its key's role against the route's, and for a console session,
 * the CSRF header on anything but a read (a cross-site form or script cannot send it).
 */
function authorize(request: FastifyRequest, actor: Actor): void {
  const read = READS.has(request.method)
  if (actor.session && !read) {
    const token = request.headers[CSRF_HEADER]
    if (!csrfTokenMatches(actor.session.id, typeof token === 'string' ? token : undefined)) {
      throw new RegistryError('forbidden', `a change made with a console session needs its CSRF token in the ${CSRF_HEADER} header (GET /v1/session gives it)`)
    }
  }
  const needed = request.routeOptions.config?.role ?? (read ? 'read' : 'write')
  if (!allows(actor.role, needed)) {
    throw new RegistryError('forbidden', needed === 'admin'
      ? `this needs an admin key; this key's role is '${actor.role}'`
      : `this key's role is '${actor.role}': it may only read`)
  }
}

/** The resource a read route names, to be read with the key (see `FastifyContextConfig.resourceParam`). */
function resourceNamed(request: FastifyRequest): ResourceNamed | undefined {
  const named = request.routeOptions.config?.resourceParam
  const ref = named && (request.params as Record<string, string | undefined>)[named.param]
  return named && ref && READS.has(request.method) ? { kind: named.kind, ref } : undefined
}

/**
 * Every route registered in `app` (a `/v1` scope) requires a valid key: `Authorization: Bearer sk_…`,
 * or a console session cookie when no `Authorization` header is sent.
 */
export function requireKeys(app: FastifyInstance, registry: Registry): void {
  // A callback hook: no promise per request on every route authenticated by a key.
  app.addHook('onRequest', (request, _reply, done) => {
    const header = request.headers.authorization
    const sessionId = header === undefined ? sessionIdOf(request) : undefined
    if (sessionId !== undefined) {
      registry.sessions.authenticate(sessionId).then((actor) => {
        authorize(request, actor)
        request.actor = actor
      }).then(() => done(), done)
      return
    }
    registry.organizations.authenticate(header, resourceNamed(request)).then((actor) => {
      authorize(request, actor)
      request.actor = actor
    }).then(() => done(), done)
  })
}

/** Public routes: a key is optional, but one that is sent must be valid. */
export function optionalKeys(app: FastifyInstance, registry: Registry): void {
  app.addHook('onRequest', async (request) => {
    if (request.headers.authorization !== undefined) {
      request.actor = await registry.organizations.authenticate(request.headers.authorization)
    }
  })
}

/**
 * Who the request's document work is for (the workers are shared fairly between organizations and
 * keys): its key's, or the shared tenant's for a request without one (a public page).
 */
export function tenantOfRequest(request: FastifyRequest): Tenant | undefined {
  return request.actor ? tenantOf(request.actor) : undefined
}

export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new Error('route without authentication')
  return request.actor
}
