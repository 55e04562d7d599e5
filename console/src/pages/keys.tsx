import { useState } from 'preact/hooks'
import { api, type List } from '../api'
import { Badge, ConfirmButton, CopyButton, Empty, Loading, Notice, Page, Panel, Pager, ProblemNotice, Time } from '../components'
import { useAction, useFetch } from '../hooks'
import { useCan, useSession } from '../session'
import type { Key, Role } from '../types'
import { useListQuery } from '../list-query'

const ROLES: { value: Role; label: string; hint: string }[] = [
  { value: 'read', label: 'Read', hint: 'GET only: dashboards, CI checks that read' },
  { value: 'write', label: 'Write', hint: 'everything but keys and organization settings: CI that publishes' },
  { value: 'admin', label: 'Admin', hint: 'everything, including keys and the git mirror' },
]

export function Keys() {
  const admin = useCan('admin')
  const { session } = useSession()
  return (
    <Page title="API keys" lead="Keys authenticate clients, CI jobs and console sign-ins. Each has a role; a secret is shown once, when the key is created.">
      {admin ? <KeyManager /> : <Notice kind="info">Only admin keys can list, create and revoke keys. Your key’s role is <strong>{session.key.role}</strong>.</Notice>}
    </Page>
  )
}

function KeyManager() {
  const { session } = useSession()
  const { page, setPage } = useListQuery()
  const limit = 20
  const keys = useFetch<List<Key>>('/v1/keys', { page, limit })
  const [name, setName] = useState('')
  const [role, setRole] = useState<Role>('write')
  const [issued, setIssued] = useState<(Key & { api_key: string }) | undefined>()
  const create = useAction()
  const revoke = useAction()

  const submit = async (event: Event) => {
    event.preventDefault()
    const answer = await create.run(() => api.post<{ data: Key & { api_key: string } }>('/v1/keys', { name: name.trim() || null, role }))
    if (answer) {
      setIssued(answer.data)
      setName('')
      keys.reload()
    }
  }

  return (
    <>
      <Panel title="Create a key" id="create-key">
        {issued && (
          <div class="notice ok" role="status">
            <strong>Key “{issued.name ?? issued.id}” created ({issued.role})</strong>
            <p>Copy the secret now: it is not stored and will not be shown again.</p>
            <div class="secret"><code data-testid="new-key-secret">{issued.api_key}</code><CopyButton value={issued.api_key} /></div>
          </div>
        )}
        <ProblemNotice error={create.error} />
        <form class="stack" onSubmit={submit}>
          <div class="row">
            <div class="field">
              <label for="key-name">Name</label>
              <input id="key-name" type="text" value={name} maxLength={200} placeholder="e.g. CI publish" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
            </div>
          </div>
          <fieldset>
            <legend>Role</legend>
            <div class="stack">
              {ROLES.map((r) => (
                <label class="choice" key={r.value}>
                  <input type="radio" name="key-role" value={r.value} checked={role === r.value} onChange={() => setRole(r.value)} />
                  <span><strong>{r.label}</strong> <span class="muted">— {r.hint}</span></span>
                </label>
              ))}
            </div>
          </fieldset>
          <div class="form-actions"><button type="submit" class="primary" disabled={create.busy}>Create key</button></div>
        </form>
      </Panel>
      <Panel title="Keys" flush>
        <ProblemNotice error={keys.error ?? revoke.error} />
        {keys.data === undefined ? <Loading /> : keys.data.total === 0 ? <Empty title="No keys" /> : (
          <div class="table-wrap">
            <table class="list">
              <thead><tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                {keys.data.data.map((key) => (
                  <tr key={key.id}>
                    <td><div class="cell-title">{key.name ?? 'Unnamed key'}</div><div class="cell-sub mono">{key.id}{key.id === session.key.id ? ' · this session' : ''}</div></td>
                    <td><Badge kind={key.role}>{key.role}</Badge></td>
                    <td class="nowrap"><Time at={key.created_at} /></td>
                    <td class="nowrap"><Time at={key.last_used_at} fallback="never" /></td>
                    <td>{key.revoked_at ? <Badge kind="revoked">revoked <Time at={key.revoked_at} /></Badge> : <Badge kind="ok">active</Badge>}</td>
                    <td class="num">
                      {!key.revoked_at && (
                        <ConfirmButton label="Revoke" confirm={`Revoke ${key.name ?? 'key'}`} disabled={revoke.busy}
                          onConfirm={() => void revoke.run(async () => { await api.del(`/v1/keys/${key.id}`); keys.reload() })} />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {keys.data && keys.data.total > limit && <Pager page={page} limit={limit} total={keys.data.total} onPage={setPage} noun="keys" />}
      </Panel>
    </>
  )
}
