/** One API, schema or ruleset: its settings, versions, documents, reference and comparison. */
import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { useLocation } from 'preact-iso'
import { api, withQuery, type List } from '../api'
import {
  Badge, bytes, ConfirmButton, Empty, Loading, Notice, Page, Panel, Pager, Pending, ProblemNotice, shortChecksum, Tabs, Time,
} from '../components'
import { useAction, useFetch } from '../hooks'
import { apiPath, KINDS, resourcePath, type KindInfo } from '../kinds'
import { useListQuery } from '../list-query'
import { useCan, useSession } from '../session'
import type { BlockingSeverity, Resource, Version, Visibility } from '../types'
import { SeverityField, versionLabel, VisibilityField } from './resources'

interface FrameProps {
  plural: KindInfo['plural']
  id: string
}

/**
 * The header and tabs every view of a resource shares; the view gets the resource and a way to
 * reload it (after a restore or an upload, its current version changed).
 */
export function ResourceFrame(props: FrameProps & { title: string; children: (resource: Resource, reload: () => void) => ComponentChildren }) {
  const info = KINDS[props.plural]
  const resource = useFetch<{ data: Resource }>(apiPath(info, props.id))
  const base = resourcePath(info, props.id)
  const data = resource.data?.data
  if (!data) return <Pending what={info.singular[0].toUpperCase() + info.singular.slice(1)} error={resource.error} crumbs={[{ label: info.title, href: `/console/${info.plural}` }]} />
  return (
    <Page
      title={props.title === 'Settings' ? data.name : `${data.name}: ${props.title}`}
      crumbs={[{ label: info.title, href: `/console/${info.plural}` }, { label: data.name, href: base }, ...(props.title === 'Settings' ? [] : [{ label: props.title }])]}
      lead={<><Badge kind={data.visibility}>{data.visibility}</Badge> <span class="mono">{data.slug}</span> · {versionLabel(data)}</>}
      tabs={
        <Tabs label={`${info.singular} views`} items={[
          { href: base, label: 'Settings' },
          { href: `${base}/versions`, label: 'Versions' },
          { href: `${base}/upload`, label: 'Upload' },
          { href: `${base}/editor`, label: 'Editor', hidden: info.kind !== 'ruleset' },
          { href: `${base}/document`, label: 'Document' },
          { href: `${base}/reference`, label: 'Reference', hidden: info.kind !== 'api' },
          { href: `${base}/diff`, label: 'Compare', hidden: info.kind === 'ruleset' },
          { href: `${base}/repository`, label: 'Repository', hidden: info.kind !== 'api' },
        ]} />
      }>
      {props.children(data, resource.reload)}
    </Page>
  )
}

// ---------------------------------------------------------------- settings

export function ResourceSettings(props: FrameProps) {
  return <ResourceFrame {...props} title="Settings">{(resource, reload) => <SettingsForm info={KINDS[props.plural]} resource={resource} reload={reload} />}</ResourceFrame>
}

function SettingsForm(props: { info: KindInfo; resource: Resource; reload: () => void }) {
  const { info, resource } = props
  const { session } = useSession()
  const { route } = useLocation()
  const canWrite = useCan('write')
  const [name, setName] = useState(resource.name)
  const [slug, setSlug] = useState(resource.slug)
  const [visibility, setVisibility] = useState<Visibility>(resource.visibility)
  const [description, setDescription] = useState(resource.description ?? '')
  const [logoUrl, setLogoUrl] = useState(resource.logo_url ?? '')
  const [rulesetId, setRulesetId] = useState(resource.ruleset_id ?? '')
  const [severity, setSeverity] = useState<BlockingSeverity | ''>(resource.blocking_severity ?? '')
  const [saved, setSaved] = useState(false)
  const rulesets = useFetch<List<Resource>>(info.kind === 'api' ? '/v1/rulesets' : null, { limit: 100 })
  const save = useAction()
  const remove = useAction()

  const changes = (): Record<string, unknown> => {
    const body: Record<string, unknown> = {}
    if (name.trim() !== resource.name) body.name = name.trim()
    if (slug.trim() !== resource.slug) body.slug = slug.trim()
    if (visibility !== resource.visibility) body.visibility = visibility
    // An emptied field is sent as null: it clears the value.
    if ((description || null) !== resource.description) body.description = description || null
    if (info.kind === 'api') {
      if ((logoUrl.trim() || null) !== (resource.logo_url ?? null)) body.logo_url = logoUrl.trim() || null
      if ((rulesetId || null) !== (resource.ruleset_id ?? null)) body.ruleset_id = rulesetId || null
      if ((severity || null) !== (resource.blocking_severity ?? null)) body.blocking_severity = severity || null
    }
    if (info.kind === 'ruleset' && severity && severity !== resource.blocking_severity) body.blocking_severity = severity
    return body
  }

  const submit = async (event: Event) => {
    event.preventDefault()
    setSaved(false)
    const body = changes()
    if (Object.keys(body).length === 0) return setSaved(true)
    const answer = await save.run(() => api.patch<{ data: Resource }>(apiPath(info, resource.id), body))
    if (!answer) return
    setSaved(true)
    // The console's addresses hold the slug: a new slug is a new address.
    if (answer.data.slug !== resource.slug) route(resourcePath(info, answer.data.slug), true)
    else props.reload()
  }

  const publicUrl = `/@${session.organization.slug}/${info.plural}/${resource.slug}`
  return (
    <div class="grid-2">
      <Panel title="Settings" id="settings">
        {!canWrite && <Notice kind="info">Your key can only read: the settings are shown, not editable.</Notice>}
        {saved && <Notice kind="ok">Saved.</Notice>}
        <ProblemNotice error={save.error} />
        <form class="stack" onSubmit={submit}>
          <fieldset disabled={!canWrite || save.busy} class="stack bare">
            <legend class="visually-hidden">{info.singular} settings</legend>
            <div class="field">
              <label for="name">Name</label>
              <input id="name" type="text" required maxLength={200} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
            </div>
            <div class="field">
              <label for="slug">Slug</label>
              <input id="slug" type="text" required maxLength={64} pattern="[a-z0-9]+(-[a-z0-9]+)*" value={slug} aria-describedby="slug-hint" onInput={(e) => setSlug((e.target as HTMLInputElement).value)} />
              <p class="hint" id="slug-hint">Used in registry URLs such as <code>{publicUrl}</code>.</p>
            </div>
            <div class="field">
              <label for="description">Description</label>
              <textarea id="description" maxLength={10000} value={description} aria-describedby="description-hint" onInput={(e) => setDescription((e.target as HTMLTextAreaElement).value)} />
              <p class="hint" id="description-hint">Empty clears it.</p>
            </div>
            <VisibilityField value={visibility} onChange={setVisibility} />
            {info.kind === 'api' && (
              <>
                <div class="field">
                  <label for="logo-url">Logo URL</label>
                  <input id="logo-url" type="url" maxLength={2048} value={logoUrl} aria-describedby="logo-hint" onInput={(e) => setLogoUrl((e.target as HTMLInputElement).value)} />
                  <p class="hint" id="logo-hint">Empty clears it.</p>
                </div>
                <div class="field">
                  <label for="ruleset">Ruleset</label>
                  <select id="ruleset" value={rulesetId} onChange={(e) => setRulesetId((e.target as HTMLSelectElement).value)}>
                    <option value="">None: uploads are not linted</option>
                    {rulesets.data?.data.map((ruleset) => <option key={ruleset.id} value={ruleset.id}>{ruleset.name}</option>)}
                  </select>
                </div>
                <SeverityField id="blocking-severity" value={severity} onChange={setSeverity} emptyLabel="Inherit the ruleset’s default"
                  hint={`Effective now: ${resource.effective_blocking_severity}.`} />
              </>
            )}
            {info.kind === 'ruleset' && (
              <SeverityField id="blocking-severity" value={severity} onChange={setSeverity} hint="The default threshold of the APIs that use this ruleset." />
            )}
            <div class="form-actions"><button type="submit" class="primary">Save changes</button></div>
          </fieldset>
        </form>
      </Panel>
      <div>
        <Panel title="About">
          <dl class="facts">
            <dt>ID</dt><dd class="mono">{resource.id}</dd>
            <dt>Current version</dt><dd>{resource.current ? <a href={resourcePath(info, resource.slug, '/versions')}>{versionLabel(resource)}</a> : 'none yet'}</dd>
            {resource.current && <><dt>Checksum</dt><dd class="mono" title={resource.current.checksum}>{shortChecksum(resource.current.checksum)}</dd></>}
            {info.kind === 'api' && <><dt>Lint threshold</dt><dd>{resource.effective_blocking_severity}</dd></>}
            <dt>Created</dt><dd><Time at={resource.created_at} /></dd>
            <dt>Updated</dt><dd><Time at={resource.updated_at} /></dd>
            {resource.visibility === 'public' && <><dt>Public</dt><dd><a href={publicUrl}>{publicUrl}</a></dd></>}
          </dl>
        </Panel>
        {canWrite && (
          <Panel title="Delete" description={`Deletes the ${info.singular} and every version of it.`}>
            <ProblemNotice error={remove.error} />
            <ConfirmButton label={`Delete ${info.singular}`} confirm={`Delete “${resource.name}”`} disabled={remove.busy}
              onConfirm={() => void remove.run(async () => {
                await api.del(apiPath(info, resource.id))
                route(`/console/${info.plural}`)
              })} />
          </Panel>
        )}
      </div>
    </div>
  )
}

// ---------------------------------------------------------------- versions

const VERSIONS_PAGE = 20

export function Versions(props: FrameProps) {
  const info = KINDS[props.plural]
  return (
    <ResourceFrame {...props} title="Versions">
      {(resource, reload) => <VersionTimeline info={info} resource={resource} reloadResource={reload} />}
    </ResourceFrame>
  )
}

function VersionTimeline(props: { info: KindInfo; resource: Resource; reloadResource: () => void }) {
  const { info, resource } = props
  const { page, setPage } = useListQuery()
  const versions = useFetch<List<Version>>(apiPath(info, resource.id, '/versions'), { page, limit: VERSIONS_PAGE })
  const canWrite = useCan('write')
  const restore = useAction()
  const [restored, setRestored] = useState<{ from: number; to: Version } | undefined>()
  const numberOf = new Map(versions.data?.data.map((v) => [v.id, v.number]))
  const base = resourcePath(info, resource.slug)

  const restoreVersion = async (version: Version) => {
    const answer = await restore.run(() => api.post<{ data: Version }>(apiPath(info, resource.id, `/versions/${version.id}/restore`)))
    if (answer) {
      setRestored({ from: version.number, to: answer.data })
      props.reloadResource()
      versions.reload()
    }
  }

  return (
    <Panel title="Versions" description="Newest first. Restoring makes an older version current again as a new version." flush>
      {(restored || versions.error || restore.error || versions.data?.total === 0) && (
        <div class="panel-body">
          {restored && <Notice kind="ok">Version #{restored.from} is current again, as version #{restored.to.number}.</Notice>}
          <ProblemNotice error={versions.error ?? restore.error} />
          {versions.data?.total === 0 && <Empty title="No versions yet"><p><a href={`${base}/upload`}>Upload the first document</a>.</p></Empty>}
        </div>
      )}
      {versions.data === undefined ? <Loading /> : (
        <ol class="timeline" data-testid="versions">
          {versions.data.data.map((version) => {
            const current = resource.current?.id === version.id
            return (
              <li key={version.id}>
                <div class="number">#{version.number}</div>
                <div>
                  <div class="title">
                    {version.title ? `${version.title}${version.version ? ` ${version.version}` : ''}` : `Version ${version.number}`}
                    {' '}{current && <Badge kind="current">current</Badge>}
                  </div>
                  <div class="meta">
                    <Time at={version.created_at} />
                    <span><Badge>{version.source}</Badge>{version.restored_from && <> of #{numberOf.get(version.restored_from) ?? version.restored_from.slice(-6)}</>}</span>
                    <span class="mono" title={version.checksum}>{shortChecksum(version.checksum)}</span>
                    <span>{bytes(version.size)} {version.format.toUpperCase()}</span>
                    {version.openapi && <span>OpenAPI {version.openapi}</span>}
                    {version.lint && <span>lint: {version.lint.counts.error} errors, {version.lint.counts.warn} warnings</span>}
                  </div>
                </div>
                <div class="actions">
                  <a class="button small" href={withQuery(`${base}/document`, { version: version.id })}>Document</a>
                  {info.kind === 'api' && <a class="button small" href={withQuery(`${base}/reference`, { version: version.id })}>Reference</a>}
                  {info.kind !== 'ruleset' && version.number > 1 && (
                    <a class="button small" href={withQuery(`${base}/diff`, { from: version.number - 1, to: version.number })} aria-label={`Changes in version ${version.number}`}>Changes</a>
                  )}
                  {canWrite && !current && (
                    <button type="button" class="small" disabled={restore.busy} onClick={() => void restoreVersion(version)}
                      aria-label={`Restore version ${version.number}`}>Restore</button>
                  )}
                </div>
              </li>
            )
          })}
        </ol>
      )}
      {versions.data && versions.data.total > VERSIONS_PAGE && <Pager page={page} limit={VERSIONS_PAGE} total={versions.data.total} onPage={setPage} noun="versions" />}
    </Panel>
  )
}

// ---------------------------------------------------------------- one version's document and reference

/** Picks a version (the newest 100); the choice is in the URL (`?version=`), the current one by default. */
function VersionPicker(props: { info: KindInfo; resource: Resource; value: string; onChange: (value: string) => void; label?: string; id?: string; byNumber?: boolean }) {
  const versions = useFetch<List<Version>>(apiPath(props.info, props.resource.id, '/versions'), { limit: 100 })
  const id = props.id ?? 'version'
  return (
    <div class="field">
      <label for={id}>{props.label ?? 'Version'}</label>
      <select id={id} value={props.value} onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}>
        {(versions.data?.data ?? (props.resource.current ? [props.resource.current] : [])).map((v) => (
          <option key={v.id} value={props.byNumber ? String(v.number) : v.id}>#{v.number}{v.id === props.resource.current?.id ? ' (current)' : ''}{v.title ? ` · ${v.title} ${v.version ?? ''}` : ''} · {new Date(v.created_at).toLocaleString()}</option>
        ))}
      </select>
    </div>
  )
}

function useVersionParam(resource: Resource) {
  const { path, query, route } = useLocation()
  const version = query.version ?? resource.current?.id ?? ''
  const set = (next: Record<string, string | undefined>) => route(withQuery(path, { ...query, ...next }), true)
  return { version, query, set }
}

export function DocumentView(props: FrameProps) {
  const info = KINDS[props.plural]
  return <ResourceFrame {...props} title="Document">{(resource) => <DocumentPanel info={info} resource={resource} />}</ResourceFrame>
}

function DocumentPanel(props: { info: KindInfo; resource: Resource }) {
  const { info, resource } = props
  const { version, query, set } = useVersionParam(resource)
  const format = query.format === 'yaml' ? 'yaml' : 'json'
  const [text, setText] = useState<string | undefined>()
  const load = useAction()
  const documentUrl = apiPath(info, resource.id, `/versions/${version}/document`)
  useEffect(() => {
    if (!version) return
    setText(undefined)
    void load.run(async () => {
      const body = await api.text(documentUrl, { format }, format === 'yaml' ? 'application/yaml' : 'application/json')
      setText(format === 'json' ? prettyJson(body) : body)
    })
  }, [version, format])

  if (!resource.current) return <Empty title="No document yet"><p><a href={resourcePath(info, resource.slug, '/upload')}>Upload one</a>.</p></Empty>
  return (
    <Panel flush>
      <div class="toolbar">
        <div class="row">
          <VersionPicker info={info} resource={resource} value={version} onChange={(id) => set({ version: id })} />
          <fieldset>
            <legend>Format</legend>
            <div class="choices">
              {(['json', 'yaml'] as const).map((value) => (
                <label class="choice" key={value}>
                  <input type="radio" name="format" checked={format === value} onChange={() => set({ format: value === 'json' ? undefined : value })} /> {value.toUpperCase()}
                </label>
              ))}
            </div>
          </fieldset>
        </div>
        <a class="button small" href={withQuery(documentUrl, { format })} download="">Download</a>
      </div>
      <div class="panel-body">
        <ProblemNotice error={load.error} />
        {text === undefined ? <Loading /> : <pre class="document" tabIndex={0} role="region" aria-label={`Document in ${format.toUpperCase()}`}>{text}</pre>}
      </div>
    </Panel>
  )
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}

export function Reference(props: FrameProps) {
  const info = KINDS[props.plural]
  return <ResourceFrame {...props} title="Reference">{(resource) => <ReferencePanel info={info} resource={resource} />}</ResourceFrame>
}

/** One section of a large document's reference (GET …/versions/{version}/reference-parts). */
interface ReferencePart { slug: string; name: string; piece: { index: number; of: number } | null; operations: number }

const partLabel = (part: ReferencePart) => `${part.name}${part.piece ? ` (${part.piece.index} of ${part.piece.of})` : ''} · ${part.operations} operation${part.operations === 1 ? '' : 's'}`

function ReferencePanel(props: { info: KindInfo; resource: Resource }) {
  const { info, resource } = props
  const { version, query, set } = useVersionParam(resource)
  // A large document is shown a section at a time, as documentation sites show it (docs/sites.md).
  const parts = useFetch<{ data: ReferencePart[] }>(resource.current && version ? apiPath(info, resource.id, `/versions/${version}/reference-parts`) : null)
  if (!resource.current) return <Empty title="No document yet"><p><a href={resourcePath(info, resource.slug, '/upload')}>Upload one</a>.</p></Empty>
  const list = parts.data?.data
  const part = list && list.length > 0 ? (list.find((p) => p.slug === query.part) ?? list[0]) : undefined
  const frame = `/console/_reference/apis/${resource.id}/versions/${version}${part ? `?part=${encodeURIComponent(part.slug)}` : ''}`
  return (
    <>
      <div class="row">
        <VersionPicker info={info} resource={resource} value={version} onChange={(id) => set({ version: id, part: undefined })} />
        {part && list && (
          <div class="field">
            <label for="reference-part">Section</label>
            <select id="reference-part" value={part.slug} onChange={(e) => set({ part: (e.target as HTMLSelectElement).value })}>
              {list.map((p) => <option key={p.slug} value={p.slug}>{partLabel(p)}</option>)}
            </select>
          </div>
        )}
      </div>
      <p class="muted small">The reference as documentation sites render it (Scalar), from this version’s document{part ? `: a large document, shown one of its ${list?.length} sections at a time` : ''}.</p>
      {parts.error && <p class="muted small">The sections could not be listed ({parts.error.message}); the whole document is shown.</p>}
      {(list !== undefined || parts.error) && <iframe class="reference-frame" title={`API reference of ${resource.name}`} src={frame} />}
    </>
  )
}

// ---------------------------------------------------------------- compare

export function Compare(props: FrameProps) {
  const info = KINDS[props.plural]
  return <ResourceFrame {...props} title="Compare">{(resource) => <ComparePanel info={info} resource={resource} />}</ResourceFrame>
}

interface Change {
  kind: 'added' | 'removed' | 'changed'
  pointer: string
  operation: { method: string; path: string } | null
  component: string | null
  classification: 'breaking' | 'non-breaking' | 'annotation'
  check: string
  message: string
}

interface Diff {
  data: { from: Version; to: Version; summary: { breaking: number; non_breaking: number; annotation: number }; changes: Change[] }
  total: number
}

const CHANGES_PAGE = 50
const CLASSES = [
  { value: '', label: 'All changes' },
  { value: 'breaking', label: 'Breaking' },
  { value: 'non-breaking', label: 'Non-breaking' },
  { value: 'annotation', label: 'Annotations' },
] as const

/** What changed between two versions (the registry's diff), breaking changes first and marked. */
function ComparePanel(props: { info: KindInfo; resource: Resource }) {
  const { info, resource } = props
  const { path, query, route } = useLocation()
  const current = resource.current?.number ?? 0
  const to = Number(query.to) || current
  const from = Number(query.from) || to - 1
  const page = Math.max(1, Number(query.page) || 1)
  const set = (next: Record<string, string | number | undefined>) => route(withQuery(path, { ...query, page: undefined, ...next }), true)
  const diff = useFetch<Diff>(from >= 1 && to >= 1 ? apiPath(info, resource.id, '/diff') : null,
    { from, to, classification: query.class || undefined, page, limit: CHANGES_PAGE })

  if (current < 2) return <Empty title="Nothing to compare yet"><p>Comparing needs two versions; this {info.singular} has {current === 0 ? 'none' : 'one'}.</p></Empty>
  const summary = diff.data?.data.summary
  return (
    <Panel flush>
      <div class="toolbar">
        <div class="row">
          <VersionPicker info={info} resource={resource} value={String(from)} onChange={(n) => set({ from: n })} label="From" id="diff-from" byNumber />
          <VersionPicker info={info} resource={resource} value={String(to)} onChange={(n) => set({ to: n })} label="To" id="diff-to" byNumber />
          <div class="field">
            <label for="diff-class">Show</label>
            <select id="diff-class" value={query.class ?? ''} onChange={(e) => set({ class: (e.target as HTMLSelectElement).value || undefined })}>
              {CLASSES.map((c) => <option key={c.value} value={c.value}>{c.label}</option>)}
            </select>
          </div>
        </div>
      </div>
      <div class="panel-body">
        <ProblemNotice error={diff.error} />
        {summary && (
          <p role="status" class="summary">
            From #{from} to #{to}: <Badge kind={summary.breaking > 0 ? 'blocks' : 'ok'}>{summary.breaking} breaking</Badge>{' '}
            <Badge kind="info">{summary.non_breaking} non-breaking</Badge>{' '}<Badge>{summary.annotation} annotation{summary.annotation === 1 ? '' : 's'}</Badge>
          </p>
        )}
        {diff.data === undefined && !diff.error && <Loading label="Comparing…" />}
        {diff.data && diff.data.total === 0 && <Empty title={query.class ? 'No change of this kind' : 'The two versions are the same'} />}
      </div>
      {diff.data && diff.data.total > 0 && (
        <div class="table-wrap">
          <table class="list" data-testid="changes">
            <caption class="visually-hidden">Changes from version {from} to version {to}, breaking first</caption>
            <thead><tr><th scope="col">Class</th><th scope="col">Where</th><th scope="col">Change</th></tr></thead>
            <tbody>
              {diff.data.data.changes.map((change, i) => (
                <tr key={i}>
                  <td><Badge kind={change.classification === 'breaking' ? 'blocks' : change.classification === 'non-breaking' ? 'info' : ''}>{change.classification}</Badge></td>
                  <td>
                    {change.operation ? <div class="mono small">{change.operation.method.toUpperCase()} {change.operation.path}</div>
                      : change.component ? <div class="mono small">{change.component}</div> : null}
                    <div class="cell-sub mono">{change.pointer || '/'}</div>
                  </td>
                  <td><div>{change.message}</div><div class="cell-sub">{change.kind} · {change.check}</div></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {diff.data && diff.data.total > CHANGES_PAGE && (
        <Pager page={page} limit={CHANGES_PAGE} total={diff.data.total} onPage={(n) => route(withQuery(path, { ...query, page: n }))} noun="changes" />
      )}
    </Panel>
  )
}
