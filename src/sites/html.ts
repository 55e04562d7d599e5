/**
 * HTML templates where escaping is the default: every value interpolated into `html` is escaped,
 * unless it is itself the result of `html` or of the Markdown sanitizer (`SafeHtml`).
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c])
}

/** Markup known to be safe: built by `html` or produced by the sanitizer. */
export class SafeHtml {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup
  }
}

/** Only for markup that went through the sanitizer (see `markdown.ts`). */
export const sanitized = (markup: string): SafeHtml => new SafeHtml(markup)

type Value = SafeHtml | string | number | boolean | null | undefined | Value[]

function render(value: Value): string {
  if (value instanceof SafeHtml) return value.markup
  if (Array.isArray(value)) return value.map(render).join('')
  if (value === null || value === undefined || value === false) return ''
  return escapeHtml(String(value))
}

export function html(strings: TemplateStringsArray, ...values: Value[]): SafeHtml {
  let out = strings[0]
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]
  return new SafeHtml(out)
}

/**
 * JSON inside a `<script type="application/json">` block: `<`, `>`, `&` and the two JavaScript line
 * separators are written as escapes, so no value can close the element or start markup.
 */
export function jsonForScript(value: unknown): SafeHtml {
  return new SafeHtml(JSON.stringify(value)
    .replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029'))
}

/** A whole HTML document: the head every page has (charset, viewport, title), what a page adds to it, its body. */
export function htmlDocument(page: { title: string; head?: SafeHtml; body: SafeHtml; bodyClass?: string }): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title}</title>
${page.head ?? ''}
</head>
<body${page.bodyClass ? html` class="${page.bodyClass}"` : ''}>
${page.body}
</body>
</html>
`.markup
}
