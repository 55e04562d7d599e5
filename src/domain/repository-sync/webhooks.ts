/**
 * Repository webhooks as GitHub and GitLab send them: reading a delivery (event, delivery id, the
 * repository's urls, the pushed ref) and checking it against a connection's secret in constant time.
 * Pure functions over the raw body and headers; no HTTP framework here.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { jsonDeeperThan } from '../../documents/json-depth.js'
import { invalidRequest } from '../../errors.js'
import type { RepositoryProvider } from '../../storage/records.js'

/** What a webhook request carries, as received. */
export interface WebhookRequest {
  /** Lowercase header names. */
  headers: Record<string, string | string[] | undefined>
  body: Buffer
}

/** A delivery read from a webhook request (not yet verified). */
export interface WebhookDelivery {
  provider: RepositoryProvider
  /** `push` and `ping` (GitHub), `Push Hook` (GitLab), or any other event name. */
  event: string
  kind: 'push' | 'ping' | 'other'
  delivery: string | null
  /** The repository's http(s) urls named by the payload (clone url, web url). */
  urls: string[]
  /** `refs/heads/<branch>` for a branch push. */
  ref: string | null
  /** True when the push deleted the ref. */
  deleted: boolean
}

/** Deepest nesting read from a payload: GitHub's and GitLab's are under 10 levels. */
const MAX_PAYLOAD_DEPTH = 32

/** Longest delivery id remembered (GitHub's are GUIDs, GitLab's UUIDs). */
const MAX_DELIVERY_ID = 200
const ZERO_SHA = /^0+$/

function header(request: WebhookRequest, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function strings(...values: unknown[]): string[] {
  return values.filter((v): v is string => typeof v === 'string' && v !== '')
}

/** The JSON payload: a JSON body, or GitHub's form encoding (`payload=<json>`). */
function payloadOf(request: WebhookRequest): Record<string, unknown> {
  const type = (header(request, 'content-type') ?? '').split(';')[0].trim().toLowerCase()
  let text = request.body.toString('utf8')
  if (type === 'application/x-www-form-urlencoded') text = new URLSearchParams(text).get('payload') ?? ''
  if (jsonDeeperThan(text, MAX_PAYLOAD_DEPTH)) throw invalidRequest(`the webhook payload is nested deeper than ${MAX_PAYLOAD_DEPTH} levels`)
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw invalidRequest('the webhook payload is not JSON')
  }
  if (!isObject(parsed)) throw invalidRequest('the webhook payload must be a JSON object')
  return parsed
}

function deliveryId(request: WebhookRequest, ...names: string[]): string | null {
  for (const name of names) {
    const value = header(request, name)
    if (value === undefined || value === '') continue
    if (value.length > MAX_DELIVERY_ID) throw invalidRequest(`the ${name} header is longer than ${MAX_DELIVERY_ID} characters`)
    return value
  }
  return null
}

export function readGithubDelivery(request: WebhookRequest): WebhookDelivery {
  const event = header(request, 'x-github-event')
  if (!event) throw invalidRequest('the X-GitHub-Event header is missing')
  const payload = payloadOf(request)
  const repository = isObject(payload.repository) ? payload.repository : {}
  return {
    provider: 'github',
    event,
    kind: event === 'push' ? 'push' : event === 'ping' ? 'ping' : 'other',
    delivery: deliveryId(request, 'x-github-delivery'),
    urls: strings(repository.clone_url, repository.html_url, repository.url),
    ref: typeof payload.ref === 'string' ? payload.ref : null,
    deleted: payload.deleted === true || (typeof payload.after === 'string' && ZERO_SHA.test(payload.after)),
  }
}

export function readGitlabDelivery(request: WebhookRequest): WebhookDelivery {
  const event = header(request, 'x-gitlab-event')
  if (!event) throw invalidRequest('the X-Gitlab-Event header is missing')
  const payload = payloadOf(request)
  const project = isObject(payload.project) ? payload.project : {}
  const repository = isObject(payload.repository) ? payload.repository : {}
  return {
    provider: 'gitlab',
    event,
    kind: event === 'Push Hook' ? 'push' : 'other',
    delivery: deliveryId(request, 'x-gitlab-event-uuid', 'x-gitlab-webhook-uuid'),
    urls: strings(project.git_http_url, project.web_url, repository.git_http_url, repository.homepage),
    ref: typeof payload.ref === 'string' ? payload.ref : null,
    deleted: typeof payload.after === 'string' && ZERO_SHA.test(payload.after),
  }
}

/** Constant-time comparison of two strings of any lengths (their SHA-256 digests are compared). */
function sameSecret(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest()
  const db = createHash('sha256').update(b, 'utf8').digest()
  return timingSafeEqual(da, db)
}

/** GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body with the secret>`. */
export function githubSignatureMatches(request: WebhookRequest, secret: string): boolean {
  const signature = header(request, 'x-hub-signature-256')
  if (!signature) return false
  const expected = 'sha256=' + createHmac('sha256', secret).update(request.body).digest('hex')
  return sameSecret(signature.trim().toLowerCase(), expected)
}

/** GitLab: `X-Gitlab-Token` is the secret itself. */
export function gitlabTokenMatches(request: WebhookRequest, secret: string): boolean {
  const token = header(request, 'x-gitlab-token')
  return token !== undefined && sameSecret(token, secret)
}

/**
 * What webhook payloads are matched on: `host[:port]/path`, lowercased, without a default port,
 * `.git`, or slashes at the end. Hosts compare case-insensitively, and GitHub and GitLab treat
 * repository paths case-insensitively too. Undefined for anything that is not an http(s) url.
 */
export function normalizeRepositoryUrl(url: string): string | undefined {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return undefined
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined
  const path = parsed.pathname.replace(/\/+$/, '').replace(/\.git$/i, '').replace(/\/+$/, '')
  return `${parsed.host}${path}`.toLowerCase()
}
