/**
 * `/v1/webhooks`: the organization's outbound webhook endpoints, their deliveries and redelivery
 * (issue 20; docs/webhooks.md). Admin keys only: an endpoint receives every event it subscribes to.
 * A new endpoint's signing secret (and a new secret) is shown in that answer only.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { deliveryView, endpointView, type EndpointChange, type EndpointInput } from '../domain/events/endpoints.js'
import { toPageRequest } from '../domain/resources/pagination.js'
import type { Registry } from '../domain/registry.js'
import { WEBHOOK_EVENT_TYPES } from '../storage/records.js'
import { actorOf } from './auth.js'
import { Data, KEY_OR_SESSION, List, Nullable, PageQuery, problems, SecretStatus, Ulid } from './schemas.js'

const strict = { additionalProperties: false }
const Time = Type.String({ format: 'date-time' })
const EventType = Type.Enum([...WEBHOOK_EVENT_TYPES])
const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL the events are POSTed to; checked against the outbound policy' })
const Description = Nullable(Type.String({ maxLength: 500 }))
const EventTypes = Type.Array(EventType, { maxItems: WEBHOOK_EVENT_TYPES.length, description: 'the event types it receives; empty: every type' })

const Endpoint = Type.Object({
  id: Ulid,
  organization_id: Ulid,
  url: Type.String(),
  description: Description,
  event_types: Type.Array(EventType),
  enabled: Type.Boolean(),
  disabled_reason: Nullable(Type.String({ description: 'why the registry disabled it (every delivery failed for 5 days)' })),
  failing_since: Nullable(Time),
  secret_status: SecretStatus,
  created_at: Time,
  updated_at: Time,
})
const EndpointWithSecret = Type.Object({
  ...Endpoint.properties,
  secret: Type.String({ description: 'the signing secret (whsec_…): shown in this answer only' }),
})
const Attempt = Type.Object({
  attempt: Type.Integer(),
  at: Time,
  status_code: Nullable(Type.Integer({ description: "the endpoint's HTTP status; null when no answer came" })),
  duration_ms: Type.Integer(),
  response: Nullable(Type.String({ description: "the start of the endpoint's answer, or why there was none" })),
})
const Delivery = Type.Object({
  id: Ulid,
  endpoint_id: Ulid,
  event_id: Type.String({ description: 'the webhook-id header of every attempt' }),
  event_type: EventType,
  status: Type.Enum(['pending', 'succeeded', 'failed']),
  attempts: Type.Integer(),
  next_attempt_at: Nullable(Time),
  log: Type.Array(Attempt),
  created_at: Time,
  updated_at: Time,
})

const EndpointCreate = Type.Object({
  url: Url,
  description: Type.Optional(Description),
  event_types: Type.Optional(EventTypes),
  enabled: Type.Optional(Type.Boolean()),
}, strict)
const EndpointUpdate = Type.Object({
  url: Type.Optional(Url),
  description: Type.Optional(Description),
  event_types: Type.Optional(EventTypes),
  enabled: Type.Optional(Type.Boolean({ description: 'true also clears why the registry disabled it' })),
}, strict)

const errors = problems
const tags = ['Webhooks']
const security = KEY_OR_SESSION
const admin = { role: 'admin' as const }
const EndpointParams = Type.Object({ webhook: Ulid })
const DeliveryParams = Type.Object({ webhook: Ulid, delivery: Ulid })

export function registerEventRoutes(app: FastifyInstance, registry: Registry): void {
  const { webhooks, secrets } = registry
  const organization = (request: FastifyRequest) => actorOf(request).organization.id
  const params = (request: FastifyRequest) => request.params as { webhook: string; delivery: string }
  const view = (endpoint: Parameters<typeof endpointView>[0]) => endpointView(endpoint, secrets)

  app.get('/v1/webhooks', {
    config: admin,
    schema: { tags, security, summary: "The organization's webhook endpoints, oldest first (never their secrets)", querystring: PageQuery, response: { 200: List(Endpoint), ...errors(400, 401, 403) } },
  }, async (request) => {
    const { page, limit } = request.query as { page?: number; limit?: number }
    const { offset, limit: size } = toPageRequest(page, limit)
    const endpoints = await webhooks.list(organization(request))
    return { data: endpoints.slice(offset, offset + size).map(view), total: endpoints.length }
  })

  app.post('/v1/webhooks', {
    config: admin,
    schema: {
      tags, security, body: EndpointCreate, response: { 201: Data(EndpointWithSecret), ...errors(400, 401, 403, 409, 413, 415, 422) },
      summary: 'Add an endpoint: its signing secret is in this answer only',
    },
  }, async (request, reply) => {
    const { endpoint, secret } = await webhooks.create(organization(request), request.body as EndpointInput)
    return reply.status(201).header('cache-control', 'no-store').send({ data: { ...view(endpoint), secret } })
  })

  app.get('/v1/webhooks/:webhook', {
    config: admin,
    schema: { tags, security, summary: 'One endpoint (never its secret)', params: EndpointParams, response: { 200: Data(Endpoint), ...errors(400, 401, 403, 404) } },
  }, async (request) => ({ data: view(await webhooks.get(organization(request), params(request).webhook)) }))

  app.patch('/v1/webhooks/:webhook', {
    config: admin,
    schema: {
      tags, security, params: EndpointParams, body: EndpointUpdate, response: { 200: Data(Endpoint), ...errors(400, 401, 403, 404, 413, 415, 422) },
      summary: 'Change the URL, description or event types; disable or enable it',
    },
  }, async (request) => ({ data: view(await webhooks.update(organization(request), params(request).webhook, request.body as EndpointChange)) }))

  app.delete('/v1/webhooks/:webhook', {
    config: admin,
    schema: { tags, security, params: EndpointParams, summary: 'Remove an endpoint and its deliveries', response: { 204: Type.Null(), ...errors(400, 401, 403, 404) } },
  }, async (request, reply) => {
    await webhooks.remove(organization(request), params(request).webhook)
    return reply.status(204).send()
  })

  app.post('/v1/webhooks/:webhook/secret', {
    config: admin,
    schema: {
      tags, security, params: EndpointParams, response: { 200: Data(EndpointWithSecret), ...errors(400, 401, 403, 404) },
      summary: 'Make a new signing secret (the old one stops at once): it is in this answer only',
    },
  }, async (request, reply) => {
    const { endpoint, secret } = await webhooks.newSecret(organization(request), params(request).webhook)
    return reply.header('cache-control', 'no-store').send({ data: { ...view(endpoint), secret } })
  })

  app.get('/v1/webhooks/:webhook/deliveries', {
    config: admin,
    schema: {
      tags, security, params: EndpointParams, querystring: PageQuery, response: { 200: List(Delivery), ...errors(400, 401, 403, 404) },
      summary: "The endpoint's deliveries, newest first, each with its latest attempts",
    },
  }, async (request) => {
    const { page, limit } = request.query as { page?: number; limit?: number }
    const deliveries = await webhooks.deliveries(organization(request), params(request).webhook, toPageRequest(page, limit))
    return { data: deliveries.items.map(deliveryView), total: deliveries.total }
  })

  app.post('/v1/webhooks/:webhook/deliveries/:delivery/redeliver', {
    config: admin,
    schema: {
      tags, security, params: DeliveryParams, response: { 202: Data(Delivery), ...errors(400, 401, 403, 404, 409) },
      summary: 'Send a delivery again now (with its retries), whatever became of it',
    },
  }, async (request, reply) => {
    const { webhook, delivery } = params(request)
    return reply.status(202).send({ data: deliveryView(await webhooks.redeliver(organization(request), webhook, delivery)) })
  })
}
