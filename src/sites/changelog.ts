/**
 * A changelog shown to people: the "Changelog" page of a documentation site and the Atom feed of a
 * public API's changelog (RFC 4287). Both list each version, newest first, with its breaking and
 * non-breaking changes; every value is escaped.
 */
import { listedChanges, type ChangelogChange, type ChangelogEntry } from '../domain/changes/changelog.js'
import { html, type SafeHtml } from './html.js'

/** One version as the page and the feed show it. */
export interface ChangelogItem {
  id: string
  number: number
  /** `info.version` of an API's document. */
  label: string | null
  created_at: string
  source: string
  /** The version number it was compared with; null for the first version. */
  previous: number | null
  breaking: number
  non_breaking: number
  annotation: number
  breakingChanges: ChangelogChange[]
  nonBreakingChanges: ChangelogChange[]
}

export function changelogItem({ version, previous, result }: ChangelogEntry): ChangelogItem {
  return {
    id: version.id,
    number: version.number,
    label: version.version ?? null,
    created_at: version.created_at,
    source: version.source,
    previous: previous?.number ?? null,
    breaking: result?.counts.breaking ?? 0,
    non_breaking: result?.counts['non-breaking'] ?? 0,
    annotation: result?.counts.annotation ?? 0,
    breakingChanges: listedChanges(result, 'breaking'),
    nonBreakingChanges: listedChanges(result, 'non-breaking'),
  }
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

function itemTitle(item: ChangelogItem): string {
  const name = `Version ${item.number}${item.label ? ` (${item.label})` : ''}`
  if (item.previous === null) return `${name}: first version`
  return `${name}: ${plural(item.breaking, 'breaking change')}, ${plural(item.non_breaking, 'non-breaking change')}`
}

const where = (change: ChangelogChange): string => {
  if (change.operations.length === 0) return change.component ?? ''
  const first = change.operations.slice(0, 3).map((op) => `${op.method.toUpperCase()} ${op.path}`).join(', ')
  return change.operations.length > 3 ? `${first} and ${change.operations.length - 3} more` : first
}

function changeList(title: string, changes: ChangelogChange[], counted: number): SafeHtml | string {
  if (changes.length === 0) return ''
  const more = counted > changes.length ? html`<p class="empty">and more (${counted} in all, counted once per operation)</p>` : ''
  return html`<h3>${title}</h3>
<ul class="changes">
${changes.map((c) => html`<li>${where(c) ? html`<code>${where(c)}</code>: ` : ''}${c.message}</li>
`)}</ul>
${more}`
}

/** The body of one version: its lists of changes (HTML, for the page and the feed's content). */
function itemBody(item: ChangelogItem): SafeHtml {
  if (item.previous === null) return html`<p>The first version.</p>`
  if (item.breaking + item.non_breaking === 0) {
    return html`<p>${item.annotation > 0 ? 'Documentation changes only.' : 'No changes a client would see.'}</p>`
  }
  return html`${changeList('Breaking changes', item.breakingChanges, item.breaking)}
${changeList('Non-breaking changes', item.nonBreakingChanges, item.non_breaking)}`
}

/** The changelog of an API as a section of a page. */
export function changelogSection(items: ChangelogItem[], total: number): SafeHtml {
  return html`<ol class="changelog" reversed>
${items.map((item) => html`<li id="version-${item.number}">
<h2>${itemTitle(item)}</h2>
<p class="card-meta"><time datetime="${item.created_at}">${item.created_at.slice(0, 10)}</time> · ${item.source}</p>
${itemBody(item)}
</li>
`)}</ol>
${total > items.length ? html`<p class="empty">The ${items.length} latest of ${total} versions.</p>` : ''}`
}

/** XML text: `html` escapes the five characters XML needs escaped. */
export function atomFeed(feed: { id: string; title: string; self: string; alternate: string; updated: string; items: ChangelogItem[]; entryLink: (item: ChangelogItem) => string }): string {
  return html`<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
<id>${feed.id}</id>
<title>${feed.title}</title>
<updated>${feed.updated}</updated>
<link rel="self" type="application/atom+xml" href="${feed.self}"/>
<link rel="alternate" type="application/json" href="${feed.alternate}"/>
<author><name>${feed.title}</name></author>
${feed.items.map((item) => html`<entry>
<id>${feed.entryLink(item)}</id>
<title>${itemTitle(item)}</title>
<updated>${item.created_at}</updated>
<link rel="alternate" href="${feed.entryLink(item)}"/>
<content type="html">${itemBody(item).markup}</content>
</entry>
`)}</feed>
`.markup
}
