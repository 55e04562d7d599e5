/**
 * Failed authentications are counted per client address (`request.ip`: the socket's peer, or behind a
 * trusted proxy the client it forwards for, see REGISTRY_TRUST_PROXY). Once an address has failed
 * `limit` times within a minute, every request from it that presents credentials is answered
 * `429 rate_limited` with `Retry-After` until that minute is over, a valid key included: refusing only
 * the failures would still tell a guesser which key was right. The rest of the API is untouched.
 *
 * A 401 counts when the request presented something to check: an Authorization header, a session
 * cookie, or a body (a signed webhook, a key to sign in with). A bare request does not count (git asks
 * for credentials that way before it sends them; a browser opening an API address does the same).
 *
 * Not @fastify/rate-limit: it counts every request that passes its hook, while here only failures
 * count and the check runs before authentication, and its limiter is asynchronous only (1.7 to 4 µs
 * per check on every authenticated request, measured); this is one LRU lookup.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { LRUCache } from 'lru-cache'
import { RegistryError } from '../errors.js'
import { sessionIdOf } from './auth.js'

const WINDOW_MS = 60_000
/** Addresses tracked at once; the least recently failing are forgotten first. */
const MAX_ADDRESSES = 10_000

function presentsCredentials(request: FastifyRequest): boolean {
  return request.headers.authorization !== undefined || sessionIdOf(request) !== undefined
    || request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0
}

/** Registers the check and the count for every route of `app`; `limit` failures per minute (0: off). */
export function throttleFailedAuthentication(app: FastifyInstance, limit: number): void {
  if (limit <= 0) return
  // Failures per address within its window; an entry (and its window) ends a minute after its first
  // failure, and is purged then, so that a server nobody failed on lately checks nothing at all.
  const failures = new LRUCache<string, { count: number }>({ max: MAX_ADDRESSES, ttl: WINDOW_MS, ttlAutopurge: true })

  // A callback hook, before every scope's own authentication.
  app.addHook('onRequest', (request, _reply, done) => {
    if (failures.size === 0) return done()
    const entry = failures.get(request.ip)
    if (!entry || entry.count < limit || !presentsCredentials(request)) return done()
    const retryAfter = Math.min(WINDOW_MS / 1000, Math.max(1, Math.ceil(failures.getRemainingTTL(request.ip) / 1000)))
    done(new RegistryError('rate_limited',
      `too many failed authentications from this address (${limit} a minute); retry in ${retryAfter} s`,
      undefined, { 'retry-after': String(retryAfter) }))
  })

  app.addHook('onError', (request, _reply, error, done) => {
    if (error instanceof RegistryError && error.code === 'unauthorized' && presentsCredentials(request)) {
      const entry = failures.get(request.ip)
      if (entry) entry.count += 1
      else failures.set(request.ip, { count: 1 })
    }
    done()
  })
}
