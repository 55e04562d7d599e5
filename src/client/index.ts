/**
 * A typed client for the registry's HTTP interface (issue 18, item 9; docs/ci.md, "A TypeScript
 * client"), published as `api-registry/client`: openapi-fetch over the types openapi-typescript
 * generates from the registry's own /openapi.json (registry-api.ts), so a path, a parameter or a body
 * the description does not have is a compile error, and answers are typed as described. The `registry`
 * CLI's remote commands reach the registry through it alone.
 *
 * This module is the package's public entry: it imports nothing of the server, only openapi-fetch.
 */
import createClient, { type Client } from 'openapi-fetch'
import type { components, paths } from './registry-api.js'

export type { components, operations, paths } from './registry-api.js'

/** A problem+json answer (RFC 9457): the registry's one error shape (docs/api.md, "Errors"). */
export type Problem = components['schemas']['Problem']

/** The client: `GET`, `POST`, `PATCH`, `PUT`, `DELETE` on the described paths, each answering `{ data }` or `{ error }` and the `response`. */
export type RegistryClient = Client<paths>

export interface RegistryClientOptions {
  /** The registry's base URL, e.g. `https://registry.example.com` (a trailing slash is dropped). */
  url: string
  /** An organization key (`sk_…`), sent as `Authorization: Bearer`; leave it out for the public registry (`/@{org}/…`). */
  key?: string
  /** The User-Agent header (default: the runtime's). */
  userAgent?: string
  /** Abandon a request after this many milliseconds (default: no limit): it rejects with a RegistryUnreachableError. */
  timeoutMs?: number
  /** The fetch to send requests with (default: globalThis.fetch). */
  fetch?: (request: Request) => Promise<Response>
}

/** The request never got an answer: the registry is down, the name does not resolve, or the timeout passed. */
export class RegistryUnreachableError extends Error {
  constructor(readonly url: string, readonly reason: string, options?: { cause?: unknown }) {
    super(`cannot reach the registry at ${url}: ${reason}`, options)
    this.name = 'RegistryUnreachableError'
  }
}

/** Why fetch failed, in a word where Node has one (ECONNREFUSED, ENOTFOUND…). */
function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error))
}

/**
 * A client for one registry and key. Non-JSON answers are read with openapi-fetch's `parseAs`: a
 * document as YAML is `GET('/v1/apis/{api}/spec', { params: { path: { api }, query: { format: 'yaml' } }, parseAs: 'text' })`.
 */
export function createRegistryClient(options: RegistryClientOptions): RegistryClient {
  const url = options.url.replace(/\/+$/, '')
  const send = options.fetch ?? ((request: Request) => fetch(request))
  const headers: Record<string, string> = { accept: 'application/json' }
  if (options.key) headers.authorization = `Bearer ${options.key}`
  if (options.userAgent) headers['user-agent'] = options.userAgent
  return createClient<paths>({
    baseUrl: url,
    headers,
    fetch: async (request) => {
      // The timeout joins the caller's own signal (a `signal` given to one call), never replaces it.
      const timed = options.timeoutMs === undefined
        ? request
        : new Request(request, { signal: AbortSignal.any([request.signal, AbortSignal.timeout(options.timeoutMs)]) })
      try {
        return await send(timed)
      } catch (error) {
        if (request.signal.aborted) throw error // the caller gave up: not the registry's doing
        throw new RegistryUnreachableError(url, reasonOf(error), { cause: error })
      }
    },
  })
}

/** The problem+json body of an error answer, when it is one (a proxy in front may answer anything). */
export function problemOf(error: unknown): Problem | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const { code, detail, status } = error as Partial<Problem>
  return typeof code === 'string' && typeof detail === 'string' && typeof status === 'number' ? (error as Problem) : undefined
}

/** An error answer in one line: `404 not_found: API not found`, or the start of a body that is not problem+json. */
export function describeError(response: Response, error: unknown): string {
  const problem = problemOf(error)
  const detail = problem ? `${problem.code}: ${problem.detail}` : String(error ?? '').slice(0, 200)
  return `${response.status} ${detail}`.trimEnd()
}
