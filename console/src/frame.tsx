/** The frame around every signed-in page: the navigation, the organization, the account. */
import type { ComponentChildren } from 'preact'
import { useSession } from './session'
import { useLocation } from 'preact-iso'
import favicon from './favicon.svg'
import { Icon, type IconName } from './icons'
import { withQuery } from './api'

interface NavItem {
  href: string
  label: string
  icon: IconName
}

const SECTIONS: { title: string; items: NavItem[] }[] = [
  {
    title: 'Registry',
    items: [
      { href: '/console/', label: 'Overview', icon: 'overview' },
      { href: '/console/apis', label: 'APIs', icon: 'apis' },
      { href: '/console/schemas', label: 'Schemas', icon: 'schemas' },
      { href: '/console/rulesets', label: 'Rulesets', icon: 'rulesets' },
    ],
  },
  {
    title: 'Publish',
    items: [
      { href: '/console/sites', label: 'Sites', icon: 'sites' },
      { href: '/console/sdks', label: 'SDKs', icon: 'sdks' },
      { href: '/console/builds', label: 'Builds', icon: 'builds' },
    ],
  },
  {
    title: 'Organization',
    items: [
      { href: '/console/keys', label: 'API keys', icon: 'keys' },
      { href: '/console/webhooks', label: 'Webhooks', icon: 'webhooks' },
      { href: '/console/mirror', label: 'Git mirror', icon: 'mirror' },
    ],
  },
]

/** The section a path belongs to: `/console/apis/01H…/versions` is under APIs. */
function isCurrent(item: NavItem, path: string): boolean {
  const base = item.href.replace(/\/$/, '')
  if (base === '/console') return path === '/console' || path === '/console/'
  return path === base || path.startsWith(`${base}/`)
}

/** The registry-wide search box: Enter opens the search page with the words. */
function QuickSearch() {
  const { path, route } = useLocation()
  if (path === '/console/search') return null
  const submit = (event: Event) => {
    event.preventDefault()
    const input = (event.currentTarget as HTMLFormElement).elements.namedItem('q') as HTMLInputElement
    if (input.value.trim()) route(withQuery('/console/search', { q: input.value.trim() }))
    input.value = ''
  }
  return (
    <form class="quick-search" role="search" onSubmit={submit}>
      <label class="visually-hidden" for="quick-search">Search APIs, schemas and rulesets</label>
      <input id="quick-search" name="q" type="search" placeholder="Search…" autoComplete="off" spellcheck={false} />
    </form>
  )
}

export function Frame(props: { children: ComponentChildren }) {
  const { path } = useLocation()
  const { session, signOut } = useSession()
  return (
    <div class="frame">
      <a class="skip-link" href="#main">Skip to content</a>
      <aside class="sidebar">
        <a class="brand" href="/console/"><img src={favicon} alt="" /> API Registry</a>
        <div class="org"><strong>{session.organization.name}</strong><span>@{session.organization.slug}</span></div>
        <QuickSearch />
        <nav class="nav" aria-label="Console">
          {SECTIONS.map((section) => (
            <div key={section.title}>
              <h2>{section.title}</h2>
              <ul>
                {section.items.map((item) => (
                  <li key={item.href}>
                    <a href={item.href} aria-current={isCurrent(item, path) ? 'page' : undefined}><Icon name={item.icon} />{item.label}</a>
                  </li>
                ))}
              </ul>
            </div>
          ))}
        </nav>
        <div class="account">
          <div class="who">{session.key.name ?? 'API key'} <span>· {session.key.role}</span></div>
          <button type="button" onClick={() => void signOut()}>Sign out</button>
        </div>
      </aside>
      <div class="main">
        <main id="main" class="content">{props.children}</main>
      </div>
    </div>
  )
}
