/**
 * The guide editor's preview: Markdown rendered as the sites render it (markdown-it, raw HTML shown as
 * text, `javascript:` and other unsafe links dropped), then filtered through an allow-list in an inert
 * document: only the tags Markdown makes, no event handler, no style attribute (table alignment is
 * rendered as a class, so the console's CSP stays without inline styles), links only to http(s), mailto or this
 * host, images only from this host. Loaded only by the guide editor.
 */
import MarkdownIt from 'markdown-it'

const markdown = new MarkdownIt({ html: false, linkify: true, typographer: false })

// Table alignment as a class, never a style attribute: even parsing one in an inert document counts as
// applying an inline style under the console's CSP.
for (const rule of ['th_open', 'td_open']) {
  markdown.renderer.rules[rule] = (tokens, index, options, _env, renderer) => {
    const token = tokens[index]
    const align = /text-align:\s*(left|right|center)/.exec(String(token.attrGet('style') ?? ''))?.[1]
    token.attrs = (token.attrs ?? []).filter(([name]) => name !== 'style')
    if (align) token.attrSet('class', `align-${align}`)
    return renderer.renderToken(tokens, index, options)
  }
}

const TAGS = new Set([
  'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'P', 'BR', 'HR', 'BLOCKQUOTE', 'PRE', 'CODE', 'EM', 'STRONG', 'S', 'DEL',
  'UL', 'OL', 'LI', 'A', 'IMG', 'TABLE', 'THEAD', 'TBODY', 'TR', 'TH', 'TD',
])
const ATTRIBUTES: Record<string, string[]> = { A: ['href', 'title'], IMG: ['src', 'alt', 'title'], OL: ['start'], CODE: ['class'], TH: ['class'], TD: ['class'] }
const CLASSES: Record<string, RegExp> = { CODE: /^language-[\w-]+$/, TH: /^align-(left|right|center)$/, TD: /^align-(left|right|center)$/ }

const hasScheme = (url: string) => /^[a-z][a-z0-9+.-]*:/i.test(url.trim()) || url.trim().startsWith('//')
const safeHref = (url: string) => !hasScheme(url) || /^(https?|mailto):/i.test(url.trim())
const safeSrc = (url: string) => !hasScheme(url)

function clean(node: Element): void {
  for (const child of [...node.children]) {
    if (!TAGS.has(child.tagName)) {
      child.replaceWith(...child.childNodes)
      continue
    }
    for (const { name } of [...child.attributes]) {
      if (!(ATTRIBUTES[child.tagName] ?? []).includes(name)) child.removeAttribute(name)
    }
    if (child.hasAttribute('class') && !CLASSES[child.tagName]?.test(child.getAttribute('class') ?? '')) child.removeAttribute('class')
    if (child.tagName === 'A') {
      if (!safeHref(child.getAttribute('href') ?? '')) child.removeAttribute('href')
      else if (/^https?:/i.test(child.getAttribute('href') ?? '')) {
        child.setAttribute('rel', 'noopener noreferrer nofollow')
        child.setAttribute('target', '_blank')
      }
    }
    if (child.tagName === 'IMG' && !safeSrc(child.getAttribute('src') ?? '')) {
      child.replaceWith(document.createTextNode(child.getAttribute('alt') ?? ''))
      continue
    }
    clean(child)
  }
}

/** The preview's nodes, ready to be placed in the page. */
export function renderPreview(source: string): Node[] {
  const inert = new DOMParser().parseFromString(`<body>${markdown.render(source)}</body>`, 'text/html')
  clean(inert.body)
  return [...inert.body.childNodes].map((node) => document.importNode(node, true))
}
