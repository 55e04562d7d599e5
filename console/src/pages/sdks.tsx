/** SDKs: the list, a new SDK, and one SDK's targets, config, APIs, output repositories and builds. */
import { useEffect, useState } from 'preact/hooks'
import { useLocation } from 'preact-iso'
import { api, type List } from '../api'
import { Badge, ConfirmButton, CreatePage, Empty, Loading, Notice, Page, Panel, Pager, Pending, ProblemNotice, Time } from '../components'
import { useAction, useFetch, usePolling } from '../hooks'
import { useListQuery } from '../list-query'
import { ApiPicker } from '../pickers'
import { useCan } from '../session'
import { TARGET_LABELS, type Build, type OutputRepository, type Resource, type Sdk, type Target } from '../types'
import { BuildTable, isActive } from './builds'

const TARGETS: { value: Target; label: string }[] = [
  { value: 'typescript', label: 'TypeScript (npm package, fetch client)' },
  { value: 'php', label: 'PHP (Composer package, PSR-4)' },
]
const PAGE_SIZE = 25

export function SdkList() {
  const { page, setPage } = useListQuery()
  const sdks = useFetch<List<Sdk>>('/v1/sdks', { page, limit: PAGE_SIZE })
  const canWrite = useCan('write')
  return (
    <Page title="SDKs" lead="Client libraries generated from your APIs, delivered as pull requests to their repositories."
      actions={canWrite && <a class="button primary" href="/console/sdks/new">New SDK</a>}>
      <Panel flush>
        <ProblemNotice error={sdks.error} />
        {sdks.data === undefined ? <Loading /> : sdks.data.total === 0 ? (
          <Empty title="No SDKs yet">{canWrite && <p><a href="/console/sdks/new">Create an SDK</a> for one or more APIs.</p>}</Empty>
        ) : (
          <div class="table-wrap">
            <table class="list">
              <caption class="visually-hidden">SDKs, newest first</caption>
              <thead><tr><th scope="col">Name</th><th scope="col">Targets</th><th scope="col">APIs</th><th scope="col">Output repositories</th><th scope="col">Created</th></tr></thead>
              <tbody>
                {sdks.data.data.map((sdk) => (
                  <tr key={sdk.id}>
                    <td><a class="cell-title" href={`/console/sdks/${sdk.slug}`}>{sdk.name}</a><div class="cell-sub mono">{sdk.slug}</div></td>
                    <td>{sdk.targets.map((t) => <Badge key={t}>{TARGET_LABELS[t]}</Badge>)}</td>
                    <td>{sdk.apis.length}</td>
                    <td>{sdk.repositories.length} of {sdk.targets.length}</td>
                    <td class="nowrap"><Time at={sdk.created_at} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {sdks.data && sdks.data.total > PAGE_SIZE && <Pager page={page} limit={PAGE_SIZE} total={sdks.data.total} onPage={setPage} noun="SDKs" />}
      </Panel>
    </Page>
  )
}

interface ConfigFields {
  package_name: string
  package_version: string
  description: string
  license: string
  php_namespace: string
  php_package: string
}

/** The SDK's form fields (new and settings): name, slug, targets, APIs, config. */
function useSdkFields(sdk?: Sdk) {
  const config = (sdk?.config ?? {}) as Record<string, any>
  const [name, setName] = useState(sdk?.name ?? '')
  const [slug, setSlug] = useState(sdk?.slug ?? '')
  const [targets, setTargets] = useState<Target[]>(sdk?.targets ?? ['typescript'])
  const [apis, setApis] = useState<{ id: string; name: string }[]>(sdk?.apis.map((a) => ({ id: a.api_id, name: '' })) ?? [])
  const [fields, setFields] = useState<ConfigFields>({
    package_name: config.package_name ?? '', package_version: config.package_version ?? '', description: config.description ?? '',
    license: config.license ?? '', php_namespace: config.php?.namespace ?? '', php_package: config.php?.package_name ?? '',
  })
  const set = (field: keyof ConfigFields) => (e: Event) => setFields({ ...fields, [field]: (e.target as HTMLInputElement).value })
  const body = () => {
    const cfg: Record<string, unknown> = {}
    for (const key of ['package_name', 'package_version', 'description', 'license'] as const) if (fields[key].trim()) cfg[key] = fields[key].trim()
    const php: Record<string, string> = {}
    if (fields.php_namespace.trim()) php.namespace = fields.php_namespace.trim()
    if (fields.php_package.trim()) php.package_name = fields.php_package.trim()
    if (Object.keys(php).length) cfg.php = php
    const out: Record<string, unknown> = { name: name.trim(), targets, apis: apis.map((a) => ({ api_id: a.id })), config: cfg }
    if (slug.trim()) out.slug = slug.trim()
    return out
  }
  const input = (id: keyof ConfigFields, label: string, hint?: string) => (
    <div class="field">
      <label for={`sdk-${id}`}>{label}</label>
      <input id={`sdk-${id}`} type="text" value={fields[id]} onInput={set(id)} aria-describedby={hint ? `sdk-${id}-hint` : undefined} />
      {hint && <p class="hint" id={`sdk-${id}-hint`}>{hint}</p>}
    </div>
  )
  const form = (
    <>
      <div class="row">
        <div class="field">
          <label for="sdk-name">Name</label>
          <input id="sdk-name" type="text" required maxLength={200} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="sdk-slug">Slug {!sdk && <span class="muted">(optional)</span>}</label>
          <input id="sdk-slug" type="text" maxLength={64} pattern="[a-z0-9]+(-[a-z0-9]+)*" value={slug} onInput={(e) => setSlug((e.target as HTMLInputElement).value)} />
        </div>
      </div>
      <fieldset>
        <legend>Targets</legend>
        <div class="choices">
          {TARGETS.map((t) => (
            <label class="choice" key={t.value}>
              <input type="checkbox" checked={targets.includes(t.value)}
                onChange={(e) => setTargets((e.target as HTMLInputElement).checked ? [...targets, t.value] : targets.filter((x) => x !== t.value))} /> {t.label}
            </label>
          ))}
        </div>
      </fieldset>
      <fieldset>
        <legend>APIs</legend>
        {apis.length === 0 ? <p class="muted small">No API yet: add at least one.</p> : (
          <ul class="ordered">
            {apis.map((a) => (
              <li key={a.id}>
                <SdkApiName id={a.id} known={a.name} />
                <button type="button" class="small danger" onClick={() => setApis(apis.filter((x) => x.id !== a.id))} aria-label="Remove this API">Remove</button>
              </li>
            ))}
          </ul>
        )}
        <ApiPicker id="sdk-api-search" label="Add an API" action="Add" exclude={apis.map((a) => a.id)} onPick={(picked) => setApis([...apis, { id: picked.id, name: picked.name }])} />
      </fieldset>
      <fieldset class="stack">
        <legend>Package</legend>
        <div class="row">
          {input('package_name', 'Package name', 'npm name; default the SDK slug')}
          {input('package_version', 'Version', 'semantic version; default 0.1.0')}
        </div>
        <div class="row">
          {input('license', 'License', 'SPDX identifier')}
          {input('description', 'Description')}
        </div>
        <div class="row">
          {input('php_package', 'Composer package', 'vendor/name; default registry/<slug>')}
          {input('php_namespace', 'PHP namespace', 'default: the slug in StudlyCase')}
        </div>
      </fieldset>
    </>
  )
  return { form, body, ready: name.trim() !== '' && targets.length > 0 && apis.length > 0 }
}

function SdkApiName(props: { id: string; known: string }) {
  const found = useFetch<{ data: Resource }>(props.known ? null : `/v1/apis/${props.id}`)
  return <span>{props.known || found.data?.data.name || (found.error ? 'a deleted API' : '…')}</span>
}

export function SdkCreate() {
  const { route } = useLocation()
  const fields = useSdkFields()
  const create = useAction()
  const submit = async (event: Event) => {
    event.preventDefault()
    const answer = await create.run(() => api.post<{ data: Sdk }>('/v1/sdks', fields.body()))
    if (answer) route(`/console/sdks/${answer.data.slug}`)
  }
  return (
    <CreatePage title="New SDK" crumbs={[{ label: 'SDKs', href: '/console/sdks' }, { label: 'New' }]} lead="Choose the languages and the APIs; connect output repositories next."
      error={create.error} busy={create.busy} ready={fields.ready} submitLabel="Create SDK" cancelHref="/console/sdks" onSubmit={submit}>
      {fields.form}
    </CreatePage>
  )
}

export function SdkDetail(props: { id: string }) {
  const sdk = useFetch<{ data: Sdk }>(`/v1/sdks/${props.id}`)
  const data = sdk.data?.data
  if (!data) return <Pending what="SDK" error={sdk.error} crumbs={[{ label: 'SDKs', href: '/console/sdks' }]} />
  return <SdkPanels key={data.updated_at} sdk={data} reload={sdk.reload} />
}

function SdkPanels(props: { sdk: Sdk; reload: () => void }) {
  const { sdk } = props
  const { route } = useLocation()
  const canWrite = useCan('write')
  const fields = useSdkFields(sdk)
  const save = useAction()
  const remove = useAction()
  const [saved, setSaved] = useState(false)
  const [buildsTick, setBuildsTick] = useState(0)

  const submit = async (event: Event) => {
    event.preventDefault()
    setSaved(false)
    const answer = await save.run(() => api.patch<{ data: Sdk }>(`/v1/sdks/${sdk.id}`, fields.body()))
    if (!answer) return
    setSaved(true)
    if (answer.data.slug !== sdk.slug) route(`/console/sdks/${answer.data.slug}`, true)
    else props.reload()
  }

  return (
    <Page title={sdk.name} crumbs={[{ label: 'SDKs', href: '/console/sdks' }, { label: sdk.name }]}
      lead={<><span class="mono">{sdk.slug}</span> · {sdk.targets.map((t) => TARGET_LABELS[t]).join(', ')} · {sdk.apis.length} API{sdk.apis.length === 1 ? '' : 's'}</>}>
      {saved && <Notice kind="ok">Saved.</Notice>}
      <QueueBuild sdk={sdk} canWrite={canWrite} onQueued={() => setBuildsTick((n) => n + 1)} />
      <SdkBuilds sdkId={sdk.id} tick={buildsTick} />
      <div class="grid-2">
        <div>
          {sdk.targets.map((target) => (
            <RepositoryForm key={target} sdk={sdk} target={target} current={sdk.repositories.find((r) => r.target === target)} canWrite={canWrite} onSaved={props.reload} />
          ))}
        </div>
        <div>
          <Panel title="Settings" id="sdk-settings">
            <ProblemNotice error={save.error} />
            <form class="stack" onSubmit={submit}>
              <fieldset disabled={!canWrite || save.busy} class="stack bare">
                <legend class="visually-hidden">SDK settings</legend>
                {fields.form}
                <div class="form-actions"><button type="submit" class="primary" disabled={!fields.ready}>Save settings</button></div>
              </fieldset>
            </form>
          </Panel>
          {canWrite && (
            <Panel title="Delete" description="Deletes the SDK, its repositories and its builds (a running build is stopped).">
              <ProblemNotice error={remove.error} />
              <ConfirmButton label="Delete SDK" confirm={`Delete “${sdk.name}”`} onConfirm={() => void remove.run(async () => {
                await api.del(`/v1/sdks/${sdk.id}`)
                route('/console/sdks')
              })} />
            </Panel>
          )}
        </div>
      </div>
    </Page>
  )
}

function QueueBuild(props: { sdk: Sdk; canWrite: boolean; onQueued: () => void }) {
  const [archiveOnly, setArchiveOnly] = useState(props.sdk.repositories.length === 0)
  const [queued, setQueued] = useState<Build[] | undefined>()
  const queue = useAction()
  if (!props.canWrite) return null
  const run = async () => {
    setQueued(undefined)
    const answer = await queue.run(() => api.post<{ data: Build[] }>(`/v1/sdks/${props.sdk.id}/builds`, archiveOnly ? { archive_only: true } : {}))
    if (answer) {
      setQueued(answer.data)
      props.onQueued()
    }
  }
  return (
    <Panel title="Build" id="queue-build" description="One generator run per target: a pull request in each connected output repository, or only a downloadable archive."
      actions={<button type="button" class="primary" disabled={queue.busy} onClick={() => void run()}>Queue build</button>}>
      <label class="choice">
        <input type="checkbox" checked={archiveOnly} onChange={(e) => setArchiveOnly((e.target as HTMLInputElement).checked)} />
        Archive only: build the files as a .tar.gz and deliver nothing
      </label>
      {queued && <Notice kind="ok">Queued {queued.length} build{queued.length === 1 ? '' : 's'}: {queued.map((b) => `${b.target} #${b.number}`).join(', ')}.</Notice>}
      <ProblemNotice error={queue.error} />
    </Panel>
  )
}

/** The SDK's newest builds, refreshed every two seconds while one is queued or running. */
function SdkBuilds(props: { sdkId: string; tick: number }) {
  const builds = useFetch<List<Build>>(`/v1/sdks/${props.sdkId}/builds`, { limit: 10 })
  useEffect(() => { if (props.tick > 0) builds.reload() }, [props.tick])
  const active = (builds.data?.data ?? []).some(isActive)
  usePolling(active, 2000, builds.reload)
  return (
    <Panel title="Builds" id="sdk-builds" description={active ? 'Refreshing while builds run…' : 'The newest ten.'} flush actions={<a class="button small" href="/console/builds">All builds</a>}>
      <ProblemNotice error={builds.error} />
      {builds.data === undefined ? <Loading /> : builds.data.total === 0 ? <Empty title="No builds yet" /> : <BuildTable builds={builds.data.data} />}
    </Panel>
  )
}

function RepositoryForm(props: { sdk: Sdk; target: Target; current: OutputRepository | undefined; canWrite: boolean; onSaved: () => void }) {
  const { current } = props
  const [provider, setProvider] = useState<OutputRepository['provider']>(current?.provider ?? 'github')
  const [url, setUrl] = useState(current?.url ?? '')
  const [branch, setBranch] = useState(current?.base_branch ?? 'main')
  const [apiUrl, setApiUrl] = useState(current?.api_url ?? '')
  const [token, setToken] = useState('')
  const [removeToken, setRemoveToken] = useState(false)
  const [saved, setSaved] = useState(false)
  const save = useAction()
  const disconnect = useAction()
  const path = `/v1/sdks/${props.sdk.id}/targets/${props.target}/repository`
  const id = (field: string) => `repo-${props.target}-${field}`

  const submit = async (event: Event) => {
    event.preventDefault()
    setSaved(false)
    const body: Record<string, unknown> = { provider, url: url.trim(), base_branch: branch.trim() || 'main', api_url: apiUrl.trim() || null }
    // The token is write-only: left empty it is kept, unless removing it is asked for.
    if (token) body.token = token
    else if (removeToken) body.token = null
    if (await save.run(() => api.put(path, body))) {
      setSaved(true)
      setToken('')
      props.onSaved()
    }
  }

  return (
    <Panel title={`${TARGET_LABELS[props.target]} output repository`} id={id('panel')}
      description={current ? `Builds open pull requests against ${current.base_branch}.` : 'Not connected: builds of this target make an archive only.'}>
      {saved && <Notice kind="ok">Repository saved.</Notice>}
      <ProblemNotice error={save.error ?? disconnect.error} />
      <form class="stack" onSubmit={submit}>
        <fieldset disabled={!props.canWrite || save.busy} class="stack bare">
          <legend class="visually-hidden">{props.target} output repository</legend>
          <div class="row">
            <div class="field">
              <label for={id('provider')}>Provider</label>
              <select id={id('provider')} value={provider} onChange={(e) => setProvider((e.target as HTMLSelectElement).value as OutputRepository['provider'])}>
                <option value="github">GitHub: pull request</option>
                <option value="gitlab">GitLab: merge request</option>
                <option value="git">Plain git: push a branch</option>
              </select>
            </div>
            <div class="field">
              <label for={id('branch')}>Base branch</label>
              <input id={id('branch')} type="text" value={branch} onInput={(e) => setBranch((e.target as HTMLInputElement).value)} />
            </div>
          </div>
          <div class="field">
            <label for={id('url')}>Clone URL</label>
            <input id={id('url')} type="url" required placeholder="https://github.com/acme/petstore-sdk.git" value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
          </div>
          <div class="field">
            <label for={id('api-url')}>Provider API URL <span class="muted">(optional)</span></label>
            <input id={id('api-url')} type="url" value={apiUrl} aria-describedby={id('api-url-hint')} onInput={(e) => setApiUrl((e.target as HTMLInputElement).value)} />
            <p class="hint" id={id('api-url-hint')}>Only for GitHub Enterprise or a self-hosted GitLab with an unusual address.</p>
          </div>
          <div class="field">
            <label for={id('token')}>Token <span class="muted">(write-only)</span></label>
            <input id={id('token')} type="password" autoComplete="off" value={token} aria-describedby={id('token-hint')} onInput={(e) => setToken((e.target as HTMLInputElement).value)} />
            <p class="hint" id={id('token-hint')}>{current?.has_token ? 'A token is stored: leave empty to keep it.' : 'Pushes the branch and opens the pull request.'}</p>
            {current?.has_token && (
              <label class="choice"><input type="checkbox" checked={removeToken} onChange={(e) => setRemoveToken((e.target as HTMLInputElement).checked)} /> Remove the stored token</label>
            )}
          </div>
          <div class="form-actions">
            <button type="submit" class="primary">{current ? 'Save repository' : 'Connect repository'}</button>
            {current && props.canWrite && (
              <ConfirmButton label="Disconnect" confirm="Disconnect it" onConfirm={() => void disconnect.run(async () => { await api.del(path); props.onSaved() })} />
            )}
          </div>
        </fieldset>
      </form>
    </Panel>
  )
}
