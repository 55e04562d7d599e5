import type { FastifyReply } from 'fastify'

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
export function sendPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.status(status)
    .header('content-security-policy', PAGE_CSP)
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-cache')
    .type('text/html; charset=utf-8')
    .send(body)
}
