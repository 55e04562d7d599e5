/**
 * The registry's own pages for a person with a browser (docs/api.md, "Browsers"): `/` says what this
 * server is and where to go, `/@{org}` lists an organization's public resources and sites. Plain HTML,
 * no script at all; the one stylesheet is inline and allowed by its hash. Every stored string (names,
 * descriptions) goes through `html`, which escapes it.
 */
import { createHash } from 'node:crypto'
import type { OrganizationIndex, OrganizationSearch, PublicOrganization, PublicResource } from '../domain/public/public-index.js'
import type { OrganizationRecord, ResourceKind } from '../storage/registry-records.js'
import type { SiteRecord } from '../storage/records.js'
// The stylesheet is ours and constant: it goes in as it is (SafeHtml), and its hash is in the policy.
import { html, htmlDocument, SafeHtml } from './html.js'

const STYLE = `
:root { --ink: #1c2330; --muted: #5b6577; --line: #e3e7ee; --accent: #2b59c3; --soft: #f6f8fb; }
* { box-sizing: border-box; }
html, body { margin: 0; }
body { font: 16px/1.6 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: #fff; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
header { display: flex; align-items: center; gap: 16px; height: 56px; padding: 0 24px; border-bottom: 1px solid var(--line); }
header .brand { font-weight: 650; font-size: 18px; color: var(--ink); }
header .version { color: var(--muted); font-size: 14px; }
main { max-width: 960px; margin: 0 auto; padding: 40px 24px 64px; }
h1 { font-size: 32px; line-height: 1.25; margin: 0 0 8px; overflow-wrap: anywhere; }
h2 { font-size: 20px; margin: 36px 0 12px; }
.lead { color: var(--muted); font-size: 18px; margin: 0 0 28px; }
.muted { color: var(--muted); font-size: 14px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); gap: 16px; }
.card { display: block; border: 1px solid var(--line); border-radius: 10px; padding: 16px 18px; color: var(--ink); }
.card:hover { border-color: var(--accent); text-decoration: none; }
.card strong { display: block; color: var(--accent); margin-bottom: 4px; }
.card span { color: var(--muted); font-size: 14px; }
table { width: 100%; border-collapse: collapse; font-size: 15px; table-layout: fixed; }
col.kind { width: 12%; } col.name { width: 26%; } col.latest { width: 16%; } col.document { width: 22%; }
th, td { text-align: left; padding: 8px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: 13px; text-transform: uppercase; letter-spacing: .05em; }
td.name { font-weight: 600; overflow-wrap: anywhere; }
td.description { color: var(--muted); overflow-wrap: anywhere; }
ul.plain { list-style: none; padding: 0; margin: 0; }
ul.plain li { padding: 8px 0; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
.empty { color: var(--muted); }
.search { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; margin: 0 0 8px; }
.search label { width: 100%; font-weight: 600; }
.search input { flex: 1 1 240px; font: inherit; padding: 7px 10px; border: 1px solid #8a94a6; border-radius: 6px; }
.search button { font: inherit; padding: 7px 16px; border: 1px solid var(--accent); border-radius: 6px; background: var(--accent); color: #fff; cursor: pointer; }
.search input:focus-visible, .search button:focus-visible, a:focus-visible { outline: 3px solid #9db7f0; outline-offset: 2px; }
nav.pages { display: flex; gap: 16px; margin-top: 12px; }
code { font: 14px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--soft); padding: 1px 5px; border-radius: 4px; }
@media (max-width: 640px) {
  header { padding: 0 16px; }
  main { padding: 24px 16px 48px; }
  table, tbody, tr, td { display: block; }
  thead, colgroup { display: none; }
  tr { padding: 10px 0; border-bottom: 1px solid var(--line); }
  td { border: 0; padding: 2px 0; }
}
`

/**
 * These pages' Content-Security-Policy: nothing loads but the inline stylesheet (by its hash) and
 * `data:` images; no script, no framing, forms only to this host.
 */
export const REGISTRY_PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  'img-src data:',
  "base-uri 'none'",
  // The organization page's search form (a GET to the page itself).
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/** Where the service's own pages are, or undefined where they are not served (the public host). */
export interface ServiceLinks {
  docs: string
  openapi: string
  console: string
}

/** A page in the registry's layout; without `service`, no header (a page that must not name the registry). */
function shell(page: { title: string; service?: { name: string; version: string }; body: SafeHtml }): string {
  return htmlDocument({
    title: page.title,
    head: html`<link rel="icon" href="data:,">
<style>${new SafeHtml(STYLE)}</style>`,
    body: html`${page.service ? html`<header><a class="brand" href="/">${page.service.name}</a><span class="version">${page.service.version}</span></header>` : ''}
<main>
${page.body}
</main>`,
  })
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

/** `/`: what this server is, where its reference, description and console are, and the public index. */
export function homePage(service: { name: string; version: string }, links: ServiceLinks | undefined,
  organizations: { entry: PublicOrganization; href: string }[]): string {
  const body = html`<h1>${service.name}</h1>
<p class="lead">A self-hosted registry of OpenAPI documents, JSON Schemas and Spectral rulesets, with the
full version history of each. Programs use its HTTP interface under <code>/v1</code> with an
organization's key; people sign in to the console.</p>
${links ? html`<div class="cards">
<a class="card" href="${links.console}"><strong>Console</strong><span>Sign in with an API key to manage APIs, schemas, rulesets, sites and SDKs.</span></a>
<a class="card" href="${links.docs}"><strong>API reference</strong><span>The registry's HTTP interface, every route and object.</span></a>
<a class="card" href="${links.openapi}"><strong>OpenAPI description</strong><span><code>/openapi.json</code> and <code>/openapi.yaml</code>, for clients and code generators.</span></a>
</div>` : ''}
<h2>Public registry</h2>
${organizations.length === 0
    ? html`<p class="empty">No organization has made anything public yet.</p>`
    : html`<p class="muted">Organizations that publish APIs, schemas, rulesets or documentation to everyone, without a key.</p>
<ul class="plain">
${organizations.map(({ entry: { organization, counts }, href }) => html`<li><a href="${href}">${organization.name}</a>
<span class="muted">@${organization.slug} · ${plural(counts.apis, 'API')} · ${plural(counts.schemas, 'schema')} · ${plural(counts.rulesets, 'ruleset')} · ${plural(counts.sites, 'site')}</span></li>
`)}</ul>`}`
  return shell({ title: service.name, service, body })
}

const kindPaths = { apis: 'apis', schemas: 'schemas', rulesets: 'rulesets' } as const

/** A short plain-text form of a description (Markdown is shown as its text, never rendered here). */
function summary(description: string | null): string {
  if (!description) return ''
  const text = description.replace(/\s+/g, ' ').trim()
  return text.length > 200 ? `${text.slice(0, 199)}…` : text
}

const KIND_NAMES: Record<ResourceKind, { plural: keyof typeof kindPaths; label: string }> = {
  api: { plural: 'apis', label: 'API' }, schema: { plural: 'schemas', label: 'JSON Schema' }, ruleset: { plural: 'rulesets', label: 'Ruleset' },
}

/** A table of resources: name, latest version, links to the document, description (and kind, for search results). */
function resourceRows(org: string, items: PublicResource[], showKind: boolean): SafeHtml {
  return html`<table>
<colgroup>${showKind ? html`<col class="kind">` : ''}<col class="name"><col class="latest"><col class="document"><col></colgroup>
<thead><tr>${showKind ? html`<th>Kind</th>` : ''}<th>Name</th><th>Latest</th><th>Document</th><th>Description</th></tr></thead>
<tbody>
${items.map(({ resource, current }) => {
    const href = `/@${encodeURIComponent(org)}/${KIND_NAMES[resource.kind].plural}/${encodeURIComponent(resource.slug)}`
    const latest = current
      ? (current.version ? html`${current.version} <span class="muted">(version ${current.number})</span>` : html`version ${current.number}`)
      : html`<span class="muted">no document yet</span>`
    const links = current
      ? html`<a href="${href}/latest">JSON</a> · <a href="${href}/latest?format=yaml">YAML</a> · <a href="${href}/versions">versions</a>`
      : ''
    return html`<tr>${showKind ? html`<td>${KIND_NAMES[resource.kind].label}</td>` : ''}<td class="name">${resource.name}</td><td>${latest}</td><td>${links}</td><td class="description">${summary(resource.description)}</td></tr>
`
  })}</tbody>
</table>`
}

function resourceTable(org: string, plural: keyof typeof kindPaths, items: PublicResource[], total: number): SafeHtml {
  if (items.length === 0) return html`<p class="empty">None public.</p>`
  const base = `/@${encodeURIComponent(org)}/${kindPaths[plural]}`
  return html`${resourceRows(org, items, false)}
${total > items.length ? html`<p class="muted">${items.length} of ${total} shown; all of them: <a href="${base}?limit=100">${base}</a></p>` : ''}`
}

/** The search box: a plain GET form to the organization's page, so it works without script. */
function searchForm(org: string, q = ''): SafeHtml {
  return html`<form class="search" method="get" action="/@${encodeURIComponent(org)}" role="search">
<label for="q">Search the public APIs, schemas and rulesets</label>
<input id="q" name="q" type="search" maxlength="200" value="${q}" placeholder="a name, a path, an operation id, a tag…">
<button type="submit">Search</button>
</form>`
}

function siteList(org: string, sites: SiteRecord[]): SafeHtml {
  if (sites.length === 0) return html`<p class="empty">None public.</p>`
  return html`<ul class="plain">
${sites.map((site) => html`<li><a href="/@${encodeURIComponent(org)}/sites/${encodeURIComponent(site.slug)}/">${site.title ?? site.name}</a></li>
`)}</ul>`
}

function organizationHeader(organization: OrganizationRecord, q?: string): SafeHtml {
  return html`<h1>${organization.name}</h1>
<p class="lead">@${organization.slug}: what this organization publishes to everyone. The documents are served as JSON, or YAML on request.</p>
${searchForm(organization.slug, q)}`
}

/** `/@{org}`: the organization's public APIs, schemas and rulesets, with links to their documents, and its sites. */
export function organizationPage(service: { name: string; version: string }, index: OrganizationIndex): string {
  const { organization, counts } = index
  const org = organization.slug
  const body = html`${organizationHeader(organization)}
<h2>APIs</h2>
${resourceTable(org, 'apis', index.apis, counts.apis)}
<h2>JSON Schemas</h2>
${resourceTable(org, 'schemas', index.schemas, counts.schemas)}
<h2>Rulesets</h2>
${resourceTable(org, 'rulesets', index.rulesets, counts.rulesets)}
<h2>Documentation sites</h2>
${siteList(org, index.sites)}`
  return shell({ title: `${organization.name} · ${service.name}`, service, body })
}

/** `/@{org}?q=…`: one page of the organization's public resources that match, best first, with links to the others. */
export function organizationSearchPage(service: { name: string; version: string }, found: OrganizationSearch): string {
  const { organization, q, hits, total, page } = found
  const org = encodeURIComponent(organization.slug)
  const number = Math.floor(page.offset / page.limit) + 1
  const pageLink = (n: number) => `/@${org}?q=${encodeURIComponent(q)}${n > 1 ? `&page=${n}` : ''}`
  const first = page.offset + 1
  const body = html`${organizationHeader(organization, q)}
<h2>Results for “${q}”</h2>
${total === 0
    ? html`<p class="empty">Nothing public matches. Words match by their beginning and with a typo or two; try fewer of them.</p>`
    : hits.length === 0 ? html`<p class="empty">${plural(total, 'result')}, none on this page: <a href="${pageLink(1)}">the first results</a>.</p>`
    : html`<p class="muted" role="status">${plural(total, 'result')}${total > hits.length ? html`, ${first} to ${page.offset + hits.length} shown` : ''}, best first.</p>
${resourceRows(organization.slug, hits, true)}`}
<nav class="pages" aria-label="Result pages">
${number > 1 ? html`<a href="${pageLink(number - 1)}" rel="prev">Previous results</a>` : ''}
${page.offset + hits.length < total ? html`<a href="${pageLink(number + 1)}" rel="next">Next results</a>` : ''}
<a href="/@${org}">Everything @${organization.slug} publishes</a>
</nav>`
  return shell({ title: `${q}: search · ${organization.name} · ${service.name}`, service, body })
}

/**
 * A page that is not there, in the registry's own layout with a way back to `/`. Without `service`, the
 * same page bare: what a site that is not there (unknown or private) answers, saying nothing about it.
 */
export function registryNotFoundPage(service?: { name: string; version: string }): string {
  if (!service) return shell({ title: 'Page not found', body: html`<h1>Page not found</h1>\n<p class="lead">There is no page at this address.</p>` })
  return shell({ title: `Page not found · ${service.name}`, service, body: html`<h1>Page not found</h1>
<p class="lead">There is no page at this address. <a href="/">The registry's home page</a> lists what there is.</p>` })
}
