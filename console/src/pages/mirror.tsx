/** The organization's git mirror: how to clone it, and the remote it is pushed to. */
import { useState } from 'preact/hooks'
import { api } from '../api'
import { ConfirmButton, CopyButton, Loading, Notice, Page, Panel, ProblemNotice, Time } from '../components'
import { useAction, useFetch } from '../hooks'
import { ExternalLink } from '../links'
import { useCan, useSession } from '../session'
import type { MirrorStatus } from '../types'

export function Mirror() {
  const { session } = useSession()
  const status = useFetch<{ data: MirrorStatus }>('/v1/mirror')
  const admin = useCan('admin')
  const data = status.data?.data
  const cloneUrl = `${location.origin}/git/${session.organization.slug}.git`
  const withKey = cloneUrl.replace('://', '://x:$REGISTRY_KEY@')
  return (
    <Page title="Git mirror" lead="Every change to the organization’s APIs, schemas and rulesets is a commit on main: clone it, or have it pushed to a remote.">
      <ProblemNotice error={status.error} />
      <div class="grid-2">
        <Panel title="Clone">
          <div class="field">
            <span class="label">Clone URL</span>
            <div class="secret"><code>{cloneUrl}</code><CopyButton value={cloneUrl} /></div>
          </div>
          <p class="small">Authenticate with a key of the organization, as the password of any user name:</p>
          <pre class="log">git clone {withKey}</pre>
          <p class="small muted">Or without the key in the URL: <code>git -c http.extraHeader="Authorization: Bearer $REGISTRY_KEY" clone {cloneUrl}</code>. The mirror is read-only.</p>
          {data === undefined ? <Loading /> : (
            <dl class="facts">
              <dt>main</dt><dd class="mono">{data.head ? data.head.slice(0, 12) : 'no commit yet'}</dd>
            </dl>
          )}
        </Panel>
        {data && <PushMirror status={data} admin={admin} reload={status.reload} />}
      </div>
    </Page>
  )
}

function PushMirror(props: { status: MirrorStatus; admin: boolean; reload: () => void }) {
  const { status } = props
  const [url, setUrl] = useState(status.url ?? '')
  const [token, setToken] = useState('')
  const [saved, setSaved] = useState(false)
  const save = useAction()
  const remove = useAction()
  const submit = async (event: Event) => {
    event.preventDefault()
    setSaved(false)
    if (await save.run(() => api.put('/v1/mirror', { url: url.trim(), token: token || null }))) {
      setSaved(true)
      setToken('')
      props.reload()
    }
  }
  return (
    <Panel title="Push mirror" description="New commits are pushed to this remote, with retries.">
      <dl class="facts">
        <dt>Remote</dt><dd>{status.url ? <ExternalLink href={status.url} /> : <span class="muted">none</span>}</dd>
        <dt>Token</dt><dd>{status.token_set ? 'stored (write-only)' : 'none'}</dd>
        <dt>Last push</dt><dd>{status.last_pushed_at ? <><Time at={status.last_pushed_at} /> <span class="mono small">{status.last_pushed_commit?.slice(0, 12)}</span></> : <span class="muted">never</span>}</dd>
        {status.last_error && <><dt>Last error</dt><dd><span class="badge failed">failed</span> <Time at={status.last_error_at} /><div class="small">{status.last_error}</div></dd></>}
      </dl>
      {!props.admin ? <Notice kind="info">Setting the push mirror needs an admin key.</Notice> : (
        <form class="stack" onSubmit={submit}>
          {saved && <Notice kind="ok">Push mirror saved.</Notice>}
          <ProblemNotice error={save.error ?? remove.error} />
          <div class="field">
            <label for="mirror-url">Remote URL</label>
            <input id="mirror-url" type="url" required placeholder="https://github.com/acme/registry-mirror.git" value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
          </div>
          <div class="field">
            <label for="mirror-token">Token <span class="muted">(write-only)</span></label>
            <input id="mirror-token" type="password" autoComplete="off" value={token} aria-describedby="mirror-token-hint" onInput={(e) => setToken((e.target as HTMLInputElement).value)} />
            <p class="hint" id="mirror-token-hint">Sent as the HTTP password when pushing. Saving without one pushes without credentials.</p>
          </div>
          <div class="form-actions">
            <button type="submit" class="primary" disabled={save.busy}>Save push mirror</button>
            {status.url && <ConfirmButton label="Remove" confirm="Remove the push mirror" onConfirm={() => void remove.run(async () => { await api.del('/v1/mirror'); props.reload() })} />}
          </div>
        </form>
      )}
    </Panel>
  )
}
