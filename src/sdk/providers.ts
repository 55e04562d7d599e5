/**
 * Pull requests through the providers' REST APIs. The API's base URL is the repository's `api_url`
 * when set, else derived from the repository URL: github.com → https://api.github.com, another GitHub
 * host → <origin>/api/v3 (GitHub Enterprise Server), GitLab → <origin>/api/v4.
 */
import type { PullRequest } from '../storage/records.js'
import { readText, type Fetch } from '../git/git-http.js'
import { OutboundFailure, UNREACHABLE, outboundFailure } from '../domain/outbound/outbound.js'

/** Largest answer read from a provider's API: its pull-request objects are a few KB. */
const MAX_ANSWER_BYTES = 1024 * 1024

export interface PullRequestInput {
  provider: 'github' | 'gitlab'
  url: string
  api_url: string | null
  token: string | null
  branch: string
  base: string
  title: string
  body: string
  signal: AbortSignal
  /** Replaces fetch (the registry's checks REGISTRY_OUTBOUND_HOSTS). */
  fetch?: Fetch
}

/** `owner/repo` (GitHub) or `group/sub/project` (GitLab) from a clone URL. */
export function repositoryPath(url: string): string {
  return new URL(url).pathname.replace(/^\/+|\/+$/g, '').replace(/\.git$/, '')
}

export function apiBase(provider: 'github' | 'gitlab', url: string, apiUrl: string | null): string {
  if (apiUrl) return apiUrl.replace(/\/+$/, '')
  const origin = new URL(url).origin
  if (provider === 'gitlab') return `${origin}/api/v4`
  return new URL(url).hostname === 'github.com' ? 'https://api.github.com' : `${origin}/api/v3`
}

export async function openPullRequest(input: PullRequestInput): Promise<PullRequest> {
  const base = apiBase(input.provider, input.url, input.api_url)
  const path = repositoryPath(input.url)
  if (input.provider === 'github') {
    const answer = await post(`${base}/repos/${path}/pulls`, {
      authorization: `Bearer ${input.token ?? ''}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
    }, { title: input.title, head: input.branch, base: input.base, body: input.body }, input, 'GitHub')
    return { number: Number(answer.number), url: String(answer.html_url), branch: input.branch, base: input.base, title: input.title }
  }
  const answer = await post(`${base}/projects/${encodeURIComponent(path)}/merge_requests`, {
    'private-token': input.token ?? '',
  }, { source_branch: input.branch, target_branch: input.base, title: input.title, description: input.body }, input, 'GitLab')
  return { number: Number(answer.iid), url: String(answer.web_url), branch: input.branch, base: input.base, title: input.title }
}

/**
 * POSTs to the provider's API. What it answered on a failure (a missing scope, an existing pull
 * request) is the OutboundFailure's `reason`, for the operator's log: the key holder, who may have
 * pointed `api_url` anywhere, learns only that the pull request could not be opened.
 */
async function post(
  url: string, headers: Record<string, string>, body: unknown, { signal, fetch: fetcher = fetch }: Pick<PullRequestInput, 'signal' | 'fetch'>, provider: string,
): Promise<Record<string, unknown>> {
  const opening = `could not open the pull request through ${new URL(url).origin}`
  let status: number
  let text: string
  try {
    const response = await fetcher(url, {
      method: 'POST', signal,
      headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'api-registry' },
      body: JSON.stringify(body),
    })
    status = response.status
    text = await readText(response, MAX_ANSWER_BYTES)
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error
    throw outboundFailure(opening, error)
  }
  const failure = (reason: string) => new OutboundFailure(`${opening}: ${UNREACHABLE}`, `${provider} answered ${status} to POST ${new URL(url).pathname}: ${reason}`)
  if (status < 200 || status > 299) throw failure(text)
  try {
    return JSON.parse(text) as Record<string, unknown>
  } catch {
    throw failure(`not JSON: ${text}`)
  }
}
