/** `/v1/keys`: an organization's API keys, for admin keys (issue 17). A new key's secret is shown once. */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { toPageRequest } from '../domain/resources/pagination.js'
import type { Registry } from '../domain/registry.js'
import { keyView } from '../domain/resources/views.js'
import type { KeyRole } from '../storage/registry-records.js'
import { actorOf } from './auth.js'
import { Data, KEY_OR_SESSION, List, Nullable, PageQuery, problems, Ulid } from './schemas.js'

const Role = Type.Enum(['read', 'write', 'admin'], { description: 'read: GET only; write: all but keys and organization settings; admin: all' })
const Time = Type.String({ format: 'date-time' })

const Key = Type.Object({
  id: Ulid,
  organization_id: Ulid,
  name: Nullable(Type.String()),
  role: Role,
  created_at: Time,
  last_used_at: Nullable(Time),
  revoked_at: Nullable(Time),
})
const IssuedKey = Type.Object({ ...Key.properties, api_key: Type.String({ description: 'the secret: shown in this answer only, stored only as a hash' }) })

const KeyCreate = Type.Object({
  name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
  role: Role,
}, { additionalProperties: false })

const errors = problems
const tags = ['Keys']
const security = KEY_OR_SESSION
const admin = { role: 'admin' as const }
const KeyParams = Type.Object({ key: Ulid })

export function registerKeyRoutes(app: FastifyInstance, registry: Registry): void {
  const { organizations } = registry
  const keyOf = (request: FastifyRequest) =>
    organizations.keyOf(actorOf(request).organization.id, (request.params as { key: string }).key)

  app.get('/v1/keys', {
    config: admin,
    schema: { tags, security, summary: "The organization's keys, newest first (never their secrets)", querystring: PageQuery, response: { 200: List(Key), ...errors(400, 401, 403) } },
  }, async (request) => {
    const { page, limit } = request.query as { page?: number; limit?: number }
    const { offset, limit: size } = toPageRequest(page, limit)
    const keys = await organizations.keysOf(actorOf(request).organization.id)
    return { data: keys.slice(offset, offset + size).map(keyView), total: keys.length }
  })

  app.post('/v1/keys', {
    config: admin,
    schema: { tags, security, summary: 'Issue a key: its secret is in this answer only', body: KeyCreate, response: { 201: Data(IssuedKey), ...errors(400, 401, 403, 413, 415) } },
  }, async (request, reply) => {
    const { name, role } = request.body as { name?: string | null; role: KeyRole }
    const issued = await organizations.issueKey(actorOf(request).organization.id, name ?? null, role)
    return reply.status(201).header('cache-control', 'no-store').send({ data: { ...keyView(issued.key), api_key: issued.secret } })
  })

  app.get('/v1/keys/:key', {
    config: admin,
    schema: { tags, security, summary: 'One key (never its secret)', params: KeyParams, response: { 200: Data(Key), ...errors(400, 401, 403, 404) } },
  }, async (request) => ({ data: keyView(await keyOf(request)) }))

  app.delete('/v1/keys/:key', {
    config: admin,
    schema: {
      tags, security, params: KeyParams, response: { 204: Type.Null(), ...errors(400, 401, 403, 404, 409) },
      summary: "Revoke a key: the next request with it (or a console session opened with it) gets 401; the organization's last admin key is refused (409)",
    },
  }, async (request, reply) => {
    await organizations.revokeKeyOf(actorOf(request).organization.id, (await keyOf(request)).id)
    return reply.status(204).send()
  })
}
