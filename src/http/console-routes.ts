/**
 * The web console (issue 17): the single-page app Vite builds from `console/` into `dist/console/`,
 * served at `/console` by the registry itself. Every path under `/console` that is not a built file
 * answers the app's page, so a deep link or a reload lands on the page it names; the hashed files
 * are cached as immutable. The app talks to the server through `/v1` only.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { Type } from 'typebox'
import { notFound } from '../errors.js'
import { namedAsset, SiteAssets, type Asset } from '../sites/assets.js'
import { embeddedReferencePage, PART_OPTIONS } from '../sites/pages.js'
import { sendAsset } from './asset-reply.js'
import { sendPage as sendHtmlPage } from './html-reply.js'
import { Ulid } from './schemas.js'

/** Where `npm run build` writes the console (the same place from `src/http` under tsx and from `dist/http`). */
export const CONSOLE_BUILD = fileURLToPath(new URL('../../dist/console/', import.meta.url))

/**
 * The console's Content-Security-Policy: every script, style, image and request from this host, no
 * inline script or style at all (the page has neither), nothing may frame it and it posts no form.
 * The one frame it shows is the API reference (`/console/_reference/…`, same origin).
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
}

/** The built console: its page and its hashed files, read once when the app is built. */
export interface ConsoleBuild {
  page: Buffer
  assets: Map<string, Asset>
}

export function loadConsoleBuild(directory = CONSOLE_BUILD): ConsoleBuild | undefined {
  const page = join(directory, 'index.html')
  if (!existsSync(page)) return undefined
  const assets = new Map<string, Asset>()
  const assetDir = join(directory, 'assets')
  if (existsSync(assetDir)) {
    for (const name of readdirSync(assetDir)) {
      assets.set(name, namedAsset(name, TYPES[extname(name)] ?? 'application/octet-stream', readFileSync(join(assetDir, name))))
    }
  }
  return { page: readFileSync(page), assets }
}

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head>
<body><h1>The console is not built</h1><p>Run <code>npm run build</code> (which <code>npm start</code> runs) and restart the registry.</p></body></html>
`

/** `directory`: where the build is (default `dist/console`). */
export async function consoleRoutes(app: FastifyInstance, options: { directory?: string } = {}): Promise<void> {
  const build = loadConsoleBuild(options.directory)

  const sendPage = (reply: FastifyReply) => reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('referrer-policy', 'same-origin')
    .header('cache-control', 'no-cache')
    .type('text/html; charset=utf-8')
    .status(build ? 200 : 503)
    .send(build?.page ?? NOT_BUILT)

  const hide = { hide: true }
  app.get('/console', { schema: hide }, async (_request, reply) => sendPage(reply))
  app.get('/console/*', { schema: hide }, async (_request, reply) => sendPage(reply))
  app.get('/console/assets/:file', {
    schema: { ...hide, params: Type.Object({ file: Type.String({ maxLength: 200 }) }) },
  }, async (request, reply) => {
    const asset = build?.assets.get((request.params as { file: string }).file)
    if (!asset) throw notFound('file')
    return sendAsset(request, reply, asset)
  })

  // A version's API reference, for the console's frame: Scalar (the sites' bundle, its files where
  // /docs serves them) under the pages' CSP, which allows the inline styles Scalar injects; the console
  // itself keeps its stricter policy. The document is read through /v1 with the session's cookie.
  const scalarFiles = SiteAssets.shared().urls('/docs')
  app.get('/console/_reference/apis/:api/versions/:version', {
    schema: { ...hide, params: Type.Object({ api: Ulid, version: Ulid }), querystring: Type.Object({ part: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) }) },
  }, async (request, reply) => {
    const { api, version } = request.params as { api: string; version: string }
    // `?part=`: one part of a large document (the console lists them from /v1/…/reference-parts).
    const { part } = request.query as { part?: string }
    const at = `/v1/apis/${api}/versions/${version}`
    const page = part === undefined
      ? embeddedReferencePage('API reference', `${at}/document`, scalarFiles)
      : embeddedReferencePage('API reference', `${at}/reference-parts/${encodeURIComponent(part)}`, scalarFiles, PART_OPTIONS)
    return sendHtmlPage(reply, 200, page)
  })
}
