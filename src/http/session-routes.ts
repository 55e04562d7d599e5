/**
 * Console sign-in (issue 17): `POST /v1/session` exchanges an API key for a session cookie,
 * `GET /v1/session` says who is signed in (and gives the CSRF token), `DELETE /v1/session` signs out.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Actor } from '../domain/accounts/organizations.js'
import type { Registry } from '../domain/registry.js'
import { SESSION_TTL_MS, csrfTokenOf } from '../domain/accounts/sessions.js'
import { actorOf, requireKeys, SESSION_COOKIE } from './auth.js'
import { Data, KEY_OR_SESSION, NO_KEY, Nullable, problems, Ulid } from './schemas.js'

const KeyRole = Type.Enum(['read', 'write', 'admin'], { description: 'read: GET only; write: all but keys and organization settings; admin: all' })

export const SessionView = Type.Object({
  organization: Type.Object({ id: Ulid, slug: Type.String(), name: Type.String() }),
  key: Type.Object({ id: Ulid, name: Nullable(Type.String()), role: KeyRole }),
  csrf_token: Nullable(Type.String({ description: 'a session: send it as X-Registry-CSRF on every request that is not a GET; null for a Bearer key' })),
  expires_at: Nullable(Type.String({ format: 'date-time', description: 'when the session ends; null for a Bearer key' })),
})

const SignIn = Type.Object({
  api_key: Type.String({ minLength: 1, maxLength: 300, description: 'an API key of the organization: sk_…' }),
}, { additionalProperties: false })

const errors = problems
const tags = ['Session']
const security = KEY_OR_SESSION
const SetCookie = (what: string) => ({ 'set-cookie': Type.String({ description: `${SESSION_COOKIE}=…: ${what}` }) })

/**
 * The cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it), only to
 * `/v1`, Secure when the request came over HTTPS, and gone with the session.
 */
function cookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
  const secure = request.protocol === 'https' ? '; Secure' : ''
  return `${SESSION_COOKIE}=${value}; Path=/v1; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`
}

export async function sessionRoutes(app: FastifyInstance, options: { registry: Registry }): Promise<void> {
  const { registry } = options
  const view = async (actor: Actor) => {
    const key = await registry.organizations.key(actor.keyId)
    return {
      organization: { id: actor.organization.id, slug: actor.organization.slug, name: actor.organization.name },
      key: { id: actor.keyId, name: key?.name ?? null, role: actor.role },
      csrf_token: actor.session ? csrfTokenOf(actor.session.id) : null,
      expires_at: actor.session?.expiresAt ?? null,
    }
  }

  app.post('/v1/session', {
    schema: {
      tags, security: NO_KEY, summary: 'Sign in to the console: exchange an API key for a session cookie (HttpOnly, SameSite=Strict)',
      body: SignIn,
      response: { 201: { ...Data(SessionView), headers: SetCookie('the session (HttpOnly, SameSite=Strict, Path=/v1, 12 hours)') }, ...errors(400, 401, 413, 415, 429) },
    },
  }, async (request, reply: FastifyReply) => {
    const opened = await registry.sessions.open((request.body as { api_key: string }).api_key)
    return reply.status(201)
      .header('set-cookie', cookie(request, opened.id, Math.floor(SESSION_TTL_MS / 1000)))
      .header('cache-control', 'no-store')
      .send({ data: await view(opened.actor) })
  })

  await app.register(async (signedIn) => {
    requireKeys(signedIn, registry)

    signedIn.get('/v1/session', {
      schema: {
        tags, security, summary: 'Who is calling: organization, key and role; for a console session its CSRF token and expiry',
        response: { 200: Data(SessionView), ...errors(401) },
      },
    }, async (request, reply) => reply.header('cache-control', 'no-store').send({ data: await view(actorOf(request)) }))

    signedIn.delete('/v1/session', {
      config: { role: 'read' },
      schema: {
        tags, security, summary: 'Sign out: the session ends everywhere and its cookie is cleared',
        response: { 204: { type: 'null', description: 'signed out', headers: SetCookie('cleared (Max-Age=0)') }, ...errors(401, 403) },
      },
    }, async (request, reply) => {
      const { session } = actorOf(request)
      if (session) await registry.sessions.close(session.id)
      return reply.status(204).header('set-cookie', cookie(request, '', 0)).send()
    })
  })
}
