import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, onResponseHookHandler } from 'fastify'
import { Type } from 'typebox'
import { RegistryError } from '../errors.js'
import type { RegistryMetrics } from '../metrics/registry-metrics.js'
import { problems } from './schemas.js'

/**
 * Every response is counted and timed by its route's pattern (never the raw URL, which would make a
 * label per id). Each route gets its own hook with its labels built once, so a request costs one
 * counter increment and one histogram observation. Requests that match no route count as `unmatched`.
 * Must be registered before the routes.
 */
export function recordRequests(app: FastifyInstance, metrics: RegistryMetrics): void {
  app.addHook('onRoute', (route) => {
    const method = Array.isArray(route.method) ? route.method.join(',') : route.method
    const record = metrics.requestRecorder(method, route.url ?? route.path)
    const hook: onResponseHookHandler = (_request, reply, done) => {
      record(reply.statusCode, reply.elapsedTime / 1000)
      done()
    }
    const existing = route.onResponse
    route.onResponse = existing === undefined ? hook : [...(Array.isArray(existing) ? existing : [existing]), hook]
  })
  const unmatched = new Map<string, ReturnType<RegistryMetrics['requestRecorder']>>()
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) {
      let record = unmatched.get(request.method)
      if (!record) unmatched.set(request.method, (record = metrics.requestRecorder(request.method, 'unmatched')))
      record(reply.statusCode, reply.elapsedTime / 1000)
    }
    done()
  })
}

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 addresses. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address
  return v4 === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4)
}

/** What the start-up log says about `/metrics` when no token is set. */
export const METRICS_LOOPBACK_NOTICE =
  'GET /metrics answers clients on this host only; set REGISTRY_METRICS_TOKEN to expose it to a scraper elsewhere (Authorization: Bearer <token>)'

/**
 * `GET /metrics` in Prometheus' text format. Without a token it answers loopback clients only (the
 * client address as `request.ip` has it, so behind a trusted proxy the proxy's client); with a token
 * it needs `Authorization: Bearer <token>` (compared in constant time, as digests) from anywhere.
 */
export function registerMetricsRoute(app: FastifyInstance, metrics: RegistryMetrics, token: string | undefined): void {
  const expected = token === undefined ? undefined : digest(`Bearer ${token}`)
  app.get('/metrics', {
    config: { rateLimit: false },
    schema: {
      tags: ['Service'], summary: 'Prometheus metrics',
      description: 'Needs `Authorization: Bearer <REGISTRY_METRICS_TOKEN>` when that is set; without it, answers loopback clients only (403 otherwise).',
      // No credentials from loopback without a token; the token otherwise.
      security: [{}, { metricsToken: [] }],
      response: {
        200: { description: "Prometheus' text exposition format", content: { 'text/plain': { schema: Type.String() } } },
        ...problems(401, 403),
      },
    },
  }, async (request, reply) => {
    if (!expected && !isLoopback(request.ip)) {
      throw new RegistryError('forbidden', '/metrics answers clients on the server\'s own host only: set REGISTRY_METRICS_TOKEN to scrape it from elsewhere')
    }
    // Thrown, not sent: a wrong token counts as a failed authentication like a wrong key (auth-failures.ts).
    if (expected && !timingSafeEqual(digest(request.headers.authorization ?? ''), expected)) {
      throw new RegistryError('unauthorized', 'the metrics token is required: Authorization: Bearer <REGISTRY_METRICS_TOKEN>',
        undefined, { 'www-authenticate': 'Bearer' })
    }
    return reply.type(metrics.contentType).send(await metrics.text())
  })
}

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest()
