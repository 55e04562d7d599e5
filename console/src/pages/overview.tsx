/** The organization at a glance: counts, the latest versions, what failed. */
import { Badge, Empty, Loading, Page, Panel, ProblemNotice, shortChecksum, Time } from '../components'
import { useFetch } from '../hooks'
import { useSession } from '../session'
import { TARGET_LABELS, type Build, type Connection, type Kind, type Version } from '../types'
import { BuildStatus } from './builds'

interface Overview {
  counts: Record<'apis' | 'schemas' | 'rulesets' | 'sites' | 'sdks' | 'builds', number>
  recent_versions: { kind: Kind; resource: { id: string; name: string; slug: string }; version: Version }[]
  failed_syncs: { api: { id: string; name: string; slug: string }; repository: Connection }[]
  failed_builds: Build[]
}

const PLURAL: Record<Kind, string> = { api: 'apis', schema: 'schemas', ruleset: 'rulesets' }

const CARDS: { key: keyof Overview['counts']; label: string; href: string }[] = [
  { key: 'apis', label: 'APIs', href: '/console/apis' },
  { key: 'schemas', label: 'Schemas', href: '/console/schemas' },
  { key: 'rulesets', label: 'Rulesets', href: '/console/rulesets' },
  { key: 'sites', label: 'Sites', href: '/console/sites' },
  { key: 'sdks', label: 'SDKs', href: '/console/sdks' },
  { key: 'builds', label: 'Builds', href: '/console/builds' },
]

export function Overview() {
  const { session } = useSession()
  const overview = useFetch<{ data: Overview }>('/v1/overview')
  const data = overview.data?.data
  return (
    <Page title="Overview" lead={`${session.organization.name}: its registry, documentation and SDKs.`}>
      <ProblemNotice error={overview.error} />
      {data === undefined ? <Loading /> : (
        <>
          <nav class="cards" aria-label="Counts">
            {CARDS.map((card) => (
              <a class="card" href={card.href} key={card.key}>
                <div class="count">{data.counts[card.key].toLocaleString()}</div>
                <div class="label">{card.label}</div>
              </a>
            ))}
          </nav>
          <div class="grid-2">
            <Panel title="Latest versions" flush>
              {data.recent_versions.length === 0 ? <Empty title="No versions yet"><p><a href="/console/apis/new">Create an API</a> and upload its document.</p></Empty> : (
                <div class="table-wrap">
                  <table class="list">
                    <caption class="visually-hidden">Latest versions, newest first</caption>
                    <thead><tr><th scope="col">Resource</th><th scope="col">Version</th><th scope="col">When</th></tr></thead>
                    <tbody>
                      {data.recent_versions.map(({ kind, resource, version }) => (
                        <tr key={version.id}>
                          <td><a class="cell-title" href={`/console/${PLURAL[kind]}/${resource.slug}/versions`}>{resource.name}</a><div class="cell-sub">{kind}</div></td>
                          <td>#{version.number} <Badge>{version.source}</Badge><div class="cell-sub mono">{version.title ? `${version.title} ${version.version ?? ''}` : shortChecksum(version.checksum)}</div></td>
                          <td class="nowrap"><Time at={version.created_at} /></td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </Panel>
            <div>
              <Panel title="Failed repository syncs" flush>
                {data.failed_syncs.length === 0 ? <Empty title="None">Every connected repository synced.</Empty> : (
                  <ul class="timeline">
                    {data.failed_syncs.map(({ api, repository }) => (
                      <li key={api.id}>
                        <Badge kind={repository.last_sync?.status}>{repository.last_sync?.status}</Badge>
                        <div><a class="cell-title" href={`/console/apis/${api.slug}/repository`}>{api.name}</a><div class="cell-sub">{repository.last_sync?.error?.detail}</div></div>
                        <Time at={repository.last_sync?.finished_at} />
                      </li>
                    ))}
                  </ul>
                )}
              </Panel>
              <Panel title="Failed builds" flush>
                {data.failed_builds.length === 0 ? <Empty title="None">No recent build failed.</Empty> : (
                  <ul class="timeline">
                    {data.failed_builds.map((build) => (
                      <li key={build.id}>
                        <BuildStatus build={build} />
                        <div><a class="cell-title" href={`/console/builds/${build.id}`}>{TARGET_LABELS[build.target]} #{build.number}</a><div class="cell-sub">{build.error}</div></div>
                        <Time at={build.finished_at} />
                      </li>
                    ))}
                  </ul>
                )}
              </Panel>
            </div>
          </div>
        </>
      )}
    </Page>
  )
}
