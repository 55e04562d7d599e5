/** `/v1/mirror`: the organization's git mirror, and the remote it is pushed to (token write-only). */
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { Registry } from '../domain/registry.js'
import { notFound } from '../errors.js'
import { actorOf } from './auth.js'
import { Data, KEY_OR_SESSION, Nullable, problems, SecretStatus } from './schemas.js'

const tags = ['Mirror']
const security = KEY_OR_SESSION
const errors = problems

const MirrorStatus = Type.Object({
  head: Nullable(Type.String({ description: 'the commit `main` points at' })),
  url: Nullable(Type.String({ description: 'the push mirror, or null when none is set' })),
  token_set: Type.Boolean({ description: 'whether a token was given (it is never returned)' }),
  token_status: SecretStatus,
  last_pushed_commit: Nullable(Type.String()),
  last_pushed_at: Nullable(Type.String({ format: 'date-time' })),
  last_error: Nullable(Type.String()),
  last_error_at: Nullable(Type.String({ format: 'date-time' })),
})

const SetRemote = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL of the remote repository, without credentials' }),
  token: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 4096, description: 'sent as the HTTP basic password; write-only' }))),
}, { additionalProperties: false })

export function registerMirrorRoutes(app: FastifyInstance, registry: Registry): void {
  const mirror = () => {
    if (!registry.mirror) throw notFound('mirror')
    return registry.mirror
  }

  app.get('/v1/mirror', {
    schema: { tags, security, summary: 'The git mirror: head, push remote and its last push', response: { 200: Data(MirrorStatus), ...errors(401, 404) } },
  }, async (request) => ({ data: await mirror().status(actorOf(request).organization) }))

  // The push mirror is an organization setting: admin keys only.
  app.put('/v1/mirror', {
    config: { role: 'admin' },
    schema: { tags, security, summary: 'Set the push mirror (new commits are pushed to it)', body: SetRemote, response: { 200: Data(MirrorStatus), ...errors(400, 401, 403, 404, 413, 415, 422) } },
  }, async (request) => {
    const { url, token } = request.body as { url: string; token?: string | null }
    return { data: await mirror().setRemote(actorOf(request).organization, url, token ?? null) }
  })

  app.delete('/v1/mirror', {
    config: { role: 'admin' },
    schema: { tags, security, summary: 'Remove the push mirror', response: { 204: Type.Null(), ...errors(401, 403, 404) } },
  }, async (request, reply) => {
    await mirror().removeRemote(actorOf(request).organization)
    return reply.status(204).send()
  })
}
