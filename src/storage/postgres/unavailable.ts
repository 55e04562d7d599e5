/**
 * A database that cannot be reached while the registry runs (stopped, restarting, the network gone)
 * answers 503 `unavailable` with `Retry-After`, not 500 `internal`: nothing is wrong with the request
 * or the registry, the client may send it again, and a balancer may pass it to another replica. The
 * detail never names the database (its address is the operator's, not the client's); the log keeps the
 * cause. Found by trying it (docs/scale-out.md, "PostgreSQL unreachable while running").
 */
import type pg from 'pg'
import { RegistryError } from '../../errors.js'

/** Node's errors when the server cannot be reached or the connection breaks (ENOENT: no unix socket). */
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOENT', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND'])
/** admin_shutdown, crash_shutdown, cannot_connect_now (starting up or shutting down), too_many_connections. */
const SERVER = new Set(['57P01', '57P02', '57P03', '53300'])
/** node-postgres's own messages for a connection that ended or failed under it. */
const ENDED = /^(Connection terminated|Client has encountered a connection error|Client was closed)/

function unreachable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown }
  if (typeof code === 'string' && (NETWORK.has(code) || SERVER.has(code) || code.startsWith('08'))) return true // 08: connection_exception
  return typeof message === 'string' && ENDED.test(message)
}

/** `error`, or the 503 it means when it says the database cannot be reached. */
export function unavailableOr(error: unknown): unknown {
  if (error instanceof RegistryError || !unreachable(error)) return error
  const unavailable = new RegistryError('unavailable', 'the database cannot be reached; retry later', undefined, { 'retry-after': '5' })
  unavailable.cause = error
  return unavailable
}

/** The pool, its queries (every read outside a transaction, blobs) answering `unavailableOr` their failures. */
export function answeringUnavailable(pool: pg.Pool): pg.Pool {
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown
  pool.query = ((...args: unknown[]) => {
    const answer = query(...args)
    // A callback-style call answers nothing to chain to; the registry's calls all take the promise.
    return answer instanceof Promise ? answer.catch((error: unknown) => { throw unavailableOr(error) }) : answer
  }) as typeof pool.query
  return pool
}
