/**
 * Every HTML response of the server carries a Content-Security-Policy and framing protection, whatever
 * route renders it (`/docs`, the console, site pages, pages added later). A page that sets its own
 * policy keeps it; one that sets none gets DEFAULT_HTML_CSP. `X-Frame-Options` follows the policy's
 * `frame-ancestors` for browsers that do not read CSP: `DENY` for `'none'`, `SAMEORIGIN` for `'self'`.
 */
import type { FastifyInstance, FastifyReply, onSendHookHandler } from 'fastify'

/**
 * For HTML pages without a policy of their own: everything from this host only (scripts from files,
 * never inline), inline styles and `data:` images and fonts (UI bundles inject both), no plugins, no
 * form posts, and no framing at all.
 */
export const DEFAULT_HTML_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

/** Routes that never answer HTML (the API, git, webhooks, probes): no hook on their hot paths. */
const NOT_HTML = /^\/(?:v1\/|git\/|webhooks\/|healthz$|readyz$|metrics$|openapi\.)/

const FRAME_ANCESTORS = /(?:^|;)\s*frame-ancestors\s+([^;]*)/i

function frameOptions(policy: string): { policy: string; frameOptions: string | undefined } {
  const ancestors = FRAME_ANCESTORS.exec(policy)?.[1].trim()
  if (ancestors === undefined) return { policy: `${policy}; frame-ancestors 'none'`, frameOptions: 'DENY' }
  if (ancestors === "'none'") return { policy, frameOptions: 'DENY' }
  if (ancestors === "'self'") return { policy, frameOptions: 'SAMEORIGIN' }
  // A list of origins: X-Frame-Options cannot say that, and CSP is what modern browsers follow.
  return { policy, frameOptions: undefined }
}

/**
 * Sets the policy (the reply's own, else the default) and the X-Frame-Options that goes with it. The
 * hook does it for every route's HTML; the not-found handler, which no route hook reaches, calls it
 * through `sendPage`.
 */
export function protectHtmlReply(reply: FastifyReply): void {
  const own = reply.getHeader('content-security-policy')
  const { policy, frameOptions: xfo } = frameOptions(own === undefined ? DEFAULT_HTML_CSP : String(own))
  reply.header('content-security-policy', policy)
  if (xfo && reply.getHeader('x-frame-options') === undefined) reply.header('x-frame-options', xfo)
}

const protectHtml: onSendHookHandler = (_request, reply, payload, done) => {
  if (/^text\/html\b/i.test(String(reply.getHeader('content-type') ?? ''))) protectHtmlReply(reply)
  done(null, payload)
}

/** Must be registered before the routes (it adds its hook to each route that may answer HTML). */
export function protectHtmlResponses(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (NOT_HTML.test(route.url ?? route.path)) return
    const existing = route.onSend
    route.onSend = existing === undefined ? protectHtml : [...(Array.isArray(existing) ? existing : [existing]), protectHtml]
  })
}
