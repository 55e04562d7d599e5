/** SDK builds: the organization's list and one build with its status, output and log, live while it runs. */
import { Fragment } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, type List } from '../api'
import { Badge, ConfirmButton, Empty, Loading, Notice, Page, Panel, Pager, Pending, ProblemNotice, Time } from '../components'
import { useAction, useFetch, usePolling } from '../hooks'
import { ExternalLink } from '../links'
import { useListQuery } from '../list-query'
import { useCan } from '../session'
import { TARGET_LABELS, type Build, type Sdk } from '../types'

const PAGE_SIZE = 25

export const isActive = (build: Build) => build.status === 'queued' || build.status === 'running'

export function BuildStatus(props: { build: Build }) {
  return <Badge kind={props.build.status}>{props.build.status === 'running' ? <><span class="spinner" aria-hidden="true" /> running</> : props.build.status}</Badge>
}

function outcome(build: Build) {
  if (build.output?.pull_request) return <ExternalLink href={build.output.pull_request.url}>Pull request #{build.output.pull_request.number}</ExternalLink>
  if (build.output?.reason === 'unchanged') return <span class="muted">unchanged: no pull request</span>
  if (build.output?.reason === 'archive_only') return <span class="muted">archive only</span>
  if (build.output?.branch) return <span class="mono small">{build.output.branch}</span>
  if (build.error) return <span class="small">{build.error.length > 80 ? `${build.error.slice(0, 79)}…` : build.error}</span>
  return <span class="muted">—</span>
}

export function BuildTable(props: { builds: Build[] }) {
  return (
    <div class="table-wrap">
      <table class="list">
        <caption class="visually-hidden">Builds, newest first</caption>
        <thead><tr><th scope="col">Build</th><th scope="col">Status</th><th scope="col">Result</th><th scope="col">Queued</th><th scope="col">Finished</th></tr></thead>
        <tbody>
          {props.builds.map((build) => (
            <tr key={build.id}>
              <td><a class="cell-title" href={`/console/builds/${build.id}`}>{TARGET_LABELS[build.target]} #{build.number}</a><div class="cell-sub">{build.inputs.apis.map((a) => a.name).join(', ')}</div></td>
              <td><BuildStatus build={build} /></td>
              <td>{outcome(build)}</td>
              <td class="nowrap"><Time at={build.created_at} /></td>
              <td class="nowrap"><Time at={build.finished_at} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

export function BuildList() {
  const { page, setPage } = useListQuery()
  const builds = useFetch<List<Build>>('/v1/builds', { page, limit: PAGE_SIZE })
  usePolling((builds.data?.data ?? []).some(isActive), 2000, builds.reload)
  return (
    <Page title="Builds" lead="Every SDK generator run of the organization, newest first; running builds refresh by themselves.">
      <Panel flush>
        <ProblemNotice error={builds.error} />
        {builds.data === undefined ? <Loading /> : builds.data.total === 0 ? (
          <Empty title="No builds yet"><p>Queue one from an <a href="/console/sdks">SDK</a>.</p></Empty>
        ) : <BuildTable builds={builds.data.data} />}
        {builds.data && builds.data.total > PAGE_SIZE && <Pager page={page} limit={PAGE_SIZE} total={builds.data.total} onPage={setPage} noun="builds" />}
      </Panel>
    </Page>
  )
}

export function BuildDetail(props: { id: string }) {
  const build = useFetch<{ data: Build }>(`/v1/builds/${props.id}`)
  const data = build.data?.data
  const active = data !== undefined && isActive(data)
  usePolling(active, 2000, build.reload)
  if (!data) return <Pending what="Build" error={build.error} crumbs={[{ label: 'Builds', href: '/console/builds' }]} />
  return <BuildPanels build={data} active={active} reload={build.reload} />
}

function BuildPanels(props: { build: Build; active: boolean; reload: () => void }) {
  const { build } = props
  const sdk = useFetch<{ data: Sdk }>(`/v1/sdks/${build.sdk_id}`)
  const canWrite = useCan('write')
  const cancel = useAction()
  const sdkName = sdk.data?.data.name ?? 'SDK'
  return (
    <Page title={`${TARGET_LABELS[build.target]} build #${build.number}`}
      crumbs={[{ label: 'SDKs', href: '/console/sdks' }, { label: sdkName, href: `/console/sdks/${build.sdk_id}` }, { label: `Build #${build.number}` }]}
      lead={<><BuildStatus build={build} /> {props.active && <span class="muted small">refreshing every 2 seconds</span>}</>}
      actions={<>
        {build.status === 'succeeded' && <a class="button" href={`/v1/builds/${build.id}/artifact`} download="">Download .tar.gz</a>}
        {canWrite && props.active && <ConfirmButton label="Cancel build" confirm="Cancel it" onConfirm={() => void cancel.run(async () => { await api.post(`/v1/builds/${build.id}/cancel`); props.reload() })} />}
      </>}>
      <ProblemNotice error={cancel.error} />
      {build.error && <Notice kind="error"><strong>The build failed</strong><p>{build.error}</p></Notice>}
      <div class="grid-2">
        <Panel title="Result">
          <dl class="facts">
            <dt>Status</dt><dd><BuildStatus build={build} /></dd>
            <dt>Pull request</dt><dd>{build.output?.pull_request ? <ExternalLink href={build.output.pull_request.url}>{build.output.pull_request.title} (#{build.output.pull_request.number})</ExternalLink> : outcome(build)}</dd>
            {build.repository && <><dt>Repository</dt><dd><ExternalLink href={build.repository.url} /> ({build.repository.base_branch})</dd></>}
            {build.output?.branch && <><dt>Branch</dt><dd class="mono">{build.output.branch}</dd></>}
            {build.output?.commit && <><dt>Commit</dt><dd class="mono">{build.output.commit.slice(0, 12)}</dd></>}
            {build.output && <><dt>Files</dt><dd>{build.output.files.length}</dd></>}
            <dt>Queued</dt><dd><Time at={build.created_at} /></dd>
            <dt>Started</dt><dd><Time at={build.started_at} fallback="not yet" /></dd>
            <dt>Finished</dt><dd><Time at={build.finished_at} fallback="not yet" /></dd>
            <dt>Attempts</dt><dd>{build.attempts}</dd>
          </dl>
        </Panel>
        <Panel title="Inputs">
          <dl class="facts">
            {build.inputs.apis.map((input) => (
              <Fragment key={input.api_id}><dt><a href={`/console/apis/${input.api_id}`}>{input.name}</a></dt><dd class="mono small">{input.checksum.replace('sha256:', '').slice(0, 12)}</dd></Fragment>
            ))}
            <dt>Generator</dt><dd>{build.inputs.generator.name} {build.inputs.generator.version}</dd>
          </dl>
        </Panel>
      </div>
      <BuildLog build={build} />
    </Page>
  )
}

function BuildLog(props: { build: Build }) {
  const [log, setLog] = useState<string | undefined>()
  const [tick, setTick] = useState(0)
  const load = useAction()
  // The log grows while the build runs: read again every two seconds then, and once more at the end.
  usePolling(isActive(props.build), 2000, () => setTick((n) => n + 1))
  useEffect(() => {
    void load.run(async () => setLog(await api.text(`/v1/builds/${props.build.id}/logs`, undefined, 'text/plain')))
  }, [tick, props.build.status])
  return (
    <Panel title="Log" id="build-log">
      <ProblemNotice error={load.error} />
      {log === undefined ? <Loading /> : log === '' ? <p class="muted">Nothing logged yet.</p> : <pre class="log" tabIndex={0} role="region" aria-label="Build log">{log}</pre>}
    </Panel>
  )
}
