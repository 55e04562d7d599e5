/**
 * The console's only way to the server: the public `/v1` REST API, with the session cookie the
 * sign-in set (sent by the browser, never visible to this code) and, on every request that changes
 * something, the session's CSRF token in `X-Registry-CSRF`.
 */

export interface ProblemItem {
  message: string
  path?: (string | number)[]
  code?: string
  severity?: string
  file?: string
}

/** An `application/problem+json` answer (RFC 9457) as the registry sends it. */
export interface Problem {
  status: number
  code: string
  title: string
  detail: string
  errors?: ProblemItem[]
}

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail)
    this.name = 'ApiError'
  }

  get status(): number {
    return this.problem.status
  }
}

export interface List<T> {
  data: T[]
  total: number
}

let csrfToken: string | null = null
const unauthorizedListeners = new Set<() => void>()

export function setCsrfToken(token: string | null): void {
  csrfToken = token
}

/** Called when a request answers 401: the session ended (expired, revoked key, signed out elsewhere). */
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener)
  return () => unauthorizedListeners.delete(listener)
}

export type Query = Record<string, string | number | boolean | undefined | null>

export function withQuery(path: string, query?: Query): string {
  if (!query) return path
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value))
  }
  const text = params.toString()
  return text ? `${path}?${text}` : path
}

interface RequestOptions {
  query?: Query
  /** A JSON body. */
  body?: unknown
  /** A raw body (a document as YAML or JSON text) with its content type. */
  raw?: { text: string; type: string }
  signal?: AbortSignal
  /** Answer the body as text (documents in YAML, build logs). */
  text?: boolean
  accept?: string
}

async function problemOf(response: Response): Promise<Problem> {
  const text = await response.text()
  try {
    const parsed = JSON.parse(text) as Partial<Problem>
    if (parsed && typeof parsed.code === 'string') {
      return { status: response.status, code: parsed.code, title: parsed.title ?? '', detail: parsed.detail ?? '', errors: parsed.errors }
    }
  } catch {
    // not JSON: a proxy's error page, say
  }
  return { status: response.status, code: 'http_error', title: response.statusText, detail: `the server answered ${response.status} ${response.statusText}` }
}

export async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: options.accept ?? 'application/json' }
  let body: string | undefined
  if (options.raw) {
    headers['content-type'] = options.raw.type
    body = options.raw.text
  } else if (options.body !== undefined) {
    headers['content-type'] = 'application/json'
    body = JSON.stringify(options.body)
  }
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['x-registry-csrf'] = csrfToken
  let response: Response
  try {
    response = await fetch(withQuery(path, options.query), { method, headers, body, credentials: 'same-origin', signal: options.signal })
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error
    throw new ApiError({ status: 0, code: 'network', title: 'Network error', detail: 'the registry could not be reached; check your connection and retry' })
  }
  if (!response.ok) {
    const problem = await problemOf(response)
    if (response.status === 401 && !path.startsWith('/v1/session')) for (const listener of unauthorizedListeners) listener()
    throw new ApiError(problem)
  }
  if (response.status === 204) return undefined as T
  if (options.text) return (await response.text()) as T
  return (await response.json()) as T
}

export const api = {
  get: <T>(path: string, query?: Query, signal?: AbortSignal) => request<T>('GET', path, { query, signal }),
  text: (path: string, query?: Query, accept?: string) => request<string>('GET', path, { query, text: true, accept }),
  post: <T>(path: string, body?: unknown, query?: Query) => request<T>('POST', path, { body, query }),
  put: <T>(path: string, body?: unknown) => request<T>('PUT', path, { body }),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, { body }),
  del: (path: string) => request<void>('DELETE', path),
}
