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

/**
 * Opens the build branch's pull request (GitHub) or merge request (GitLab), or answers the one already
 * open for it (issue 16, item 9): a build retried after its runner died between opening it and
 * recording it would otherwise be refused (GitHub answers 422 to a second pull request of one head).
 * The branch is the build's own (`registry/<sdk>-<target>-<number>`), so an open one is this build's.
 */
export async function openPullRequest(input: PullRequestInput): Promise<PullRequest> {
  const base = apiBase(input.provider, input.url, input.api_url)
  const path = repositoryPath(input.url)
  const described = (number: unknown, url: unknown): PullRequest =>
    ({ number: Number(number), url: String(url), branch: input.branch, base: input.base, title: input.title })
  if (input.provider === 'github') {
    const headers = { authorization: `Bearer ${input.token ?? ''}`, accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' }
    // `head` is `owner:branch`: the branch of the repository's own owner (the build pushed it there).
    const owner = path.split('/')[0]
    const query = new URLSearchParams({ head: `${owner}:${input.branch}`, state: 'open' })
    const [open] = await call('GET', `${base}/repos/${path}/pulls?${query}`, headers, undefined, input, 'GitHub')
    if (open) return described(open.number, open.html_url)
    const [answer] = await call('POST', `${base}/repos/${path}/pulls`, headers,
      { title: input.title, head: input.branch, base: input.base, body: input.body }, input, 'GitHub')
    return described(answer.number, answer.html_url)
  }
  const headers = { 'private-token': input.token ?? '' }
  const project = `${base}/projects/${encodeURIComponent(path)}/merge_requests`
  const [open] = await call('GET', `${project}?${new URLSearchParams({ source_branch: input.branch, state: 'opened' })}`, headers, undefined, input, 'GitLab')
  if (open) return described(open.iid, open.web_url)
  const [answer] = await call('POST', project, headers,
    { source_branch: input.branch, target_branch: input.base, title: input.title, description: input.body }, input, 'GitLab')
  return described(answer.iid, answer.web_url)
}

/**
 * A request to the provider's API: a POST answers the object made, a GET the list found (each as a
 * list of objects). What it answered on a failure (a missing scope, an existing pull request) is the
 * OutboundFailure's `reason`, for the operator's log: the key holder, who may have pointed `api_url`
 * anywhere, learns only that the pull request could not be opened.
 */
async function call(
  method: 'GET' | 'POST', url: string, headers: Record<string, string>, body: unknown,
  { signal, fetch: fetcher = fetch }: Pick<PullRequestInput, 'signal' | 'fetch'>, provider: string,
): Promise<Record<string, unknown>[]> {
  const opening = `could not open the pull request through ${new URL(url).origin}`
  let status: number
  let text: string
  try {
    const response = await fetcher(url, {
      method, signal,
      headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/json' }), 'user-agent': 'api-registry' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    status = response.status
    text = await readText(response, MAX_ANSWER_BYTES)
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error
    throw outboundFailure(opening, error)
  }
  const failure = (reason: string) => new OutboundFailure(`${opening}: ${UNREACHABLE}`, `${provider} answered ${status} to ${method} ${new URL(url).pathname}: ${reason}`)
  if (status < 200 || status > 299) throw failure(text)
  let answer: unknown
  try {
    answer = JSON.parse(text)
  } catch {
    throw failure(`not JSON: ${text}`)
  }
  const objects = method === 'GET' ? answer : [answer]
  if (!Array.isArray(objects) || !objects.every((item) => typeof item === 'object' && item !== null)) {
    throw failure(`not ${method === 'GET' ? 'a list of objects' : 'an object'}: ${text}`)
  }
  return objects as Record<string, unknown>[]
}
