import type { ComponentChildren } from 'preact'

/**
 * A link to somewhere outside the console (a repository, a pull request, a public site) given by
 * stored data: only http(s) URLs become links, so no stored `javascript:` URL can ever run. Opens in a
 * new tab without a referrer or an opener.
 */
export function ExternalLink(props: { href: string | null | undefined; children?: ComponentChildren }) {
  const href = props.href ?? ''
  if (!/^https?:\/\//i.test(href)) return <span class="mono">{props.children ?? href}</span>
  return <a href={href} target="_blank" rel="noopener noreferrer">{props.children ?? href}</a>
}
