import type { FastifyReply } from 'fastify'
import { protectHtmlReply } from './html-headers.js'

/**
 * The Content-Security-Policy of every HTML page the server renders (site pages and `/docs`): scripts,
 * styles, fonts, images and fetches only from this host (plus inline styles, which Scalar injects at
 * run time, and `data:` images, its icons). No inline script is allowed at all, so markup that slipped
 * into a page could not run anything; `frame-ancestors 'self'` keeps other sites from framing a page.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'self'",
].join('; ')

/** An HTML page: under the CSP, no referrer, revalidated on every load (a new version shows at once). */
export function sendPage(reply: FastifyReply, status: number, body: string, csp = PAGE_CSP): FastifyReply {
  reply.status(status)
    .header('content-security-policy', csp)
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-cache')
    .type('text/html; charset=utf-8')
  protectHtmlReply(reply)
  return reply.send(body)
}

/**
 * Whether a client asked for a page rather than data: its Accept header names `text/html` (or
 * `application/xhtml+xml`), and ranks it above JSON. Browsers do (`text/html,…,*\/*;q=0.8`); curl
 * (`*\/*`) and API clients (`application/json`) do not, and a tie goes to JSON.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false
  let page = 0
  let data = 0
  let anything = 0
  for (const part of accept.split(',')) {
    const [type, ...params] = part.trim().toLowerCase().split(';').map((p) => p.trim())
    const q = Number(params.find((p) => p.startsWith('q='))?.slice(2) ?? 1)
    const weight = Number.isFinite(q) ? q : 0
    if (type === 'text/html' || type === 'application/xhtml+xml') page = Math.max(page, weight)
    else if (type === 'application/json' || type === 'application/problem+json') data = Math.max(data, weight)
    else if (type === '*/*' || type === 'application/*') anything = Math.max(anything, weight)
  }
  return page > 0 && page > Math.max(data, anything)
}
