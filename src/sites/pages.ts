/**
 * The pages of a documentation site, rendered on the server: a landing page, one page per guide and
 * one API reference page per API (Scalar, started by a same-origin script). Every value is escaped by
 * `html`; Markdown goes through the sanitizer first.
 */
import { html, htmlDocument, jsonForScript, type SafeHtml } from './html.js'
import type { SiteAssets } from './assets.js'
import { renderMarkdown } from './markdown.js'
import { changelogSection, type ChangelogItem } from './changelog.js'

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
  assets: ReturnType<SiteAssets['urls']>
}

type Current = { kind: 'home' } | { kind: 'guide'; slug: string } | { kind: 'api'; slug: string } | { kind: 'changelog'; slug: string } | { kind: 'none' }

const currentIf = (yes: boolean) => (yes ? html` aria-current="page"` : '')
const apiLabel = (api: SiteApiSummary) => api.title ?? api.name

type PageAssets = SiteContext['assets']

/** The HTML document around every page: head (title, icon, stylesheet), a header bar, the body, scripts. */
function documentShell(page: { title: string; assets: PageAssets; header?: SafeHtml; body: SafeHtml; scripts?: SafeHtml; bodyClass?: string }): string {
  return htmlDocument({
    title: page.title,
    head: html`<link rel="icon" href="${page.assets.favicon}" type="image/svg+xml">
<link rel="stylesheet" href="${page.assets.css}">`,
    bodyClass: page.bodyClass,
    body: html`${page.header ? html`<header class="site-header">
${page.header}
</header>` : ''}
${page.body}
${page.scripts ?? ''}`,
  })
}

function layout(ctx: SiteContext, page: { title: string; current: Current; body: SafeHtml; scripts?: SafeHtml }): string {
  const { base } = ctx
  const { current } = page
  const firstGuide = ctx.guides[0]
  const header = html`<a class="brand" href="${base}/">${ctx.title}</a>
<nav aria-label="Site">
<a href="${base}/"${currentIf(current.kind === 'home')}>Overview</a>
${firstGuide ? html`<a href="${base}/guides/${firstGuide.slug}"${currentIf(current.kind === 'guide')}>Guides</a>` : ''}
${ctx.apis.map((api) => html`<a href="${base}/apis/${api.slug}"${currentIf(current.kind === 'api' && current.slug === api.slug)}>${apiLabel(api)}</a>`)}
${(current.kind === 'api' || current.kind === 'changelog') ? html`<a href="${base}/apis/${current.slug}/changelog"${currentIf(current.kind === 'changelog')}>Changelog</a>` : ''}
</nav>`
  return documentShell({ title: page.title, assets: ctx.assets, header, body: page.body, scripts: page.scripts })
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

/** An API's changelog: each version newest first with its breaking and non-breaking changes. */
export function changelogPage(ctx: SiteContext, api: SiteApiSummary, items: ChangelogItem[], total: number): string {
  const current: Current = { kind: 'changelog', slug: api.slug }
  const body = html`<div class="layout">
${sidebar(ctx, current)}
<main class="content">
<h1>${apiLabel(api)}: changelog</h1>
<p class="lead"><a href="${ctx.base}/apis/${api.slug}">API reference</a></p>
${changelogSection(items, total)}
</main>
</div>`
  return layout(ctx, { title: `Changelog · ${apiLabel(api)} · ${ctx.title}`, current, body })
}

/**
 * Scalar's configuration: the document comes from our own host, and everything that would reach out
 * (default fonts from its CDN, the request client and its proxy, telemetry, the AI agent, developer
 * tools) is off. `extra` adds what one kind of page needs (a part's page hides its models and download).
 */
export function scalarConfiguration(documentUrl: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
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
    ...extra,
  }
}

/** Scalar on a page: its mount point, its configuration as data, then its bundle and start-up script. */
function scalarReference(documentUrl: string, assets: { scalar: string; referenceJs: string }, extra?: Record<string, unknown>): { body: SafeHtml; scripts: SafeHtml } {
  return {
    body: html`<div id="reference" class="reference"></div>
<script type="application/json" id="reference-config">${jsonForScript(scalarConfiguration(documentUrl, extra))}</script>`,
    scripts: html`<script src="${assets.scalar}"></script>
<script src="${assets.referenceJs}"></script>`,
  }
}

export function referencePage(ctx: SiteContext, api: SiteApiSummary): string {
  const current: Current = { kind: 'api', slug: api.slug }
  const { body, scripts } = scalarReference(`${ctx.base}/apis/${api.slug}/openapi.json`, ctx.assets)
  return layout(ctx, { title: `${apiLabel(api)} · ${ctx.title}`, current, body, scripts })
}

/**
 * Scalar's options for one part of a large reference: the part's models are a slice of the API's,
 * shown within its operations anyway; Scalar's download would give the part, where readers expect the
 * whole document (the overview links it).
 */
export const PART_OPTIONS = { hideModels: true, documentDownloadType: 'none' }

/** A part of a large document's reference, as its pages list it (see domain/sites/reference-parts.ts). */
export interface ReferencePartLink {
  slug: string
  name: string
  description: string | null
  piece: { index: number; of: number } | null
  operations: number
}

const partLabel = (part: ReferencePartLink) => (part.piece ? `${part.name} (${part.piece.index} of ${part.piece.of})` : part.name)
const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`
/** Tag descriptions are shown as plain text, cut short: the index of a large API lists hundreds. */
const shortText = (text: string) => (text.length > 240 ? `${text.slice(0, 240).trimEnd()}…` : text)

/**
 * The reference of a document too large for one page: its parts (tags, or path groups), each a link
 * to its own Scalar page; a group in several pieces links each piece.
 */
export function referenceIndexPage(ctx: SiteContext, api: SiteApiSummary, parts: ReferencePartLink[]): string {
  const current: Current = { kind: 'api', slug: api.slug }
  const at = `${ctx.base}/apis/${api.slug}`
  const groups: ReferencePartLink[][] = []
  for (const part of parts) {
    const last = groups[groups.length - 1]
    if (last && part.piece && part.piece.index > 1 && last[0].name === part.name) last.push(part)
    else groups.push([part])
  }
  const operations = parts.reduce((n, part) => n + part.operations, 0)
  const body = html`<main class="content reference-index">
<h1>${apiLabel(api)}</h1>
<p class="lead">${api.version ? `Version ${api.version} · ` : ''}${plural(operations, 'operation')} in ${plural(groups.length, 'section')}. This API is large, so its reference has a page per section. <a href="${at}/openapi.json">Download the whole document</a>.</p>
<ol class="part-list">
${groups.map((group) => html`<li>
<a class="part-name" href="${at}/parts/${group[0].slug}">${group[0].name}</a> <span class="part-meta">${plural(group.reduce((n, part) => n + part.operations, 0), 'operation')}</span>
${group.length > 1 ? html`<span class="part-pieces">pages ${group.map((part, i) => html`${i > 0 ? ' · ' : ''}<a href="${at}/parts/${part.slug}">${part.piece?.index ?? i + 1}</a>`)}</span>` : ''}
${group[0].description ? html`<p>${shortText(group[0].description)}</p>` : ''}
</li>
`)}</ol>
</main>`
  return layout(ctx, { title: `${apiLabel(api)} · ${ctx.title}`, current, body })
}

/** One part of a large document's reference: Scalar on the part's document, with the way back and on. */
export function referencePartPage(ctx: SiteContext, api: SiteApiSummary, parts: ReferencePartLink[], part: ReferencePartLink): string {
  const current: Current = { kind: 'api', slug: api.slug }
  const at = `${ctx.base}/apis/${api.slug}`
  const position = parts.findIndex((p) => p.slug === part.slug)
  const previous = position > 0 ? parts[position - 1] : undefined
  const next = position >= 0 ? parts[position + 1] : undefined
  const { body, scripts } = scalarReference(`${at}/parts/${part.slug}/openapi.json`, ctx.assets, PART_OPTIONS)
  const bar = html`<nav class="reference-bar" aria-label="Sections">
<a href="${at}">${apiLabel(api)}: all sections</a>
<span class="reference-bar-current">${partLabel(part)}</span>
<span class="reference-bar-pager">${previous ? html`<a href="${at}/parts/${previous.slug}" rel="prev">← ${partLabel(previous)}</a>` : ''}${next ? html`<a href="${at}/parts/${next.slug}" rel="next">${partLabel(next)} →</a>` : ''}</span>
</nav>`
  return layout(ctx, { title: `${partLabel(part)} · ${apiLabel(api)} · ${ctx.title}`, current, body: html`${bar}
${body}`, scripts })
}

/**
 * The service's own reference (`/docs`): the same Scalar page as a site's, on the service's
 * `/openapi.json`, with a header that links the document in both formats.
 */
export function serviceReferencePage(title: string, assets: PageAssets): string {
  const header = html`<a class="brand" href="/docs">${title}</a>
<nav aria-label="Documents">
<a href="/openapi.json">openapi.json</a>
<a href="/openapi.yaml">openapi.yaml</a>
</nav>`
  return documentShell({ title, assets, header, ...scalarReference('/openapi.json', assets) })
}

/**
 * A version's reference alone, without a header: the console shows it in a frame, and Scalar loads the
 * document from `documentUrl` with the console's session.
 */
export function embeddedReferencePage(title: string, documentUrl: string, assets: PageAssets, extra?: Record<string, unknown>): string {
  return documentShell({ title, assets, bodyClass: 'embedded', ...scalarReference(documentUrl, assets, extra) })
}

/**
 * A page a public site does not have (an unknown guide or API, any other path under it): in the site's
 * layout with its navigation, so the reader can go on from there. A site that is not there (unknown or
 * private) answers the bare page of registry-pages.ts instead, which says nothing about the site.
 */
export function notFoundPage(ctx: SiteContext): string {
  const current: Current = { kind: 'none' }
  const body = html`<div class="layout">
${sidebar(ctx, current)}
<main class="content">
<h1>Page not found</h1>
<p class="lead">There is no page at this address.</p>
<p><a href="${ctx.base}/">Back to ${ctx.title}</a></p>
</main>
</div>`
  return layout(ctx, { title: `Page not found · ${ctx.title}`, current, body })
}
