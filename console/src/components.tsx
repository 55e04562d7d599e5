/** The building blocks every page uses: page frame, panels, notices, lists, pager, badges, times. */
import type { ComponentChildren } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { useLocation } from 'preact-iso'
import type { ApiError, ProblemItem } from './api'
import { Icon } from './icons'

let navigated = false

export interface Crumb {
  label: string
  href?: string
}

/**
 * A page: its title (also the document's), breadcrumbs, actions and body. After a navigation, focus
 * moves to the heading, so keyboard and screen-reader users start on the new page, not the old link.
 */
export function Page(props: { title: string; crumbs?: Crumb[]; lead?: ComponentChildren; actions?: ComponentChildren; tabs?: ComponentChildren; children?: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    document.title = `${props.title} · Registry console`
  }, [props.title])
  useEffect(() => {
    if (navigated) heading.current?.focus({ preventScroll: false })
    navigated = true
  }, [])
  return (
    <>
      {props.crumbs && props.crumbs.length > 0 && (
        <nav class="crumbs" aria-label="Breadcrumb">
          <ol>
            {props.crumbs.map((crumb) => <li key={crumb.label}>{crumb.href ? <a href={crumb.href}>{crumb.label}</a> : crumb.label}</li>)}
          </ol>
        </nav>
      )}
      <div class="page-head">
        <div>
          <h1 tabIndex={-1} ref={heading}>{props.title}</h1>
          {props.lead && <p class="lead">{props.lead}</p>}
        </div>
        {props.actions && <div class="actions">{props.actions}</div>}
      </div>
      {props.tabs}
      {props.children}
    </>
  )
}

/** Links between the views of one resource; the current one is marked for assistive technology. */
export function Tabs(props: { label: string; items: { href: string; label: string; hidden?: boolean }[] }) {
  const { path } = useLocation()
  return (
    <nav class="tabs" aria-label={props.label}>
      {props.items.filter((item) => !item.hidden).map((item) => (
        <a key={item.href} href={item.href} aria-current={path === item.href.split('?')[0] ? 'page' : undefined}>{item.label}</a>
      ))}
    </nav>
  )
}

export function Panel(props: { title?: ComponentChildren; description?: ComponentChildren; actions?: ComponentChildren; children?: ComponentChildren; flush?: boolean; id?: string }) {
  const headingId = props.id ? `${props.id}-title` : undefined
  return (
    <section class="panel" aria-labelledby={headingId} id={props.id}>
      {(props.title || props.actions) && (
        <header>
          <div>
            {props.title && <h2 id={headingId}>{props.title}</h2>}
            {props.description && <p>{props.description}</p>}
          </div>
          {props.actions && <div class="actions">{props.actions}</div>}
        </header>
      )}
      {props.flush ? props.children : <div class="panel-body">{props.children}</div>}
    </section>
  )
}

export function pathText(path: (string | number)[] | undefined): string {
  if (!path || path.length === 0) return '(document)'
  return path.map((segment) => String(segment)).join(' › ')
}

/** A problem+json answer as a person reads it: the detail, then each item with where it is. */
export function ProblemNotice(props: { error: ApiError | undefined; title?: string }) {
  const { error } = props
  if (!error) return null
  const items: ProblemItem[] = error.problem.errors ?? []
  return (
    <div class="notice error" role="alert">
      <strong>{props.title ?? titleOf(error)}</strong>
      <p>{error.problem.detail}</p>
      {items.length > 0 && (
        <ul>
          {items.slice(0, 50).map((item, i) => (
            <li key={i}>
              {item.path && item.path.length > 0 && <code>{pathText(item.path)}</code>} {item.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}

function titleOf(error: ApiError): string {
  switch (error.problem.code) {
    case 'forbidden': return 'Your key’s role does not allow this'
    case 'conflict': return 'Conflict'
    case 'invalid_request': return 'The request was refused'
    case 'not_found': return 'Not found'
    case 'network': return 'Network error'
    default: return error.problem.title || 'Something went wrong'
  }
}

export function Notice(props: { kind: 'ok' | 'info' | 'warn' | 'error'; children: ComponentChildren }) {
  return <div class={`notice ${props.kind}`} role={props.kind === 'error' ? 'alert' : 'status'}>{props.children}</div>
}

export function Loading(props: { label?: string }) {
  return <div class="loading" role="status"><span class="spinner" aria-hidden="true" /> {props.label ?? 'Loading…'}</div>
}

export function Empty(props: { title: string; children?: ComponentChildren }) {
  return <div class="empty"><strong>{props.title}</strong>{props.children}</div>
}

export function Badge(props: { kind?: string; children: ComponentChildren; label?: string }) {
  return <span class={`badge ${props.kind ?? ''}`} aria-label={props.label}>{props.children}</span>
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

/** A time as people read it, with the exact value on hover and for machines. */
export function Time(props: { at: string | null | undefined; fallback?: string }) {
  if (!props.at) return <span class="muted">{props.fallback ?? '—'}</span>
  const date = new Date(props.at)
  return <time dateTime={props.at} title={props.at}>{relative(date) ?? dateFormat.format(date)}</time>
}

function relative(date: Date): string | undefined {
  const seconds = (Date.now() - date.getTime()) / 1000
  if (seconds < 0 || seconds > 6 * 86400) return undefined
  if (seconds < 60) return 'just now'
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`
  const days = Math.floor(seconds / 86400)
  return `${days} day${days === 1 ? '' : 's'} ago`
}

export function bytes(size: number): string {
  if (size < 1024) return `${size} B`
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KB`
  return `${(size / 1024 / 1024).toFixed(1)} MB`
}

export function shortChecksum(checksum: string): string {
  return checksum.replace(/^sha256:/, '').slice(0, 12)
}

/** Page n of `total` items; the page lives in the URL, so back and forward move between pages. */
export function Pager(props: { page: number; limit: number; total: number; onPage: (page: number) => void; noun: string }) {
  const pages = Math.max(1, Math.ceil(props.total / props.limit))
  const first = props.total === 0 ? 0 : (props.page - 1) * props.limit + 1
  const last = Math.min(props.total, props.page * props.limit)
  return (
    <nav class="pager" aria-label={`Pages of ${props.noun}`}>
      <span aria-live="polite">{props.total === 0 ? `No ${props.noun}` : `${first.toLocaleString()}–${last.toLocaleString()} of ${props.total.toLocaleString()} ${props.noun}`}</span>
      <div class="actions">
        <button type="button" class="small" disabled={props.page <= 1} onClick={() => props.onPage(props.page - 1)}>Previous</button>
        <span>Page {props.page} of {pages.toLocaleString()}</span>
        <button type="button" class="small" disabled={props.page >= pages} onClick={() => props.onPage(props.page + 1)}>Next</button>
      </div>
    </nav>
  )
}

/** A search box; the parent keeps its value in the URL and filters on the server. */
export function SearchBox(props: { label: string; value: string; onInput: (value: string) => void; placeholder?: string }) {
  return (
    <div class="search" role="search">
      <Icon name="search" />
      <label class="visually-hidden" for="list-search">{props.label}</label>
      <input id="list-search" type="search" value={props.value} placeholder={props.placeholder ?? props.label} autoComplete="off" spellcheck={false}
        onInput={(event) => props.onInput((event.target as HTMLInputElement).value)} />
    </div>
  )
}

/** Copies a value to the clipboard and says so. */
export function CopyButton(props: { value: string; label?: string }) {
  const [copied, setCopied] = useState(false)
  return (
    <button type="button" class="small" onClick={async () => {
      try {
        await navigator.clipboard.writeText(props.value)
        setCopied(true)
        setTimeout(() => setCopied(false), 2000)
      } catch {
        setCopied(false)
      }
    }}>
      <span aria-live="polite">{copied ? 'Copied' : props.label ?? 'Copy'}</span>
    </button>
  )
}

/** A two-step destructive button: the first press asks, the second does it. */
export function ConfirmButton(props: { label: string; confirm: string; onConfirm: () => void; disabled?: boolean; class?: string }) {
  const [asking, setAsking] = useState(false)
  if (!asking) {
    return <button type="button" class={props.class ?? 'danger small'} disabled={props.disabled} onClick={() => setAsking(true)}>{props.label}</button>
  }
  return (
    <span class="actions">
      <button type="button" class="danger solid small" autoFocus onClick={() => { setAsking(false); props.onConfirm() }}>{props.confirm}</button>
      <button type="button" class="small" onClick={() => setAsking(false)}>Cancel</button>
    </span>
  )
}

/** A page whose subject is still loading, or could not be loaded. */
export function Pending(props: { what: string; error: ApiError | undefined; crumbs?: Crumb[] }) {
  const title = !props.error ? 'Loading…' : props.error.status === 404 ? `${props.what} not found` : `${props.what} could not be loaded`
  return <Page title={title} crumbs={props.crumbs}>{props.error ? <ProblemNotice error={props.error} /> : <Loading />}</Page>
}

/** The page of a form that creates something: its fields, the answer's problem, create and cancel. */
export function CreatePage(props: {
  title: string; crumbs: Crumb[]; lead: ComponentChildren; error: ApiError | undefined; busy: boolean; ready: boolean
  submitLabel: string; cancelHref: string; onSubmit: (event: Event) => void; children: ComponentChildren
}) {
  return (
    <Page title={props.title} crumbs={props.crumbs} lead={props.lead}>
      <Panel>
        <ProblemNotice error={props.error} />
        <form class="stack" onSubmit={props.onSubmit}>
          {props.children}
          <div class="form-actions">
            <button type="submit" class="primary" disabled={props.busy || !props.ready}>{props.submitLabel}</button>
            <a href={props.cancelHref}>Cancel</a>
          </div>
        </form>
      </Panel>
    </Page>
  )
}
