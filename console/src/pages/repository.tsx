/** An API kept current from a file in a GitHub or GitLab repository: connection, webhook, sync. */
import { useState } from 'preact/hooks'
import { api, type ApiError } from '../api'
import { Badge, ConfirmButton, Loading, Notice, Panel, pathText, ProblemNotice, Time, CopyButton } from '../components'
import { useAction, useFetch } from '../hooks'
import { ExternalLink } from '../links'
import { useCan } from '../session'
import type { Connection, Resource, Version } from '../types'
import { ResourceFrame } from './resource'

export function Repository(props: { plural: 'apis'; id: string }) {
  return <ResourceFrame {...props} title="Repository">{(resource, reload) => <RepositoryPanels api={resource} reloadApi={reload} />}</ResourceFrame>
}

function RepositoryPanels(props: { api: Resource; reloadApi: () => void }) {
  const path = `/v1/apis/${props.api.id}/repository`
  const connection = useFetch<{ data: Connection }>(path)
  const canWrite = useCan('write')
  const sync = useAction()
  const disconnect = useAction()
  const [saved, setSaved] = useState(false)
  const [synced, setSynced] = useState<{ version: Version; created: boolean } | undefined>()
  const current = connection.data?.data
  const notConnected = connection.error?.status === 404

  if (connection.loading && !connection.data && !connection.error) return <Loading />

  const syncNow = async () => {
    setSynced(undefined)
    const answer = await sync.run(() => api.post<{ data: Version }>(`/v1/apis/${props.api.id}/sync`))
    if (answer) {
      setSynced({ version: answer.data, created: answer.data.id !== props.api.current?.id })
      props.reloadApi()
    }
    connection.reload()
  }

  return (
    <div class="grid-2">
      <div>
        {current && (
          <Panel title="Last sync" id="last-sync" actions={canWrite && <button type="button" class="primary" disabled={sync.busy} onClick={() => void syncNow()}>{sync.busy ? 'Syncing…' : 'Sync now'}</button>}>
            {synced && <Notice kind="ok">{synced.created ? `Synced: version #${synced.version.number} is current.` : 'Synced: the file is unchanged, no new version.'}</Notice>}
            {/* A failed sync is also the last sync, whose facts below show its error once the connection reloads. */}
            {!sameFailure(sync.error, current.last_sync?.error) && <ProblemNotice error={sync.error} title="The sync did not publish" />}
            <LastSyncFacts connection={current} />
          </Panel>
        )}
        <ConnectionForm key={current?.updated_at ?? 'new'} apiId={props.api.id} current={current} canWrite={canWrite} saved={saved}
          onSaved={(done) => { setSaved(done); if (done) connection.reload() }} />
      </div>
      <div>
        {current && <WebhookPanel connection={current} />}
        {notConnected && (
          <Panel title="How it works">
            <p>Connect the API to the OpenAPI file of a repository branch. A push to that branch (through the repository’s webhook), or <strong>Sync now</strong>, fetches the file and publishes it like an upload: the lint gate applies, and unchanged content makes no version.</p>
            <p class="muted small">Versions made this way have the source <code>github</code> or <code>gitlab</code>.</p>
          </Panel>
        )}
        {current && canWrite && (
          <Panel title="Disconnect" description="The API keeps its versions; pushes no longer sync it.">
            <ProblemNotice error={disconnect.error} />
            <ConfirmButton label="Disconnect" confirm="Disconnect the repository" onConfirm={() => void disconnect.run(async () => {
              await api.del(path)
              connection.reload()
            })} />
          </Panel>
        )}
      </div>
    </div>
  )
}

/** True when the error a sync answered is the one the reloaded connection keeps as its last sync's. */
function sameFailure(answered: ApiError | undefined, kept: { code: string; detail: string } | null | undefined): boolean {
  return answered !== undefined && kept != null && answered.problem.code === kept.code && answered.problem.detail === kept.detail
}

function LastSyncFacts(props: { connection: Connection }) {
  const last = props.connection.last_sync
  if (!last) return <p class="muted">No sync yet: push to the branch, or sync now.</p>
  const status = { succeeded: 'succeeded', unchanged: 'ok', blocked: 'blocked', failed: 'failed' }[last.status]
  return (
    <>
      <dl class="facts">
        <dt>Status</dt><dd><Badge kind={status}>{last.status}</Badge> ({last.trigger})</dd>
        <dt>Finished</dt><dd><Time at={last.finished_at} /></dd>
        {last.commit && <><dt>Commit</dt><dd class="mono">{last.commit.slice(0, 12)}</dd></>}
        {last.version_number !== null && <><dt>Version</dt><dd>#{last.version_number}</dd></>}
      </dl>
      {last.error && (
        <div class="notice error" role="status">
          <strong>{last.error.code}</strong>
          <p>{last.error.detail}</p>
          {last.error.errors && last.error.errors.length > 0 && (
            <ul>{last.error.errors.map((item, i) => (
              <li key={i}>{item.severity && <Badge kind={item.severity}>{item.severity}</Badge>} {item.file && <code>{item.file}</code>} <code>{pathText(item.path)}</code> {item.message}</li>
            ))}</ul>
          )}
        </div>
      )}
    </>
  )
}

function WebhookPanel(props: { connection: Connection }) {
  const url = `${location.origin}${props.connection.webhook_path}`
  const github = props.connection.provider === 'github'
  return (
    <Panel title="Webhook" description="Pushes to the branch sync the API when the repository calls this URL.">
      <div class="field">
        <span class="label">Payload URL</span>
        <div class="secret"><code>{url}</code><CopyButton value={url} /></div>
      </div>
      <ol class="small">
        {github ? (
          <>
            <li>In the repository on GitHub: <em>Settings → Webhooks → Add webhook</em>.</li>
            <li>Payload URL as above, content type <code>application/json</code>, the <em>push</em> event.</li>
            <li>Secret: the webhook secret saved in this connection{props.connection.has_webhook_secret ? '' : ' (none is saved yet: set one in the form)'}.</li>
          </>
        ) : (
          <>
            <li>In the project on GitLab: <em>Settings → Webhooks → Add new webhook</em>.</li>
            <li>URL as above, trigger <em>Push events</em>.</li>
            <li>Secret token: the webhook secret saved in this connection{props.connection.has_webhook_secret ? '' : ' (none is saved yet: set one in the form)'}.</li>
          </>
        )}
      </ol>
      <p class="small">Repository: <ExternalLink href={props.connection.url} /></p>
    </Panel>
  )
}

/**
 * The connection's form. A save reloads the connection, whose new updated_at remounts the form with
 * the saved values: the "saved" notice is kept by the page, or it went with the old form.
 */
function ConnectionForm(props: { apiId: string; current: Connection | undefined; canWrite: boolean; saved: boolean; onSaved: (saved: boolean) => void }) {
  const { current } = props
  const [provider, setProvider] = useState<'github' | 'gitlab'>(current?.provider ?? 'github')
  const [url, setUrl] = useState(current?.url ?? '')
  const [branch, setBranch] = useState(current?.branch ?? 'main')
  const [path, setPath] = useState(current?.path ?? 'openapi.yaml')
  const [token, setToken] = useState('')
  const [secret, setSecret] = useState('')
  const save = useAction()

  const submit = async (event: Event) => {
    event.preventDefault()
    props.onSaved(false)
    const body = { provider, url: url.trim(), branch: branch.trim(), path: path.trim(), token: token || null, webhook_secret: secret || null }
    if (await save.run(() => api.put(`/v1/apis/${props.apiId}/repository`, body))) {
      props.onSaved(true)
    }
  }

  return (
    <Panel title={current ? 'Connection' : 'Connect a repository'} id="connection">
      {props.saved && <Notice kind="ok">Connection saved.</Notice>}
      <ProblemNotice error={save.error} />
      <form class="stack" onSubmit={submit}>
        <fieldset disabled={!props.canWrite || save.busy} class="stack bare">
          <legend class="visually-hidden">Repository connection</legend>
          <fieldset>
            <legend>Provider</legend>
            <div class="choices">
              {(['github', 'gitlab'] as const).map((value) => (
                <label class="choice" key={value}>
                  <input type="radio" name="provider" checked={provider === value} onChange={() => setProvider(value)} /> {value === 'github' ? 'GitHub' : 'GitLab'}
                </label>
              ))}
            </div>
          </fieldset>
          <div class="field">
            <label for="repo-url">Repository URL</label>
            <input id="repo-url" type="url" required placeholder="https://github.com/acme/petstore" value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
          </div>
          <div class="row">
            <div class="field">
              <label for="repo-branch">Branch</label>
              <input id="repo-branch" type="text" required value={branch} onInput={(e) => setBranch((e.target as HTMLInputElement).value)} />
            </div>
            <div class="field">
              <label for="repo-path">Path of the OpenAPI file</label>
              <input id="repo-path" type="text" required value={path} onInput={(e) => setPath((e.target as HTMLInputElement).value)} />
            </div>
          </div>
          <div class="field">
            <label for="repo-token">Access token <span class="muted">(write-only)</span></label>
            <input id="repo-token" type="password" autoComplete="off" value={token} aria-describedby="repo-token-hint" onInput={(e) => setToken((e.target as HTMLInputElement).value)} />
            <p class="hint" id="repo-token-hint">For a private repository (read access). {current?.has_token ? 'A token is stored; saving replaces the connection, so paste it again to keep one.' : 'Not shown again once saved.'}</p>
          </div>
          <div class="field">
            <label for="repo-secret">Webhook secret <span class="muted">(write-only)</span></label>
            <input id="repo-secret" type="password" autoComplete="off" value={secret} aria-describedby="repo-secret-hint" onInput={(e) => setSecret((e.target as HTMLInputElement).value)} />
            <p class="hint" id="repo-secret-hint">{current?.has_webhook_secret ? 'A secret is stored; saving replaces the connection, so enter it again to keep webhooks working.' : 'The same value goes into the repository’s webhook settings.'}</p>
          </div>
          <div class="form-actions"><button type="submit" class="primary">{current ? 'Save connection' : 'Connect'}</button></div>
        </fieldset>
      </form>
    </Panel>
  )
}
