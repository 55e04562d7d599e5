/**
 * Repository webhooks (issue 5, item 7): `POST /webhooks/github` and `POST /webhooks/gitlab`, without
 * a key (the signature is the authentication). Their own plugin scope takes every body as raw bytes,
 * since the signature is over the exact bytes sent, and bounds it.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import type { Registry } from '../domain/registry.js'
import { RegistryError } from '../errors.js'
import { Data, NO_KEY, problems } from './schemas.js'

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

/**
 * What the registry reads of a delivery (src/domain/repository-sync/webhooks.ts): the provider's headers, and of the
 * payload the pushed ref, whether it deleted the branch, and the repository's urls. The rest of what
 * GitHub and GitLab send is accepted and ignored.
 */
const Ref = Type.String({ description: '`refs/heads/<branch>` for a push to a branch' })
const After = Type.String({ description: 'the commit the ref points at now (zeros: the branch was deleted)' })
const GithubPayload = Type.Object({
  ref: Type.Optional(Ref),
  after: Type.Optional(After),
  deleted: Type.Optional(Type.Boolean()),
  repository: Type.Optional(Type.Object({
    clone_url: Type.Optional(Type.String()), html_url: Type.Optional(Type.String()), url: Type.Optional(Type.String()),
  }, { description: 'matched against the connections by its urls' })),
}, { description: "GitHub's push or ping payload" })
const GitlabRepository = Type.Object({ git_http_url: Type.Optional(Type.String()), web_url: Type.Optional(Type.String()), homepage: Type.Optional(Type.String()) })
const GitlabPayload = Type.Object({
  ref: Type.Optional(Ref),
  after: Type.Optional(After),
  project: Type.Optional(GitlabRepository),
  repository: Type.Optional(GitlabRepository),
}, { description: "GitLab's push hook payload; the project's urls are matched against the connections" })

const DELIVERIES = {
  github: {
    body: {
      content: {
        'application/json': { schema: GithubPayload },
        'application/x-www-form-urlencoded': {
          schema: Type.Object({ payload: Type.String({ description: 'the same payload as JSON text' }) }, { required: ['payload'] }),
        },
      },
    },
    headers: Type.Object({
      'X-GitHub-Event': Type.String({ description: '`push` queues syncs, `ping` answers pong; other events are ignored' }),
      'X-GitHub-Delivery': Type.Optional(Type.String({ maxLength: 200, description: 'the delivery id: a delivery seen before is not handled again' })),
      'X-Hub-Signature-256': Type.String({ description: 'sha256=<hex HMAC-SHA256 of the body with the webhook secret>' }),
    }),
  },
  gitlab: {
    body: { content: { 'application/json': { schema: GitlabPayload } } },
    headers: Type.Object({
      'X-Gitlab-Event': Type.String({ description: '`Push Hook` queues syncs; other events are ignored' }),
      'X-Gitlab-Event-UUID': Type.Optional(Type.String({ maxLength: 200, description: 'the delivery id: a delivery seen before is not handled again' })),
      'X-Gitlab-Token': Type.String({ description: 'the webhook secret' }),
    }),
  },
}

export const webhookRoutes: FastifyPluginAsync<{ registry: Registry }> = async (app: FastifyInstance, { registry }) => {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) => done(null, body))

  for (const provider of ['github', 'gitlab'] as const) {
    app.post(`/webhooks/${provider}`, {
      bodyLimit: WEBHOOK_BODY_LIMIT,
      // The signature is over the bytes as sent: they are read by the domain (webhooks.ts), which answers
      // what is missing or malformed; the schemas above describe them, nothing validates them here.
      validatorCompiler: () => () => true,
      schema: {
        tags: ['Repository sync'],
        // Authenticated by the signature (or token) in its headers, checked against each connection's secret.
        security: NO_KEY,
        summary: `${provider === 'github' ? 'GitHub' : 'GitLab'} push webhook: syncs every API connected to the pushed branch`,
        description: 'Answers 202 when syncs were queued, 200 when there is nothing to do '
          + '(ping, another branch, a delivery already handled), 401 when no connection\'s secret verifies it.',
        ...DELIVERIES[provider],
        response: { 200: Data(Outcome), 202: Data(Outcome), ...problems(400, 401, 413) },
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
