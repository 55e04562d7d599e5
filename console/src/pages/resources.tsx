/** The lists of APIs, schemas and rulesets, and the form that creates one. */
import { useEffect, useRef, useState } from 'preact/hooks'
import { useLocation } from 'preact-iso'
import { api, type List } from '../api'
import { Badge, CreatePage, Empty, Loading, Page, Panel, Pager, ProblemNotice, SearchBox, Time } from '../components'
import { useAction, useDebounced, useFetch } from '../hooks'
import { apiPath, KINDS, resourcePath, type KindInfo } from '../kinds'
import { useListQuery } from '../list-query'
import { useCan } from '../session'
import type { BlockingSeverity, Resource, Visibility } from '../types'

const PAGE_SIZE = 25

/** A search box whose text is in the URL: typing replaces the address, back and forward restore it. */
export function useSearchText(q: string, setSearch: (text: string) => void, delayMs = 60) {
  const [text, setText] = useState(q)
  const pushed = useRef(q)
  const settled = useDebounced(text, delayMs)
  useEffect(() => {
    if (q !== pushed.current) {
      pushed.current = q
      setText(q)
    }
  }, [q])
  useEffect(() => {
    if (settled !== pushed.current) {
      pushed.current = settled
      setSearch(settled)
    }
  }, [settled])
  return [text, setText] as const
}

export function versionLabel(resource: Resource): string {
  const current = resource.current
  if (!current) return 'no document yet'
  const detail = [current.title, current.version ? `v${current.version}` : null].filter(Boolean).join(' ')
  return detail ? `#${current.number} · ${detail}` : `#${current.number}`
}

export function ResourceList(props: { plural: KindInfo['plural'] }) {
  const info = KINDS[props.plural]
  const { page, q, sort, setPage, setSearch, setSort } = useListQuery()
  const [text, setText] = useSearchText(q, setSearch)
  const list = useFetch<List<Resource>>(apiPath(info), { page, limit: PAGE_SIZE, q: q || undefined, sort: sort || undefined })
  const canWrite = useCan('write')
  const descending = sort === '-name'
  const rows = list.data?.data ?? []

  return (
    <Page title={info.title} lead={info.lead}
      actions={canWrite && <a class="button primary" href={`/console/${info.plural}/new`}>New {info.singular}</a>}>
      <Panel flush>
        <div class="toolbar">
          <SearchBox label={`Search ${info.noun} by name`} value={text} onInput={setText} />
          <span class="muted small" aria-live="polite">{list.loading ? 'Searching…' : list.data ? `${list.data.total.toLocaleString()} ${list.data.total === 1 ? info.singular : info.noun}` : ''}</span>
        </div>
        <ProblemNotice error={list.error} />
        {list.data === undefined ? <Loading /> : rows.length === 0 ? (
          <Empty title={q ? `No ${info.noun} match “${q}”` : `No ${info.noun} yet`}>
            {!q && canWrite && <p><a href={`/console/${info.plural}/new`}>Create the first {info.singular}</a>.</p>}
          </Empty>
        ) : (
          <div class="table-wrap">
            <table class="list" data-testid="resource-list">
              <caption class="visually-hidden">{info.title}, sorted by name {descending ? 'Z to A' : 'A to Z'}</caption>
              <thead>
                <tr>
                  <th scope="col" aria-sort={descending ? 'descending' : 'ascending'}>
                    <button type="button" class="link" onClick={() => setSort(descending ? '' : '-name')}>
                      Name {descending ? '↓' : '↑'}<span class="visually-hidden">, sort {descending ? 'A to Z' : 'Z to A'}</span>
                    </button>
                  </th>
                  <th scope="col">Visibility</th>
                  <th scope="col">Current version</th>
                  {info.kind !== 'schema' && <th scope="col">Lint threshold</th>}
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((resource) => (
                  <tr key={resource.id}>
                    <td>
                      <a class="cell-title" href={resourcePath(info, resource.slug)}>{resource.name}</a>
                      <div class="cell-sub mono">{resource.slug}</div>
                      {resource.description && <div class="cell-sub">{truncate(resource.description, 140)}</div>}
                    </td>
                    <td><Badge kind={resource.visibility}>{resource.visibility}</Badge></td>
                    <td class="nowrap">{versionLabel(resource)}</td>
                    {info.kind !== 'schema' && <td>{info.kind === 'api' ? resource.effective_blocking_severity : resource.blocking_severity}</td>}
                    <td class="nowrap"><Time at={resource.updated_at} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {list.data && list.data.total > 0 && <Pager page={page} limit={PAGE_SIZE} total={list.data.total} onPage={setPage} noun={info.noun} />}
      </Panel>
    </Page>
  )
}

function truncate(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text
}

export function ResourceCreate(props: { plural: KindInfo['plural'] }) {
  const info = KINDS[props.plural]
  const { route } = useLocation()
  const [name, setName] = useState('')
  const [slug, setSlug] = useState('')
  const [visibility, setVisibility] = useState<Visibility>('private')
  const [description, setDescription] = useState('')
  const [severity, setSeverity] = useState<BlockingSeverity | ''>('')
  const create = useAction()

  const submit = async (event: Event) => {
    event.preventDefault()
    const body: Record<string, unknown> = { name: name.trim(), visibility }
    if (slug.trim()) body.slug = slug.trim()
    if (description.trim()) body.description = description
    if (severity) body.blocking_severity = severity
    const answer = await create.run(() => api.post<{ data: Resource }>(apiPath(info), body))
    if (answer) route(resourcePath(info, answer.data.slug, info.kind === 'ruleset' ? '/editor' : '/upload'))
  }

  return (
    <CreatePage title={`New ${info.singular}`} crumbs={[{ label: info.title, href: `/console/${info.plural}` }, { label: 'New' }]}
      lead={info.kind === 'ruleset' ? 'A new ruleset starts as one that extends spectral:oas; edit it next.' : `Create the ${info.singular}, then upload its first document.`}
      error={create.error} busy={create.busy} ready={name.trim() !== ''} submitLabel={`Create ${info.singular}`} cancelHref={`/console/${info.plural}`} onSubmit={submit}>
      <div class="row">
        <div class="field">
          <label for="name">Name</label>
          <input id="name" type="text" required maxLength={200} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="slug">Slug <span class="muted">(optional)</span></label>
          <input id="slug" type="text" maxLength={64} pattern="[a-z0-9]+(-[a-z0-9]+)*" value={slug} aria-describedby="slug-hint"
            onInput={(e) => setSlug((e.target as HTMLInputElement).value)} />
          <p class="hint" id="slug-hint">Lowercase letters, digits and dashes; derived from the name when empty.</p>
        </div>
      </div>
      <div class="field">
        <label for="description">Description <span class="muted">(optional)</span></label>
        <textarea id="description" maxLength={10000} value={description} onInput={(e) => setDescription((e.target as HTMLTextAreaElement).value)} />
      </div>
      <div class="row">
        <VisibilityField value={visibility} onChange={setVisibility} />
        {info.kind !== 'schema' && (
          <SeverityField id="blocking-severity" value={severity} onChange={setSeverity}
            emptyLabel={info.kind === 'api' ? 'Inherit the ruleset’s' : 'error (default)'}
            hint={info.kind === 'api' ? 'Findings at or above this severity block a publish.' : 'The default threshold of the APIs that use this ruleset.'} />
        )}
      </div>
    </CreatePage>
  )
}

const VISIBILITY_LABELS: Record<Visibility, string> = {
  private: 'Private: keys of this organization only',
  public: 'Public: listed on the public registry',
}

export function VisibilityField(props: { value: Visibility; onChange: (value: Visibility) => void; labels?: Record<Visibility, string> }) {
  const labels = props.labels ?? VISIBILITY_LABELS
  return (
    <fieldset>
      <legend>Visibility</legend>
      <div class="choices">
        {(['private', 'public'] as const).map((value) => (
          <label class="choice" key={value}>
            <input type="radio" name="visibility" value={value} checked={props.value === value} onChange={() => props.onChange(value)} />
            {labels[value]}
          </label>
        ))}
      </div>
    </fieldset>
  )
}

export function SeverityField<T extends string>(props: { id: string; value: T; onChange: (value: T) => void; emptyLabel?: string; hint?: string; label?: string }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label ?? 'Blocking severity'}</label>
      <select id={props.id} value={props.value} aria-describedby={props.hint ? `${props.id}-hint` : undefined}
        onChange={(e) => props.onChange((e.target as HTMLSelectElement).value as T)}>
        {props.emptyLabel !== undefined && <option value="">{props.emptyLabel}</option>}
        <option value="off">off: nothing blocks</option>
        <option value="error">error</option>
        <option value="warn">warn (and error)</option>
        <option value="info">info (warn and error too)</option>
      </select>
      {props.hint && <p class="hint" id={`${props.id}-hint`}>{props.hint}</p>}
    </div>
  )
}
