/**
 * Repository webhooks (issue 5, item 7): `POST /webhooks/github` and `POST /webhooks/gitlab`, without
 * a key (the signature is the authentication). Their own plugin scope takes every body as raw bytes,
 * since the signature is over the exact bytes sent, and bounds it.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import type { Registry } from '../domain/registry.js'
import { RegistryError } from '../errors.js'
import type { RepositoryProvider } from '../storage/records.js'
import { Data, Problem } from './schemas.js'

/**
 * Largest webhook body. Its JSON is read on the event loop before any signature can be checked (the
 * payload names the repository whose secret checks it), so it is kept small: push payloads list at
 * most 20 commits and are tens of KB, a ping a few; 1 MB parses in a few milliseconds.
 */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024

const Outcome = Type.Object({
  status: Type.Enum(['queued', 'ignored', 'duplicate', 'pong']),
  syncs: Type.Integer({ description: 'syncs queued by this delivery' }),
  detail: Type.String(),
})

const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, Problem]))

const HEADERS: Record<RepositoryProvider, string> = {
  github: 'X-GitHub-Event (`push`, `ping`), X-GitHub-Delivery, X-Hub-Signature-256 (HMAC-SHA256 of the body with the webhook secret)',
  gitlab: 'X-Gitlab-Event (`Push Hook`), X-Gitlab-Event-UUID, X-Gitlab-Token (the webhook secret)',
}

export const webhookRoutes: FastifyPluginAsync<{ registry: Registry }> = async (app: FastifyInstance, { registry }) => {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) => done(null, body))

  for (const provider of ['github', 'gitlab'] as const) {
    app.post(`/webhooks/${provider}`, {
      bodyLimit: WEBHOOK_BODY_LIMIT,
      schema: {
        tags: ['Repository sync'],
        summary: `${provider === 'github' ? 'GitHub' : 'GitLab'} push webhook: syncs every API connected to the pushed branch`,
        description: `Headers: ${HEADERS[provider]}. Answers 202 when syncs were queued, 200 when there is nothing to do `
          + '(ping, another branch, a delivery already handled), 401 when no connection\'s secret verifies it.',
        response: { 200: Data(Outcome), 202: Data(Outcome), ...errors(400, 401, 413) },
      },
    }, async (request, reply) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)
      const outcome = await registry.repositorySync.receive(provider, { headers: request.headers, body }, ({ apiId, delivery, error }) => {
        // A failure the repository causes (unreachable, invalid document, lint gate) is a warning; ours an error.
        const level = error instanceof RegistryError && error.status < 500 ? 'warn' : 'error'
        app.log[level]({ api_id: apiId, delivery, err: error }, `a ${provider} webhook's sync failed (see the connection's last_sync)`)
      })
      return reply.status(outcome.status === 'queued' ? 202 : 200).send({ data: outcome })
    })
  }
}
