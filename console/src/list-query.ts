import { useLocation } from 'preact-iso'
import { withQuery } from './api'

/**
 * A list's page, search text and order, kept in the URL: a list is linkable, reload keeps it, and
 * back/forward step through pages. Typing in the search box replaces the entry instead of adding one
 * per keystroke.
 */
export function useListQuery() {
  const { path, query, route } = useLocation()
  const page = Math.max(1, Number.parseInt(query.page ?? '1', 10) || 1)
  const q = query.q ?? ''
  const sort = query.sort ?? ''
  const go = (next: { page?: number; q?: string; sort?: string }, replace: boolean) => {
    const merged = { q, sort, page: page > 1 ? page : undefined, ...next }
    route(withQuery(path, { q: merged.q, sort: merged.sort, page: merged.page && merged.page > 1 ? merged.page : undefined }), replace)
  }
  return {
    page,
    q,
    sort,
    setPage: (n: number) => go({ page: n }, false),
    setSearch: (text: string) => go({ q: text, page: 1 }, true),
    setSort: (order: string) => go({ sort: order, page: 1 }, false),
  }
}
