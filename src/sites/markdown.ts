import { LRUCache } from 'lru-cache'
import MarkdownIt from 'markdown-it'
import sanitizeHtml from 'sanitize-html'
import { sanitized, type SafeHtml } from './html.js'

/**
 * Markdown for guides and API descriptions. Two layers: markdown-it with raw HTML off (HTML in the
 * source is shown as text, and its link validator drops `javascript:`, `vbscript:`, `file:` and most
 * `data:` URLs), then sanitize-html with an allow-list of the tags Markdown produces, so nothing else
 * (no script, no event handler, no style, no foreign URL scheme) reaches a page even if a future
 * markdown-it option or plugin let it through.
 */
const markdown = new MarkdownIt({ html: false, linkify: true, typographer: false })

const TEXT_ALIGN = { 'text-align': [/^(?:left|right|center)$/] }

const ALLOWED: sanitizeHtml.IOptions = {
  allowedTags: [
    'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'br', 'hr', 'blockquote', 'pre', 'code', 'em', 'strong', 's', 'del',
    'ul', 'ol', 'li', 'a', 'img', 'table', 'thead', 'tbody', 'tr', 'th', 'td',
  ],
  allowedAttributes: {
    // `rel` is only ever set by the transform below.
    a: ['href', 'title', 'rel'],
    img: ['src', 'alt', 'title'],
    ol: ['start'],
    th: ['style'],
    td: ['style'],
    code: ['class'],
  },
  allowedStyles: { th: TEXT_ALIGN, td: TEXT_ALIGN },
  allowedClasses: { code: [/^language-[\w-]+$/] },
  allowedSchemes: ['http', 'https', 'mailto'],
  // Images only from the site's own host: a page never makes a request elsewhere.
  allowedSchemesByTag: { img: [] },
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  transformTags: {
    a: (tagName, attribs) => (/^https?:/i.test(attribs.href ?? '')
      ? { tagName, attribs: { ...attribs, rel: 'noopener noreferrer nofollow' } }
      : { tagName, attribs }),
  },
}
/**
 * Rendered pages by their Markdown source: a page view renders nothing the last views rendered already
 * (rendering and sanitizing a long guide costs milliseconds). Bounded by the size of the sources kept.
 */
const rendered = new LRUCache<string, SafeHtml>({ maxSize: 8 * 1024 * 1024, sizeCalculation: (_html, source) => Math.max(1, source.length) })

export function renderMarkdown(source: string): SafeHtml {
  let page = rendered.get(source)
  if (!page) {
    page = sanitized(sanitizeHtml(markdown.render(source), ALLOWED))
    rendered.set(source, page)
  }
  return page
}
