/**
 * The pages of a documentation site, rendered on the server: a landing page, one page per guide and
 * one API reference page per API (Scalar, started by a same-origin script). Every value is escaped by
 * `html`; Markdown goes through the sanitizer first.
 */
import { html, jsonForScript, type SafeHtml } from './html.js'
import { renderMarkdown } from './markdown.js'

export interface SiteApiSummary {
  slug: string
  name: string
  /** `info.title` and `info.version` of the current document. */
  title: string | null
  version: string | null
  /** The API's own description (Markdown), shown on the landing page. */
  description: string | null
}

export interface SiteGuideSummary {
  slug: string
  title: string
}

/** What every page of one site needs: where it lives, its title, its navigation, its asset URLs. */
export interface SiteContext {
  /** Path prefix of the site's pages: `/@{org}/sites/{slug}`, or '' on the site's own domain. */
  base: string
  title: string
  apis: SiteApiSummary[]
  guides: SiteGuideSummary[]
  assets: { css: string; scalar: string; referenceJs: string; favicon: string }
}

type Current = { kind: 'home' } | { kind: 'guide'; slug: string } | { kind: 'api'; slug: string }

const currentIf = (yes: boolean) => (yes ? html` aria-current="page"` : '')
const apiLabel = (api: SiteApiSummary) => api.title ?? api.name

function layout(ctx: SiteContext, page: { title: string; current: Current; body: SafeHtml; scripts?: SafeHtml }): string {
  const { base } = ctx
  const { current } = page
  const firstGuide = ctx.guides[0]
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title}</title>
<link rel="icon" href="${ctx.assets.favicon}" type="image/svg+xml">
<link rel="stylesheet" href="${ctx.assets.css}">
</head>
<body>
<header class="site-header">
<a class="brand" href="${base}/">${ctx.title}</a>
<nav aria-label="Site">
<a href="${base}/"${currentIf(current.kind === 'home')}>Overview</a>
${firstGuide ? html`<a href="${base}/guides/${firstGuide.slug}"${currentIf(current.kind === 'guide')}>Guides</a>` : ''}
${ctx.apis.map((api) => html`<a href="${base}/apis/${api.slug}"${currentIf(current.kind === 'api' && current.slug === api.slug)}>${apiLabel(api)}</a>`)}
</nav>
</header>
${page.body}
${page.scripts ?? ''}
</body>
</html>
`.markup
}

function sidebar(ctx: SiteContext, current: Current): SafeHtml {
  return html`<aside class="sidebar">
<h2>Guides</h2>
${ctx.guides.length === 0 ? html`<p class="empty">No guides yet.</p>` : html`<ul>
${ctx.guides.map((g) => html`<li><a href="${ctx.base}/guides/${g.slug}"${currentIf(current.kind === 'guide' && current.slug === g.slug)}>${g.title}</a></li>
`)}</ul>`}
<h2>API reference</h2>
${ctx.apis.length === 0 ? html`<p class="empty">No APIs yet.</p>` : html`<ul>
${ctx.apis.map((api) => html`<li><a href="${ctx.base}/apis/${api.slug}">${apiLabel(api)}</a></li>
`)}</ul>`}
</aside>`
}

export function landingPage(ctx: SiteContext): string {
  const current: Current = { kind: 'home' }
  const counts = `${ctx.apis.length} API${ctx.apis.length === 1 ? '' : 's'} · ${ctx.guides.length} guide${ctx.guides.length === 1 ? '' : 's'}`
  const body = html`<div class="layout">
${sidebar(ctx, current)}
<main class="content">
<h1>${ctx.title}</h1>
<p class="lead">${counts}</p>
${ctx.apis.length === 0 ? '' : html`<section>
<h2>API reference</h2>
<div class="cards">
${ctx.apis.map((api) => html`<a class="card" href="${ctx.base}/apis/${api.slug}">
<div class="card-title">${apiLabel(api)}</div>
<div class="card-meta">${api.version ? `Version ${api.version}` : ''}</div>
${api.description ? html`<div class="card-body">${renderMarkdown(api.description)}</div>` : ''}
</a>
`)}</div>
</section>`}
${ctx.guides.length === 0 ? '' : html`<section>
<h2>Guides</h2>
<div class="cards">
${ctx.guides.map((g) => html`<a class="card" href="${ctx.base}/guides/${g.slug}"><div class="card-title">${g.title}</div></a>
`)}</div>
</section>`}
</main>
</div>`
  return layout(ctx, { title: ctx.title, current, body })
}

export function guidePage(ctx: SiteContext, guide: { slug: string; title: string; markdown: string }): string {
  const current: Current = { kind: 'guide', slug: guide.slug }
  const at = ctx.guides.findIndex((g) => g.slug === guide.slug)
  const previous = at > 0 ? ctx.guides[at - 1] : undefined
  const next = at >= 0 ? ctx.guides[at + 1] : undefined
  const body = html`<div class="layout">
${sidebar(ctx, current)}
<main class="content">
<h1>${guide.title}</h1>
<article class="prose">
${renderMarkdown(guide.markdown)}
</article>
<nav class="pager" aria-label="Guides">
<span>${previous ? html`<a href="${ctx.base}/guides/${previous.slug}">← ${previous.title}</a>` : ''}</span>
<span>${next ? html`<a href="${ctx.base}/guides/${next.slug}">${next.title} →</a>` : ''}</span>
</nav>
</main>
</div>`
  return layout(ctx, { title: `${guide.title} · ${ctx.title}`, current, body })
}

/**
 * Scalar's configuration: the document comes from our own host, and everything that would reach out
 * (default fonts from its CDN, the request client and its proxy, telemetry, the AI agent, developer
 * tools) is off.
 */
export function scalarConfiguration(documentUrl: string): Record<string, unknown> {
  return {
    url: documentUrl,
    withDefaultFonts: false,
    hideClientButton: true,
    hideTestRequestButton: true,
    telemetry: false,
    showDeveloperTools: 'never',
    agent: { disabled: true },
    documentDownloadType: 'json',
    hideDarkModeToggle: true,
    forceDarkModeState: 'light',
    defaultOpenFirstTag: true,
  }
}

export function referencePage(ctx: SiteContext, api: SiteApiSummary): string {
  const current: Current = { kind: 'api', slug: api.slug }
  const body = html`<div id="reference" class="reference"></div>
<script type="application/json" id="reference-config">${jsonForScript(scalarConfiguration(`${ctx.base}/apis/${api.slug}/openapi.json`))}</script>`
  const scripts = html`<script src="${ctx.assets.scalar}"></script>
<script src="${ctx.assets.referenceJs}"></script>`
  return layout(ctx, { title: `${apiLabel(api)} · ${ctx.title}`, current, body, scripts })
}

/** A page that is not there: a private site, an unknown guide or API, a path a site does not have. */
export function notFoundPage(): string {
  return html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Page not found</title></head>
<body>
<h1>Page not found</h1>
<p>There is no page at this address.</p>
</body>
</html>
`.markup
}
