/**
 * The organization's outbound webhooks (docs/webhooks.md): its endpoints, each one's signing secret
 * (shown once, when it is made), settings, state and deliveries with their attempt logs. Admin keys only.
 */
import { Fragment, type ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { useLocation } from 'preact-iso'
import { api, type List } from '../api'
import { Badge, ConfirmButton, CopyButton, Empty, Loading, Notice, Page, Panel, Pager, Pending, ProblemNotice, Tabs, Time } from '../components'
import { useAction, useFetch, usePolling } from '../hooks'
import { useListQuery } from '../list-query'
import { useCan, useSession } from '../session'
import type { WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEventType } from '../types'

/** The event types of docs/webhooks.md, in its order. */
const EVENT_TYPES: { value: WebhookEventType; hint: string }[] = [
  { value: 'version.created', hint: 'a new version' },
  { value: 'version.restored', hint: 'an earlier version made current' },
  { value: 'upload.blocked', hint: 'an upload or sync refused by a gate' },
  { value: 'sync.failed', hint: 'a repository sync failed or was blocked' },
  { value: 'build.succeeded', hint: 'an SDK build succeeded' },
  { value: 'build.failed', hint: 'an SDK build failed' },
  { value: 'resource.created', hint: 'an API, schema or ruleset created' },
  { value: 'resource.updated', hint: 'its settings changed' },
  { value: 'resource.deleted', hint: 'it was deleted' },
]
const PAGE_SIZE = 25
const LIST = '/console/webhooks'

type WithSecret = WebhookEndpoint & { secret: string }

function AdminOnly() {
  const { session } = useSession()
  return <Notice kind="info">Only admin keys can see and change webhook endpoints. Your key’s role is <strong>{session.key.role}</strong>.</Notice>
}

export function Webhooks() {
  const admin = useCan('admin')
  return (
    <Page title="Webhooks" lead="The registry POSTs what happens in the organization (new versions, refused uploads, failed syncs, finished builds, resources created, changed or deleted) to these endpoints, signed per Standard Webhooks.">
      {admin ? <EndpointManager /> : <AdminOnly />}
    </Page>
  )
}

const eventsText = (endpoint: WebhookEndpoint) => endpoint.event_types.length === 0 ? 'All events' : endpoint.event_types.join(', ')

/** Enabled or disabled, failing since when, and whether its secret must be made again. */
function EndpointState(props: { endpoint: WebhookEndpoint }) {
  const { endpoint } = props
  return (
    <>
      {endpoint.enabled ? <Badge kind="ok">enabled</Badge> : <Badge kind="warn">disabled</Badge>}
      {endpoint.failing_since && <> <Badge kind="failed">failing since <Time at={endpoint.failing_since} /></Badge></>}
      {endpoint.secret_status === 'needs_reentry' && <> <Badge kind="failed">needs a new secret</Badge></>}
    </>
  )
}

/** A signing secret, in the one answer that shows it. */
function SecretShownOnce(props: { title: string; secret: string; children?: ComponentChildren }) {
  return (
    <div class="notice ok" role="status">
      <strong>{props.title}</strong>
      <p>Copy the signing secret now: it will not be shown again. {props.children}</p>
      <div class="secret"><code data-testid="webhook-secret">{props.secret}</code><CopyButton value={props.secret} /></div>
    </div>
  )
}

function EndpointManager() {
  const { page, setPage } = useListQuery()
  const endpoints = useFetch<List<WebhookEndpoint>>('/v1/webhooks', { page, limit: PAGE_SIZE })
  const fields = useEndpointFields()
  const create = useAction()
  const [added, setAdded] = useState<WithSecret | undefined>()

  const submit = async (event: Event) => {
    event.preventDefault()
    setAdded(undefined)
    const answer = await create.run(() => api.post<{ data: WithSecret }>('/v1/webhooks', fields.body()))
    if (answer) {
      setAdded(answer.data)
      fields.reset()
      endpoints.reload()
    }
  }

  return (
    <>
      <Panel title="Add an endpoint" id="add-endpoint">
        {added && (
          <SecretShownOnce title={`Endpoint ${added.url} added`} secret={added.secret}>
            Its receiver verifies each delivery’s signature with it. <a href={`${LIST}/${added.id}`}>Open the endpoint</a>
          </SecretShownOnce>
        )}
        <ProblemNotice error={create.error} />
        <form class="stack" onSubmit={submit}>
          {fields.form}
          <div class="form-actions"><button type="submit" class="primary" disabled={create.busy || !fields.ready}>Add endpoint</button></div>
        </form>
      </Panel>
      <Panel title="Endpoints" flush>
        <ProblemNotice error={endpoints.error} />
        {endpoints.data === undefined ? <Loading /> : endpoints.data.total === 0 ? <Empty title="No endpoints yet"><p>Add one above: events are sent to it from then on.</p></Empty> : (
          <div class="table-wrap">
            <table class="list">
              <caption class="visually-hidden">Webhook endpoints, oldest first</caption>
              <thead><tr><th scope="col">Endpoint</th><th scope="col">Events</th><th scope="col">Status</th><th scope="col">Added</th></tr></thead>
              <tbody>
                {endpoints.data.data.map((endpoint) => (
                  <tr key={endpoint.id}>
                    <td><a class="cell-title" href={`${LIST}/${endpoint.id}`}>{endpoint.url}</a>{endpoint.description && <div class="cell-sub">{endpoint.description}</div>}</td>
                    <td class="small">{eventsText(endpoint)}</td>
                    <td><EndpointState endpoint={endpoint} />{endpoint.disabled_reason && <div class="cell-sub">{endpoint.disabled_reason}</div>}</td>
                    <td class="nowrap"><Time at={endpoint.created_at} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {endpoints.data && endpoints.data.total > PAGE_SIZE && <Pager page={page} limit={PAGE_SIZE} total={endpoints.data.total} onPage={setPage} noun="endpoints" />}
      </Panel>
    </>
  )
}

const sameTypes = (a: WebhookEventType[], b: WebhookEventType[]) => [...a].sort().join() === [...b].sort().join()

/** The endpoint's form fields (add and settings): URL, description, event types. */
function useEndpointFields(endpoint?: WebhookEndpoint) {
  const [url, setUrl] = useState(endpoint?.url ?? '')
  const [description, setDescription] = useState(endpoint?.description ?? '')
  const [all, setAll] = useState(!endpoint || endpoint.event_types.length === 0)
  const [types, setTypes] = useState<WebhookEventType[]>(endpoint?.event_types ?? [])
  const body = () => ({ url: url.trim(), description: description.trim() || null, event_types: all ? [] : types })
  const toggle = (value: WebhookEventType, on: boolean) => setTypes(EVENT_TYPES.map((t) => t.value).filter((v) => v === value ? on : types.includes(v)))
  const form = (
    <>
      <div class="field">
        <label for="webhook-url">URL</label>
        <input id="webhook-url" type="url" required maxLength={2048} placeholder="https://hooks.example.com/registry" value={url} aria-describedby="webhook-url-hint"
          onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
        <p class="hint" id="webhook-url-hint">http or https, without credentials. The registry’s outbound policy refuses internal addresses unless its operator allowed them.</p>
      </div>
      <div class="field">
        <label for="webhook-description">Description {!endpoint && <span class="muted">(optional)</span>}</label>
        <input id="webhook-description" type="text" maxLength={500} value={description} aria-describedby={endpoint ? 'webhook-description-hint' : undefined}
          onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />
        {endpoint && <p class="hint" id="webhook-description-hint">Empty clears it.</p>}
      </div>
      <fieldset>
        <legend>Events</legend>
        <div class="stack">
          <label class="choice">
            <input type="radio" name="webhook-scope" checked={all} onChange={() => setAll(true)} />
            <span><strong>All events</strong> <span class="muted">— every type, including any added later</span></span>
          </label>
          <label class="choice">
            <input type="radio" name="webhook-scope" checked={!all} onChange={() => setAll(false)} />
            <span><strong>Only these</strong></span>
          </label>
          <div class="event-types">
            {EVENT_TYPES.map((t) => (
              <label class="choice" key={t.value}>
                <input type="checkbox" disabled={all} checked={!all && types.includes(t.value)} onChange={(e) => toggle(t.value, (e.target as HTMLInputElement).checked)} />
                <span><code>{t.value}</code> <span class="muted small">{t.hint}</span></span>
              </label>
            ))}
          </div>
          {!all && types.length === 0 && <p class="hint">Choose at least one type.</p>}
        </div>
      </fieldset>
    </>
  )
  const reset = () => {
    setUrl('')
    setDescription('')
    setAll(true)
    setTypes([])
  }
  /** What differs from the endpoint: only that is sent. */
  const changes = (current: WebhookEndpoint): Record<string, unknown> => {
    const next = body()
    const out: Record<string, unknown> = {}
    if (next.url !== current.url) out.url = next.url
    if (next.description !== current.description) out.description = next.description
    if (!sameTypes(next.event_types, current.event_types)) out.event_types = next.event_types
    return out
  }
  return { form, body, reset, changes, ready: url.trim() !== '' && (all || types.length > 0) }
}

/** The header and tabs of one endpoint's views, for admin keys; the view gets the endpoint and a reload. */
function EndpointFrame(props: { id: string; view: 'Settings' | 'Deliveries'; children: (endpoint: WebhookEndpoint, reload: () => void) => ComponentChildren }) {
  if (!useCan('admin')) return <Page title="Webhooks" crumbs={[{ label: 'Webhooks', href: LIST }]}><AdminOnly /></Page>
  return <EndpointLoader {...props} />
}

function EndpointLoader(props: { id: string; view: 'Settings' | 'Deliveries'; children: (endpoint: WebhookEndpoint, reload: () => void) => ComponentChildren }) {
  const endpoint = useFetch<{ data: WebhookEndpoint }>(`/v1/webhooks/${props.id}`)
  const data = endpoint.data?.data
  if (!data) return <Pending what="Webhook endpoint" error={endpoint.error} crumbs={[{ label: 'Webhooks', href: LIST }]} />
  const base = `${LIST}/${data.id}`
  const settings = props.view === 'Settings'
  return (
    <Page title={settings ? data.url : `${data.url}: Deliveries`}
      crumbs={[{ label: 'Webhooks', href: LIST }, { label: data.url, href: base }, ...(settings ? [] : [{ label: 'Deliveries' }])]}
      lead={<><EndpointState endpoint={data} /> · {eventsText(data)}{data.description && <> · {data.description}</>}</>}
      tabs={<Tabs label="Endpoint views" items={[{ href: base, label: 'Settings' }, { href: `${base}/deliveries`, label: 'Deliveries' }]} />}>
      {props.children(data, endpoint.reload)}
    </Page>
  )
}

export function WebhookSettings(props: { id: string }) {
  return <EndpointFrame id={props.id} view="Settings">{(endpoint, reload) => <SettingsPanels endpoint={endpoint} reload={reload} />}</EndpointFrame>
}

function SettingsPanels(props: { endpoint: WebhookEndpoint; reload: () => void }) {
  // The form remounts with the saved values (its key is the endpoint's updated_at): "saved" is kept here.
  const [saved, setSaved] = useState(false)
  return (
    <div class="grid-2">
      <EndpointForm key={props.endpoint.updated_at} endpoint={props.endpoint} saved={saved} onSaved={(done) => { setSaved(done); if (done) props.reload() }} />
      <div>
        <StatusPanel endpoint={props.endpoint} reload={props.reload} />
        <SecretPanel endpoint={props.endpoint} reload={props.reload} />
        <DeletePanel endpoint={props.endpoint} />
      </div>
    </div>
  )
}

function EndpointForm(props: { endpoint: WebhookEndpoint; saved: boolean; onSaved: (saved: boolean) => void }) {
  const fields = useEndpointFields(props.endpoint)
  const save = useAction()
  const submit = async (event: Event) => {
    event.preventDefault()
    props.onSaved(false)
    const body = fields.changes(props.endpoint)
    if (Object.keys(body).length === 0) return props.onSaved(true)
    if (await save.run(() => api.patch(`/v1/webhooks/${props.endpoint.id}`, body))) props.onSaved(true)
  }
  return (
    <Panel title="Settings" id="endpoint-settings">
      {props.saved && <Notice kind="ok">Saved.</Notice>}
      <ProblemNotice error={save.error} />
      <form class="stack" onSubmit={submit}>
        <fieldset disabled={save.busy} class="stack bare">
          <legend class="visually-hidden">Endpoint settings</legend>
          {fields.form}
          <div class="form-actions"><button type="submit" class="primary" disabled={!fields.ready}>Save changes</button></div>
        </fieldset>
      </form>
    </Panel>
  )
}

function StatusPanel(props: { endpoint: WebhookEndpoint; reload: () => void }) {
  const { endpoint } = props
  const change = useAction()
  const setEnabled = (enabled: boolean) => void change.run(async () => {
    await api.patch(`/v1/webhooks/${endpoint.id}`, { enabled })
    props.reload()
  })
  return (
    <Panel title="Status" id="endpoint-status" description="A disabled endpoint gets no new deliveries, and its pending ones are not sent. The registry disables one whose every delivery failed for 5 days.">
      <ProblemNotice error={change.error} />
      <dl class="facts">
        <dt>State</dt><dd><EndpointState endpoint={endpoint} /></dd>
        {endpoint.disabled_reason && <><dt>Why</dt><dd>{endpoint.disabled_reason}</dd></>}
        <dt>Added</dt><dd><Time at={endpoint.created_at} /></dd>
        <dt>Changed</dt><dd><Time at={endpoint.updated_at} /></dd>
        <dt>ID</dt><dd class="mono">{endpoint.id}</dd>
      </dl>
      <div class="form-actions">
        {endpoint.enabled
          ? <ConfirmButton label="Disable" confirm="Disable the endpoint" disabled={change.busy} onConfirm={() => setEnabled(false)} />
          : <button type="button" class="primary" disabled={change.busy} onClick={() => setEnabled(true)}>Enable</button>}
      </div>
    </Panel>
  )
}

function SecretPanel(props: { endpoint: WebhookEndpoint; reload: () => void }) {
  const [secret, setSecret] = useState<string | undefined>()
  const make = useAction()
  const renew = () => void make.run(async () => {
    const answer = await api.post<{ data: WithSecret }>(`/v1/webhooks/${props.endpoint.id}/secret`)
    setSecret(answer.data.secret)
    props.reload()
  })
  return (
    <Panel title="Signing secret" id="signing-secret" description="The receiver checks each delivery’s webhook-signature header with it (Standard Webhooks).">
      {secret && <SecretShownOnce title="A new signing secret" secret={secret}>The old one stopped working: give this one to the receiver.</SecretShownOnce>}
      {!secret && props.endpoint.secret_status === 'needs_reentry' && (
        <Notice kind="warn">The stored secret cannot be opened (the registry was restored without its secret key): deliveries are not sent until you make a new one.</Notice>
      )}
      <ProblemNotice error={make.error} />
      <ConfirmButton label="Make a new secret" confirm="Replace the secret now" disabled={make.busy} onConfirm={renew} />
    </Panel>
  )
}

function DeletePanel(props: { endpoint: WebhookEndpoint }) {
  const { route } = useLocation()
  const remove = useAction()
  return (
    <Panel title="Delete" description="Removes the endpoint and its deliveries.">
      <ProblemNotice error={remove.error} />
      <ConfirmButton label="Delete endpoint" confirm="Delete the endpoint" disabled={remove.busy} onConfirm={() => void remove.run(async () => {
        await api.del(`/v1/webhooks/${props.endpoint.id}`)
        route(LIST)
      })} />
    </Panel>
  )
}

export function WebhookDeliveries(props: { id: string }) {
  return <EndpointFrame id={props.id} view="Deliveries">{(endpoint) => <DeliveryList endpoint={endpoint} />}</EndpointFrame>
}

/** Being sent, or retried within the minute: the list refreshes itself until then. */
const dueSoon = (delivery: WebhookDelivery) =>
  delivery.status === 'pending' && (delivery.next_attempt_at === null || Date.parse(delivery.next_attempt_at) - Date.now() < 60_000)

/** When a pending delivery is tried next: how soon, while that is within the hour. */
function NextAttempt(props: { at: string | null }) {
  const seconds = props.at === null ? Infinity : Math.round((Date.parse(props.at) - Date.now()) / 1000)
  if (props.at === null || seconds > 3600) return <Time at={props.at} />
  return <time dateTime={props.at} title={props.at}>{seconds <= 0 ? 'now' : seconds < 60 ? `in ${seconds} s` : `in ${Math.round(seconds / 60)} min`}</time>
}

const STATUS_BADGE: Record<WebhookDelivery['status'], string> = { pending: 'info', succeeded: 'succeeded', failed: 'failed' }

function DeliveryList(props: { endpoint: WebhookEndpoint }) {
  const { page, setPage } = useListQuery()
  const path = `/v1/webhooks/${props.endpoint.id}/deliveries`
  const deliveries = useFetch<List<WebhookDelivery>>(path, { page, limit: PAGE_SIZE })
  const redeliver = useAction()
  const [resent, setResent] = useState<WebhookDelivery | undefined>()
  const [open, setOpen] = useState<string[]>([])
  const sending = (deliveries.data?.data ?? []).some(dueSoon)
  usePolling(sending, 2000, deliveries.reload)

  const send = (delivery: WebhookDelivery) => void redeliver.run(async () => {
    setResent(undefined)
    await api.post(`${path}/${delivery.id}/redeliver`)
    setResent(delivery)
    deliveries.reload()
  })

  return (
    <Panel title="Deliveries" id="deliveries" flush
      description={sending ? 'Refreshing while deliveries are being sent…' : 'Newest first; each keeps its latest 20 attempts.'}
      actions={<button type="button" class="small" disabled={deliveries.loading} onClick={deliveries.reload}>Refresh</button>}>
      {resent && <Notice kind="ok">The {resent.event_type} delivery is being sent again, with its retries.</Notice>}
      <ProblemNotice error={deliveries.error} />
      <ProblemNotice error={redeliver.error} title="The delivery was not sent again" />
      {deliveries.data === undefined ? <Loading /> : deliveries.data.total === 0 ? (
        <Empty title="No deliveries yet"><p>Each event the endpoint subscribes to is delivered to it and listed here.</p></Empty>
      ) : (
        <div class="table-wrap">
          <table class="list" data-testid="deliveries">
            <caption class="visually-hidden">Deliveries, newest first</caption>
            <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col">Next attempt</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {deliveries.data.data.map((delivery) => {
                const expanded = open.includes(delivery.id)
                const logId = `attempts-${delivery.id}`
                return (
                  <Fragment key={delivery.id}>
                    <tr>
                      <td><div class="cell-title mono">{delivery.event_type}</div><div class="cell-sub mono" title="webhook-id">{delivery.event_id}</div></td>
                      <td><Badge kind={STATUS_BADGE[delivery.status]}>{delivery.status}</Badge></td>
                      <td class="num">{delivery.attempts}</td>
                      <td class="nowrap"><NextAttempt at={delivery.next_attempt_at} /></td>
                      <td class="nowrap"><Time at={delivery.created_at} /></td>
                      <td class="num">
                        <span class="actions">
                          <button type="button" class="small" aria-expanded={expanded} aria-controls={expanded ? logId : undefined}
                            onClick={() => setOpen(expanded ? open.filter((id) => id !== delivery.id) : [...open, delivery.id])}>Attempt log</button>
                          <button type="button" class="small" disabled={redeliver.busy} onClick={() => send(delivery)}>Redeliver</button>
                        </span>
                      </td>
                    </tr>
                    {expanded && <tr id={logId} class="attempt-log"><td colSpan={6}><AttemptLog log={delivery.log} /></td></tr>}
                  </Fragment>
                )
              })}
            </tbody>
          </table>
        </div>
      )}
      {deliveries.data && deliveries.data.total > PAGE_SIZE && <Pager page={page} limit={PAGE_SIZE} total={deliveries.data.total} onPage={setPage} noun="deliveries" />}
    </Panel>
  )
}

function AttemptLog(props: { log: WebhookAttempt[] }) {
  if (props.log.length === 0) return <p class="muted small">No attempt yet.</p>
  return (
    <table class="list">
      <caption class="visually-hidden">Attempts, oldest first</caption>
      <thead><tr><th scope="col">Attempt</th><th scope="col">Time</th><th scope="col">Status code</th><th scope="col" class="num">Duration</th><th scope="col">Response</th></tr></thead>
      <tbody>
        {props.log.map((attempt, i) => (
          <tr key={i}>
            <td>#{attempt.attempt}</td>
            <td class="nowrap"><Time at={attempt.at} /></td>
            <td>{attempt.status_code === null
              ? <Badge kind="failed">no answer</Badge>
              : <Badge kind={attempt.status_code >= 200 && attempt.status_code < 300 ? 'ok' : 'failed'}>{attempt.status_code}</Badge>}</td>
            <td class="num">{attempt.duration_ms.toLocaleString()} ms</td>
            <td>{attempt.response ? <pre class="excerpt">{attempt.response}</pre> : <span class="muted">empty</span>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
