/** Repository connection and manual sync of an API (issue 5, items 6 and 8), under `/v1` with a key. */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Registry } from '../domain/registry.js'
import { connectionView, type ConnectInput } from '../domain/repository-sync/repository-sync.js'
import { versionView } from '../domain/resources/views.js'
import { actorOf } from './auth.js'
import { Data, IdOrSlug, KEY_OR_SESSION, Nullable, problems, SecretStatus, SpecVersion, Ulid } from './schemas.js'

const Provider = Type.Enum(['github', 'gitlab'])

const ConnectBody = Type.Object({
  provider: Provider,
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) url of the repository, without credentials' }),
  branch: Type.String({ minLength: 1, maxLength: 200 }),
  path: Type.String({ minLength: 1, maxLength: 1024, description: "the OpenAPI document's path in the repository" }),
  token: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 4096, pattern: '^[\\x21-\\x7e]+$', description: 'write-only: read access to a private repository (printable ASCII)' }))),
  webhook_secret: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 1024, description: "write-only: the webhook's secret (GitHub) or token (GitLab)" }))),
}, { additionalProperties: false })

const ProblemItems = Type.Array(Type.Object({
  message: Type.String(),
  path: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Integer()]))),
  code: Type.Optional(Type.String()),
  severity: Type.Optional(Type.String()),
  file: Type.Optional(Type.String()),
}))

const LastSync = Type.Object({
  status: Type.Enum(['succeeded', 'unchanged', 'blocked', 'failed']),
  trigger: Type.Enum(['manual', 'webhook']),
  delivery: Nullable(Type.String()),
  started_at: Type.String({ format: 'date-time' }),
  finished_at: Type.String({ format: 'date-time' }),
  commit: Nullable(Type.String()),
  version_id: Nullable(Ulid),
  version_number: Nullable(Type.Integer()),
  error: Nullable(Type.Object({ code: Type.String(), detail: Type.String(), errors: Type.Optional(ProblemItems) })),
})

export const Connection = Type.Object({
  id: Ulid,
  organization_id: Ulid,
  api_id: Ulid,
  provider: Provider,
  url: Type.String(),
  branch: Type.String(),
  path: Type.String(),
  has_token: Type.Boolean(),
  has_webhook_secret: Type.Boolean(),
  token_status: SecretStatus,
  webhook_secret_status: SecretStatus,
  webhook_path: Type.String({ description: "where the repository's webhook posts, on this host" }),
  last_sync: Nullable(LastSync),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
})

const Params = Type.Object({ api: IdOrSlug })
const errors = problems
const tags = ['Repository sync']
const security = KEY_OR_SESSION

export function registerRepositoryRoutes(app: FastifyInstance, registry: Registry): void {
  const sync = registry.repositorySync
  // The API's id, also when the path names it by slug.
  const apiOf = async (request: FastifyRequest) => (await registry.resources.require(actorOf(request), 'api', (request.params as { api: string }).api)).id

  app.put('/v1/apis/:api/repository', {
    schema: {
      tags, security, params: Params, body: ConnectBody,
      summary: "Connect the API to a file in a git repository (201), or replace its connection (200)",
      response: { 200: Data(Connection), 201: Data(Connection), ...errors(400, 401, 403, 404, 413, 415, 422) },
    },
  }, async (request, reply) => {
    const { connection, created } = await sync.connect(actorOf(request), await apiOf(request), request.body as ConnectInput)
    return reply.status(created ? 201 : 200).send({ data: connectionView(connection, registry.secrets) })
  })

  app.get('/v1/apis/:api/repository', {
    schema: {
      tags, security, params: Params, summary: "The API's repository connection and its last sync (never its secrets)",
      response: { 200: Data(Connection), ...errors(400, 401, 404) },
    },
  }, async (request) => ({ data: connectionView(await sync.connection(actorOf(request), await apiOf(request)), registry.secrets) }))

  app.delete('/v1/apis/:api/repository', {
    schema: {
      tags, security, params: Params, summary: 'Disconnect the API from its repository (its versions stay)',
      response: { 204: Type.Null(), ...errors(400, 401, 403, 404) },
    },
  }, async (request, reply) => {
    await sync.disconnect(actorOf(request), await apiOf(request))
    return reply.status(204).send()
  })

  app.post('/v1/apis/:api/sync', {
    schema: {
      tags, security, params: Params,
      summary: 'Fetch the connected file now and publish it like an upload: 201 a new version, 200 unchanged',
      response: { 200: Data(SpecVersion), 201: Data(SpecVersion), ...errors(400, 401, 403, 404, 409, 422, 502, 503) },
    },
  }, async (request, reply) => {
    const { version, created } = await sync.sync(actorOf(request), await apiOf(request))
    return reply.status(created ? 201 : 200).send({ data: versionView(version) })
  })
}
