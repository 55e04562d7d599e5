import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { promisify } from 'node:util'
import { gzip } from 'node:zlib'

const gzipAsync = promisify(gzip)

/** A static file of the site pages, served from memory under a name that changes with its content. */
export interface Asset {
  /** File name with a content hash: `scalar.3f2a….js`; served with a one-year immutable cache. */
  name: string
  type: string
  bytes: Buffer
  /** The gzip form, made once on first use (the Scalar bundle shrinks from 3.5 MB to about 1 MB). */
  gzipped(): Promise<Buffer>
}

/** A file under a name that already changes with its content (a build tool's hashed output, say). */
export function namedAsset(name: string, type: string, bytes: Buffer): Asset {
  let compressed: Promise<Buffer> | undefined
  return { name, type, bytes, gzipped: () => (compressed ??= gzipAsync(bytes, { level: 6 })) }
}

function asset(stem: string, extension: string, type: string, bytes: Buffer): Asset {
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 12)
  return namedAsset(`${stem}.${hash}.${extension}`, type, bytes)
}

/** The pages' own stylesheet: a plain layout, system fonts only (nothing is loaded from elsewhere). */
const SITE_CSS = `
:root { --ink: #1c2330; --muted: #5b6577; --line: #e3e7ee; --accent: #2b59c3; --soft: #f6f8fb; --scalar-custom-header-height: 56px; }
/* A reference shown alone (the console's frame) has no header above it. */
body.embedded { --scalar-custom-header-height: 0px; }
* { box-sizing: border-box; }
html, body { margin: 0; }
body { font: 16px/1.6 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: #fff; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
.site-header { display: flex; align-items: center; gap: 24px; height: 56px; padding: 0 24px; border-bottom: 1px solid var(--line); background: #fff; position: sticky; top: 0; z-index: 10; }
.site-header .brand { font-weight: 650; font-size: 18px; color: var(--ink); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 40%; }
.site-header nav { display: flex; gap: 18px; overflow-x: auto; white-space: nowrap; }
.site-header nav a { color: var(--muted); font-size: 15px; }
.site-header nav a[aria-current="page"] { color: var(--ink); font-weight: 600; }
.layout { display: grid; grid-template-columns: 264px minmax(0, 1fr); }
.sidebar { border-right: 1px solid var(--line); padding: 28px 16px; min-height: calc(100vh - 56px); background: #fbfcfd; }
.sidebar h2 { font-size: 12px; letter-spacing: .08em; text-transform: uppercase; color: var(--muted); margin: 0 0 8px; padding: 0 8px; }
.sidebar ul { list-style: none; margin: 0 0 28px; padding: 0; }
.sidebar li a { display: block; padding: 4px 8px; border-radius: 6px; color: var(--ink); font-size: 15px; }
.sidebar li a:hover { background: var(--soft); text-decoration: none; }
.sidebar li a[aria-current="page"] { background: #e9effb; color: var(--accent); font-weight: 600; }
.sidebar .empty { color: var(--muted); font-size: 14px; margin: 0 0 28px; padding: 0 8px; }
main.content { padding: 40px 56px 64px; max-width: 900px; }
main.content h1 { font-size: 32px; line-height: 1.25; margin: 0 0 12px; }
.lead { color: var(--muted); font-size: 18px; margin: 0 0 32px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(240px, 1fr)); gap: 16px; margin: 0 0 36px; }
.card { display: block; border: 1px solid var(--line); border-radius: 10px; padding: 16px 18px; color: var(--ink); background: #fff; }
.card:hover { border-color: var(--accent); text-decoration: none; box-shadow: 0 2px 10px rgba(30, 50, 90, .08); }
.card .card-title { font-weight: 600; margin: 0 0 4px; color: var(--accent); }
.card .card-meta { font-size: 13px; color: var(--muted); }
.card .card-body { font-size: 14px; color: var(--muted); margin-top: 8px; }
.card .card-body p { margin: 0 0 6px; }
section h2 { font-size: 20px; margin: 0 0 14px; }
.prose h1 { font-size: 30px; } .prose h2 { font-size: 22px; margin-top: 32px; } .prose h3 { font-size: 18px; }
.prose code { background: var(--soft); border: 1px solid var(--line); border-radius: 4px; padding: 1px 5px; font-size: 14px; }
.prose pre { background: #0f1623; color: #e6ebf3; border-radius: 8px; padding: 14px 16px; overflow-x: auto; }
.prose pre code { background: none; border: 0; padding: 0; color: inherit; }
.prose blockquote { margin: 0; padding: 4px 16px; border-left: 4px solid var(--line); color: var(--muted); }
.prose table { border-collapse: collapse; } .prose th, .prose td { border: 1px solid var(--line); padding: 6px 10px; }
.prose img { max-width: 100%; }
.pager { display: flex; justify-content: space-between; margin-top: 48px; padding-top: 20px; border-top: 1px solid var(--line); }
.reference { min-height: calc(100vh - 56px); }
.reference-bar { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 20px; padding: 10px 24px; border-bottom: 1px solid var(--line); background: var(--soft); font-size: 14px; }
.reference-bar-current { font-weight: 600; }
.reference-bar-pager { display: flex; gap: 20px; margin-left: auto; }
.reference-index .part-list { padding-left: 1.5em; }
.reference-index .part-list li { margin: 0 0 12px; }
.reference-index .part-name { font-weight: 600; }
.reference-index .part-meta, .reference-index .part-pieces { color: var(--muted); font-size: 14px; margin-left: 8px; }
.reference-index .part-list p { margin: 2px 0 0; color: var(--muted); font-size: 14px; }
.reference-missing { padding: 48px; color: var(--muted); }
.not-found { padding: 80px 24px; text-align: center; }
@media (max-width: 760px) {
  .layout { grid-template-columns: 1fr; }
  .sidebar { border-right: 0; border-bottom: 1px solid var(--line); min-height: 0; }
  main.content { padding: 24px 20px; }
}
`

/**
 * Starts Scalar on the reference page. Its configuration is a JSON data block in the page (data, not
 * code), so the Content-Security-Policy needs no inline script at all.
 */
const REFERENCE_JS = `(function () {
  var config = JSON.parse(document.getElementById('reference-config').textContent);
  window.Scalar.createApiReference(document.getElementById('reference'), config);
})();
`

/** A plain page icon, so that browsers do not ask for `/favicon.ico`. */
const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2b59c3"/><path d="M9 10h14M9 16h14M9 22h9" stroke="#fff" stroke-width="3" stroke-linecap="round"/></svg>`

function scalarBundle(): Buffer {
  const require = createRequire(import.meta.url)
  return readFileSync(require.resolve('@scalar/api-reference/browser/standalone.js'))
}

/** The site pages' static files, read once per process (`SiteAssets.shared()`). */
export class SiteAssets {
  private static instance: SiteAssets | undefined

  static shared(): SiteAssets {
    return (SiteAssets.instance ??= new SiteAssets())
  }

  readonly scalar = asset('scalar', 'js', 'text/javascript; charset=utf-8', scalarBundle())
  readonly css = asset('site', 'css', 'text/css; charset=utf-8', Buffer.from(SITE_CSS))
  readonly referenceJs = asset('reference', 'js', 'text/javascript; charset=utf-8', Buffer.from(REFERENCE_JS))
  readonly favicon = asset('favicon', 'svg', 'image/svg+xml', Buffer.from(FAVICON_SVG))
  private readonly byName = new Map([this.scalar, this.css, this.referenceJs, this.favicon].map((a) => [a.name, a]))

  get(name: string): Asset | undefined {
    return this.byName.get(name)
  }

  /** The files' URLs for pages whose `_assets/` folder is under `base` ('' for the root). */
  urls(base: string): { css: string; scalar: string; referenceJs: string; favicon: string } {
    const at = (asset: Asset) => `${base}/_assets/${asset.name}`
    return { css: at(this.css), scalar: at(this.scalar), referenceJs: at(this.referenceJs), favicon: at(this.favicon) }
  }
}
