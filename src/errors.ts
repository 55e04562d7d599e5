/** The one error type of the service: a stable code that maps to an HTTP status (CONTRACT §2). */

export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  /** The key's role does not allow this (a `read` key writing, a `write` key managing keys), a console session's change without its CSRF header, or /metrics from another host without REGISTRY_METRICS_TOKEN. */
  forbidden: 403,
  not_found: 404,
  request_timeout: 408,
  conflict: 409,
  /** A stored token or webhook secret does not open with this server's secret key: set it again. */
  secret_needs_reentry: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_document: 422,
  invalid_reference: 422,
  /** A URL given to be stored holds a control character (CR, LF, tab, NUL…); `errors[0].path` names the field. */
  invalid_url: 422,
  lint_blocked: 422,
  /** Spectral cannot run the ruleset on this document (a rule's JSONPath filter or function throws on it); `errors[]` names the rule. */
  ruleset_failed: 422,
  /** The compatibility gate (issue 20): the new version has changes that break the resource's policy. */
  incompatible: 422,
  no_output_repository: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
  /** Repository sync: the repository could not be fetched (unreachable, refused, timed out, too large, no such branch). */
  repository_unavailable: 502,
  lint_timeout: 503,
  lint_resource_limit: 503,
  unavailable: 503,
  storage_full: 507,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

/** One entry of `errors[]` in a problem body. */
export interface ProblemItem {
  message: string
  path?: (string | number)[]
  code?: string
  severity?: string
  [extra: string]: unknown
}

export class RegistryError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly errors: ProblemItem[] | undefined
  readonly headers: Record<string, string> | undefined

  constructor(code: ErrorCode, detail: string, errors?: ProblemItem[], headers?: Record<string, string>) {
    super(detail)
    this.name = 'RegistryError'
    this.code = code
    this.status = ERROR_STATUS[code]
    this.errors = errors
    this.headers = headers
  }
}

export const notFound = (what = 'resource'): RegistryError => new RegistryError('not_found', `${what} not found`)
export const invalidRequest = (detail: string, errors?: ProblemItem[]): RegistryError =>
  new RegistryError('invalid_request', detail, errors)
export const invalidDocument = (detail: string, errors?: ProblemItem[]): RegistryError =>
  new RegistryError('invalid_document', detail, errors)
