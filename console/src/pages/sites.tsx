/** Documentation sites: the list, a new site, and one site's settings, APIs, domains and guides. */
import { useEffect, useState } from 'preact/hooks'
import { useLocation } from 'preact-iso'
import { api, type List } from '../api'
import { Badge, ConfirmButton, CreatePage, Empty, Loading, Notice, Page, Panel, Pager, Pending, ProblemNotice, Time } from '../components'
import { useAction, useFetch } from '../hooks'
import { ExternalLink } from '../links'
import { useListQuery } from '../list-query'
import { ApiPicker } from '../pickers'
import { useCan, useSession } from '../session'
import type { Guide, Resource, Site, Visibility } from '../types'
import { VisibilityField } from './resources'

const PAGE_SIZE = 25

export function SiteList() {
  const { page, setPage } = useListQuery()
  const sites = useFetch<List<Site>>('/v1/sites', { page, limit: PAGE_SIZE })
  const canWrite = useCan('write')
  return (
    <Page title="Sites" lead="Hosted documentation: Markdown guides and API reference pages, on this registry or on your own domains."
      actions={canWrite && <a class="button primary" href="/console/sites/new">New site</a>}>
      <Panel flush>
        <ProblemNotice error={sites.error} />
        {sites.data === undefined ? <Loading /> : sites.data.total === 0 ? (
          <Empty title="No sites yet">{canWrite && <p><a href="/console/sites/new">Create a documentation site</a>.</p>}</Empty>
        ) : (
          <div class="table-wrap">
            <table class="list">
              <caption class="visually-hidden">Sites, by name</caption>
              <thead><tr><th scope="col">Name</th><th scope="col">Visibility</th><th scope="col">APIs</th><th scope="col">Domains</th><th scope="col">Updated</th></tr></thead>
              <tbody>
                {sites.data.data.map((site) => (
                  <tr key={site.id}>
                    <td><a class="cell-title" href={`/console/sites/${site.slug}`}>{site.name}</a><div class="cell-sub">{site.title ?? ''} <span class="mono">{site.slug}</span></div></td>
                    <td><Badge kind={site.visibility}>{site.visibility}</Badge></td>
                    <td>{site.api_ids.length}</td>
                    <td class="small">{site.domains.join(', ') || <span class="muted">none</span>}</td>
                    <td class="nowrap"><Time at={site.updated_at} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {sites.data && sites.data.total > PAGE_SIZE && <Pager page={page} limit={PAGE_SIZE} total={sites.data.total} onPage={setPage} noun="sites" />}
      </Panel>
    </Page>
  )
}

/** The fields of a site's form, shared by the new-site page and the settings panel. */
function useSiteFields(site?: Site) {
  const [name, setName] = useState(site?.name ?? '')
  const [slug, setSlug] = useState(site?.slug ?? '')
  const [title, setTitle] = useState(site?.title ?? '')
  const [visibility, setVisibility] = useState<Visibility>(site?.visibility ?? 'public')
  const [domains, setDomains] = useState((site?.domains ?? []).join('\n'))
  const body = () => {
    const fields: Record<string, unknown> = {
      name: name.trim(), title: title.trim() || null, visibility,
      domains: domains.split(/\s+/).map((d) => d.trim().toLowerCase()).filter(Boolean),
    }
    if (slug.trim()) fields.slug = slug.trim()
    return fields
  }
  const form = (
    <>
      <div class="row">
        <div class="field">
          <label for="site-name">Name</label>
          <input id="site-name" type="text" required maxLength={200} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="site-slug">Slug {!site && <span class="muted">(optional)</span>}</label>
          <input id="site-slug" type="text" maxLength={64} pattern="[a-z0-9]+(-[a-z0-9]+)*" required={!!site} value={slug} onInput={(e) => setSlug((e.target as HTMLInputElement).value)} />
        </div>
      </div>
      <div class="field">
        <label for="site-title">Title</label>
        <input id="site-title" type="text" maxLength={200} value={title} aria-describedby="site-title-hint" onInput={(e) => setTitle((e.target as HTMLInputElement).value)} />
        <p class="hint" id="site-title-hint">Shown on the pages; empty shows the name.</p>
      </div>
      <VisibilityField value={visibility} onChange={setVisibility} labels={{ private: 'Private: not served', public: 'Public: served to everyone' }} />
      <div class="field">
        <label for="site-domains">Domains</label>
        <textarea id="site-domains" class="short" value={domains} aria-describedby="site-domains-hint" onInput={(e) => setDomains((e.target as HTMLTextAreaElement).value)} />
        <p class="hint" id="site-domains-hint">One host name per line (docs.example.com). Point each at this registry; the site answers at its root.</p>
      </div>
    </>
  )
  return { body, form, name }
}

export function SiteCreate() {
  const { route } = useLocation()
  const fields = useSiteFields()
  const create = useAction()
  const submit = async (event: Event) => {
    event.preventDefault()
    const answer = await create.run(() => api.post<{ data: Site }>('/v1/sites', fields.body()))
    if (answer) route(`/console/sites/${answer.data.slug}`)
  }
  return (
    <CreatePage title="New site" crumbs={[{ label: 'Sites', href: '/console/sites' }, { label: 'New' }]} lead="Create the site, then attach APIs and write its guides."
      error={create.error} busy={create.busy} ready={fields.name.trim() !== ''} submitLabel="Create site" cancelHref="/console/sites" onSubmit={submit}>
      {fields.form}
    </CreatePage>
  )
}

export function SiteDetail(props: { id: string }) {
  const site = useFetch<{ data: Site }>(`/v1/sites/${props.id}`)
  const data = site.data?.data
  if (!data) return <Pending what="Site" error={site.error} crumbs={[{ label: 'Sites', href: '/console/sites' }]} />
  return <SitePanels key={data.updated_at} site={data} reload={site.reload} />
}

function SitePanels(props: { site: Site; reload: () => void }) {
  const { site } = props
  const { session } = useSession()
  const { route } = useLocation()
  const canWrite = useCan('write')
  const fields = useSiteFields(site)
  const save = useAction()
  const remove = useAction()
  const [saved, setSaved] = useState(false)
  const livePath = `/@${session.organization.slug}/sites/${site.slug}/`

  const submit = async (event: Event) => {
    event.preventDefault()
    setSaved(false)
    const answer = await save.run(() => api.patch<{ data: Site }>(`/v1/sites/${site.id}`, fields.body()))
    if (!answer) return
    setSaved(true)
    if (answer.data.slug !== site.slug) route(`/console/sites/${answer.data.slug}`, true)
    else props.reload()
  }

  return (
    <Page title={site.title ?? site.name} crumbs={[{ label: 'Sites', href: '/console/sites' }, { label: site.name }]}
      lead={<><Badge kind={site.visibility}>{site.visibility}</Badge> <span class="mono">{site.slug}</span></>}
      actions={site.visibility === 'public' && <a class="button" href={livePath}>Open the live site</a>}>
      {saved && <Notice kind="ok">Saved.</Notice>}
      <div class="grid-2">
        <div>
          <GuideList site={site} canWrite={canWrite} />
          <SiteApis site={site} canWrite={canWrite} onSaved={props.reload} />
        </div>
        <div>
          <Panel title="Settings" id="site-settings">
            <ProblemNotice error={save.error} />
            <form class="stack" onSubmit={submit}>
              <fieldset disabled={!canWrite || save.busy} class="stack bare">
                <legend class="visually-hidden">Site settings</legend>
                {fields.form}
                <div class="form-actions"><button type="submit" class="primary">Save settings</button></div>
              </fieldset>
            </form>
          </Panel>
          <Panel title="Where it is served">
            {site.visibility === 'private' ? <p class="muted">A private site is not served: make it public to publish it.</p> : (
              <ul>
                <li><a href={livePath}>{location.origin}{livePath}</a></li>
                {site.domains.map((domain) => <li key={domain}><ExternalLink href={`https://${domain}/`} /></li>)}
              </ul>
            )}
          </Panel>
          {canWrite && (
            <Panel title="Delete" description="Deletes the site and its guides; the APIs stay.">
              <ProblemNotice error={remove.error} />
              <ConfirmButton label="Delete site" confirm={`Delete “${site.name}”`} onConfirm={() => void remove.run(async () => {
                await api.del(`/v1/sites/${site.id}`)
                route('/console/sites')
              })} />
            </Panel>
          )}
        </div>
      </div>
    </Page>
  )
}

/** The APIs the site's reference section lists, in order: add by search, move, remove, save. */
function SiteApis(props: { site: Site; canWrite: boolean; onSaved: () => void }) {
  const [ids, setIds] = useState(props.site.api_ids)
  const [names, setNames] = useState<Record<string, string>>({})
  const save = useAction()
  const nameOf = (id: string) => names[id] ?? 'API'
  const move = (index: number, by: number) => {
    const next = [...ids]
    const [item] = next.splice(index, 1)
    next.splice(index + by, 0, item)
    setIds(next)
  }
  const changed = ids.join() !== props.site.api_ids.join()
  return (
    <Panel title="API reference" id="site-apis" description="The APIs this site documents, in the order its pages list them."
      actions={props.canWrite && <button type="button" class="primary small" disabled={!changed || save.busy}
        onClick={() => void save.run(async () => { await api.patch(`/v1/sites/${props.site.id}`, { api_ids: ids }); props.onSaved() })}>Save APIs</button>}>
      <ProblemNotice error={save.error} />
      {ids.length === 0 ? <p class="muted">No API yet.</p> : (
        <ol class="ordered">
          {ids.map((id, index) => (
            <li key={id}>
              <span><span class="position">{index + 1}.</span> <ApiName id={id} onName={(name) => names[id] === undefined && setNames((known) => ({ ...known, [id]: name }))} /></span>
              {props.canWrite && (
                <span class="actions">
                  <button type="button" class="small" disabled={index === 0} onClick={() => move(index, -1)} aria-label={`Move ${nameOf(id)} up`}>↑</button>
                  <button type="button" class="small" disabled={index === ids.length - 1} onClick={() => move(index, 1)} aria-label={`Move ${nameOf(id)} down`}>↓</button>
                  <button type="button" class="small danger" onClick={() => setIds(ids.filter((x) => x !== id))} aria-label={`Remove ${nameOf(id)}`}>Remove</button>
                </span>
              )}
            </li>
          ))}
        </ol>
      )}
      {changed && <p class="small muted">Unsaved changes.</p>}
      {props.canWrite && (
        <ApiPicker id="site-api-search" label="Add an API" action="Add" exclude={ids}
          onPick={(picked) => { setNames({ ...names, [picked.id]: picked.name }); setIds([...ids, picked.id]) }} />
      )}
    </Panel>
  )
}

/** An attached API's name, read by id (an organization may have thousands of APIs). */
function ApiName(props: { id: string; onName: (name: string) => void }) {
  const found = useFetch<{ data: Resource }>(`/v1/apis/${props.id}`)
  const name = found.data?.data.name
  useEffect(() => { if (name !== undefined) props.onName(name) }, [name])
  return <a href={`/console/apis/${props.id}`}>{name ?? (found.error ? 'a deleted API' : '…')}</a>
}

function GuideList(props: { site: Site; canWrite: boolean }) {
  const guides = useFetch<List<Guide>>(`/v1/sites/${props.site.id}/guides`, { limit: 100 })
  const reorder = useAction()
  const list = guides.data?.data ?? []
  /** Swaps two neighbours' positions (positions are renumbered 0, 1, 2… as they are saved). */
  const move = (index: number, by: number) => void reorder.run(async () => {
    const next = [...list]
    const [item] = next.splice(index, 1)
    next.splice(index + by, 0, item)
    for (const [position, guide] of next.entries()) {
      if (guide.position !== position) {
        await api.put(`/v1/sites/${props.site.id}/guides/${guide.slug}`, { title: guide.title, markdown: guide.markdown, position })
      }
    }
    guides.reload()
  })
  return (
    <Panel title="Guides" id="guides" description="Markdown pages, in this order in the site’s navigation."
      actions={props.canWrite && <a class="button small primary" href={`/console/sites/${props.site.slug}/guides/new`}>New guide</a>}>
      <ProblemNotice error={guides.error ?? reorder.error} />
      {guides.data === undefined ? <Loading /> : list.length === 0 ? <p class="muted">No guide yet.</p> : (
        <ol class="ordered">
          {list.map((guide, index) => (
            <li key={guide.slug}>
              <span><span class="position">{index + 1}.</span> <a href={`/console/sites/${props.site.slug}/guides/${guide.slug}`}>{guide.title}</a> <span class="muted mono small">{guide.slug}</span></span>
              {props.canWrite && (
                <span class="actions">
                  <button type="button" class="small" disabled={index === 0 || reorder.busy} onClick={() => move(index, -1)} aria-label={`Move ${guide.title} up`}>↑</button>
                  <button type="button" class="small" disabled={index === list.length - 1 || reorder.busy} onClick={() => move(index, 1)} aria-label={`Move ${guide.title} down`}>↓</button>
                </span>
              )}
            </li>
          ))}
        </ol>
      )}
    </Panel>
  )
}
