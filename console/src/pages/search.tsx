/** Search across the organization's APIs, schemas and rulesets (`GET /v1/search`), ranked by the server. */
import { useLocation } from 'preact-iso'
import type { List } from '../api'
import { Badge, Empty, Loading, Page, Panel, Pager, ProblemNotice, SearchBox } from '../components'
import { useFetch } from '../hooks'
import { KINDS, resourcePath, type KindInfo } from '../kinds'
import { useListQuery } from '../list-query'
import type { Kind, Resource } from '../types'
import { useSearchText, versionLabel } from './resources'

const PAGE_SIZE = 25
const PLURAL: Record<Kind, KindInfo['plural']> = { api: 'apis', schema: 'schemas', ruleset: 'rulesets' }

interface Hit {
  kind: Kind
  score: number
  matched: string[]
  resource: Resource
}

export function SearchPage() {
  const { query } = useLocation()
  const { page, q, setPage, setSearch } = useListQuery()
  const [text, setText] = useSearchText(q, setSearch)
  const kind = query.kind
  const found = useFetch<List<Hit>>(q.trim() ? '/v1/search' : null, { q: q.trim(), kind: kind || undefined, page, limit: PAGE_SIZE })
  const hits = found.data?.data ?? []
  return (
    <Page title="Search" lead="APIs, schemas and rulesets by name, description, and what their current documents hold: titles, paths, operation ids, summaries and tags.">
      <Panel flush>
        <div class="toolbar">
          <SearchBox label="Search the registry" value={text} onInput={setText} />
          <span class="muted small" aria-live="polite">{found.loading ? 'Searching…' : found.data ? `${found.data.total.toLocaleString()} found` : ''}</span>
        </div>
        <ProblemNotice error={found.error} />
        {!q.trim() ? <Empty title="Type to search"><p>A word matches by its beginning, and with a typo or two.</p></Empty>
          : found.data === undefined ? <Loading label="Searching…" />
          : hits.length === 0 ? <Empty title={`Nothing matches “${q}”`} />
          : (
            <ol class="results" data-testid="search-results">
              {hits.map(({ kind: hitKind, resource, matched }) => {
                const info = KINDS[PLURAL[hitKind]]
                return (
                  <li key={resource.id}>
                    <a class="cell-title" href={resourcePath(info, resource.slug)}>{resource.name}</a> <Badge>{info.singular}</Badge>
                    <div class="cell-sub"><span class="mono">{resource.slug}</span> · {versionLabel(resource)} · found in {matched.join(', ')}</div>
                    {resource.description && <div class="cell-sub">{resource.description}</div>}
                  </li>
                )
              })}
            </ol>
          )}
        {found.data && found.data.total > 0 && <Pager page={page} limit={PAGE_SIZE} total={found.data.total} onPage={setPage} noun="results" />}
      </Panel>
    </Page>
  )
}
