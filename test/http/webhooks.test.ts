/**
 * Repository webhooks (issue 5, items 7 and 9): GitHub and GitLab push deliveries, shaped as their
 * documentation shows them, against a real git server on loopback. Signature checks, redelivery,
 * ping, pushes to other branches, and syncs running off the request path.
 */
import { createHmac, randomUUID } from 'node:crypto'
import t from 'tap'
import { stringify } from 'yaml'
import { json, petstore, type TestServer } from '../helpers.js'
import type { GitHttpServer } from '../support/git-http-server.js'
import { startGitFixture, type GitFixture } from '../support/git-fixture.js'
import { eventually } from '../support/git-repos.js'

let server: GitHttpServer
let s: TestServer
let repository: GitFixture['repository']

t.before(async () => {
  ({ server, s, repository } = await startGitFixture(t))
})

const SECRET = 'It’s a Secret to Everybody'

let names = 0
/** A repository with a petstore at openapi.yaml, and an API connected to it and synced once. */
async function connected(provider: 'github' | 'gitlab', options: { branch?: string; secret?: string | null } = {}) {
  const repo = await repository(`hooked-${++names}`)
  await repo.commit({ 'openapi.yaml': stringify(petstore('1.0.0')) })
  const created = await s.call({ method: 'POST', url: '/v1/apis', payload: { name: `Hooked ${names}` } })
  const api: string = json(created).data.id
  const secret = options.secret === undefined ? SECRET : options.secret
  const put = await s.call({
    method: 'PUT', url: `/v1/apis/${api}/repository`,
    payload: { provider, url: repo.url, branch: options.branch ?? 'main', path: 'openapi.yaml', webhook_secret: secret },
  })
  if (put.statusCode !== 201) throw new Error(put.body)
  const first = await s.call({ method: 'POST', url: `/v1/apis/${api}/sync` })
  if (first.statusCode !== 201) throw new Error(first.body)
  return { repo, api }
}

/** A GitHub push event body (https://docs.github.com/webhooks/webhook-events-and-payloads#push). */
function githubPush(repoUrl: string, ref: string, before: string, after: string) {
  const html = repoUrl.replace(/\.git$/, '')
  return {
    ref, before, after, created: false, deleted: false, forced: false, base_ref: null,
    compare: `${html}/compare/${before.slice(0, 12)}...${after.slice(0, 12)}`,
    commits: [{ id: after, message: 'change', timestamp: new Date().toISOString(), author: { name: 'Test', email: 'test@example.com' }, added: [], removed: [], modified: ['openapi.yaml'] }],
    head_commit: { id: after, message: 'change' },
    repository: { id: 1, name: 'petstore', full_name: 'acme/petstore', private: false, html_url: html, clone_url: repoUrl, default_branch: 'main' },
    pusher: { name: 'test', email: 'test@example.com' },
    sender: { login: 'test', id: 1 },
  }
}

/** A GitLab push hook body (https://docs.gitlab.com/user/project/integrations/webhook_events/#push-events). */
function gitlabPush(repoUrl: string, ref: string, before: string, after: string) {
  const web = repoUrl.replace(/\.git$/, '')
  return {
    object_kind: 'push', event_name: 'push', before, after, ref, ref_protected: true, checkout_sha: after,
    user_id: 4, user_name: 'Test', user_username: 'test', project_id: 15,
    project: { id: 15, name: 'petstore', web_url: web, git_http_url: repoUrl, git_ssh_url: 'git@example.com:acme/petstore.git', path_with_namespace: 'acme/petstore', default_branch: 'main' },
    commits: [{ id: after, message: 'change', title: 'change', timestamp: new Date().toISOString(), added: [], modified: ['openapi.yaml'], removed: [] }],
    total_commits_count: 1,
    repository: { name: 'petstore', url: 'git@example.com:acme/petstore.git', homepage: web, git_http_url: repoUrl },
  }
}

function signed(body: string, secret = SECRET): string {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex')
}

async function deliverGithub(event: string, payload: unknown, options: { delivery?: string; secret?: string; signature?: string } = {}) {
  const body = JSON.stringify(payload)
  return s.app.inject({
    method: 'POST', url: '/webhooks/github', payload: body,
    headers: {
      'content-type': 'application/json', 'user-agent': 'GitHub-Hookshot/abc123', 'x-github-event': event,
      'x-github-delivery': options.delivery ?? randomUUID(), 'x-github-hook-id': '1',
      'x-hub-signature-256': options.signature ?? signed(body, options.secret),
    },
  })
}

async function deliverGitlab(payload: unknown, options: { delivery?: string; token?: string; event?: string } = {}) {
  return s.app.inject({
    method: 'POST', url: '/webhooks/gitlab', payload: JSON.stringify(payload),
    headers: {
      'content-type': 'application/json', 'user-agent': 'GitLab/17.0.0', 'x-gitlab-event': options.event ?? 'Push Hook',
      'x-gitlab-event-uuid': options.delivery ?? randomUUID(), 'x-gitlab-webhook-uuid': randomUUID(), 'x-gitlab-instance': 'https://gitlab.example.com',
      'x-gitlab-token': options.token ?? SECRET,
    },
  })
}

const lastSync = async (api: string) => json(await s.call({ method: 'GET', url: `/v1/apis/${api}/repository` })).data.last_sync
const versionCount = async (api: string) => json(await s.call({ method: 'GET', url: `/v1/apis/${api}/versions` })).total
/** Waits until the API's last sync is the one of this delivery. */
const syncedBy = (api: string, delivery: string) =>
  eventually(async () => { const last = await lastSync(api); return last?.delivery === delivery ? last : undefined })

t.test('GitHub: a signed push queues a sync (202) that publishes a new version with source github', async (t) => {
  const { repo, api } = await connected('github')
  const before = await repo.commit({})
  const after = await repo.commit({ 'openapi.yaml': stringify(petstore('2.0.0')) })
  const delivery = randomUUID()
  const res = await deliverGithub('push', githubPush(repo.url, 'refs/heads/main', before, after), { delivery })
  t.equal(res.statusCode, 202, res.body)
  t.match(json(res).data, { status: 'queued', syncs: 1 })
  const last = await syncedBy(api, delivery)
  t.match(last, { status: 'succeeded', trigger: 'webhook', commit: after, version_number: 2 })
  const current = json(await s.call({ method: 'GET', url: `/v1/apis/${api}` })).data.current
  t.match(current, { number: 2, source: 'github', version: '2.0.0' })
})

t.test('GitHub: a bad signature is 401 and nothing is synced', async (t) => {
  const { repo, api } = await connected('github')
  const after = await repo.commit({ 'openapi.yaml': stringify(petstore('2.0.0')) })
  const payload = githubPush(repo.url, 'refs/heads/main', after, after)
  for (const [what, options] of [
    ['another secret', { secret: 'not the secret' }],
    ['a malformed signature', { signature: 'sha256=zz' }],
    ['a sha1 signature', { signature: 'sha1=' + createHmac('sha1', SECRET).update(JSON.stringify(payload)).digest('hex') }],
  ] as const) {
    const res = await deliverGithub('push', payload, options)
    t.equal(res.statusCode, 401, what)
    t.equal(json(res).code, 'unauthorized', what)
  }
  const unsigned = await s.app.inject({
    method: 'POST', url: '/webhooks/github', payload: JSON.stringify(payload),
    headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': randomUUID() },
  })
  t.equal(unsigned.statusCode, 401, 'no signature')
  t.match(await lastSync(api), { trigger: 'manual' }, 'the last sync is still the manual one')
  // A manual sync runs after anything queued for the API: it still finds the new commit to publish.
  const manual = await s.call({ method: 'POST', url: `/v1/apis/${api}/sync` })
  t.equal(manual.statusCode, 201, 'the webhooks synced nothing')
})

t.test('GitHub: a redelivery is not processed twice', async (t) => {
  const { repo, api } = await connected('github')
  const v2 = await repo.commit({ 'openapi.yaml': stringify(petstore('2.0.0')) })
  const delivery = randomUUID()
  const payload = githubPush(repo.url, 'refs/heads/main', v2, v2)
  t.equal((await deliverGithub('push', payload, { delivery })).statusCode, 202)
  await syncedBy(api, delivery)
  t.equal(await versionCount(api), 2)

  await repo.commit({ 'openapi.yaml': stringify(petstore('3.0.0')) })
  const again = await deliverGithub('push', payload, { delivery })
  t.equal(again.statusCode, 200)
  t.match(json(again).data, { status: 'duplicate', syncs: 0 })
  const manual = await s.call({ method: 'POST', url: `/v1/apis/${api}/sync` })
  t.equal(manual.statusCode, 201, 'version 3 was left for the manual sync: the redelivery ran nothing')
  t.equal(json(manual).data.number, 3)
})

t.test('GitHub: ping is answered, other branches and events are ignored', async (t) => {
  const { repo, api } = await connected('github')
  const ping = await deliverGithub('ping', {
    zen: 'Keep it logically awesome.', hook_id: 1, hook: { type: 'Repository', id: 1, events: ['push'], active: true },
    repository: { id: 1, full_name: 'acme/petstore', html_url: repo.url.replace(/\.git$/, ''), clone_url: repo.url },
    sender: { login: 'test' },
  })
  t.equal(ping.statusCode, 200)
  t.match(json(ping).data, { status: 'pong' })

  const head = await repo.commit({ 'openapi.yaml': stringify(petstore('9.0.0')) }, 'feature')
  const other = await deliverGithub('push', githubPush(repo.url, 'refs/heads/feature', head, head))
  t.equal(other.statusCode, 200)
  t.match(json(other).data, { status: 'ignored', syncs: 0 })
  const tag = await deliverGithub('push', githubPush(repo.url, 'refs/tags/v1', head, head))
  t.match(json(tag).data, { status: 'ignored' })
  const issue = await deliverGithub('issues', { action: 'opened', repository: { clone_url: repo.url } })
  t.match(json(issue).data, { status: 'ignored' })
  t.match(await lastSync(api), { trigger: 'manual' })
  t.equal(await versionCount(api), 1)

  const stranger = await deliverGithub('push', githubPush(`${server.url}/not-connected.git`, 'refs/heads/main', head, head))
  t.equal(stranger.statusCode, 401, 'a repository nobody connected: no secret verifies it')
})

t.test('a push syncs every API connected to that repository and branch', async (t) => {
  const { repo, api } = await connected('github')
  const second = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Same repository' } })).data.id
  await s.call({ method: 'PUT', url: `/v1/apis/${second}/repository`, payload: { provider: 'github', url: repo.url.replace(/\.git$/, ''), branch: 'main', path: 'openapi.yaml', webhook_secret: SECRET } })
  const third = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Other secret' } })).data.id
  await s.call({ method: 'PUT', url: `/v1/apis/${third}/repository`, payload: { provider: 'github', url: repo.url, branch: 'main', path: 'openapi.yaml', webhook_secret: 'another' } })
  const head = await repo.commit({ 'openapi.yaml': stringify(petstore('4.0.0')) })
  const delivery = randomUUID()
  const res = await deliverGithub('push', githubPush(repo.url, 'refs/heads/main', head, head), { delivery })
  t.equal(res.statusCode, 202)
  t.match(json(res).data, { status: 'queued', syncs: 2 }, 'the two APIs whose secret signs it')
  t.match(await syncedBy(api, delivery), { status: 'succeeded', version_number: 2 })
  t.match(await syncedBy(second, delivery), { status: 'succeeded', version_number: 1 })
  t.equal(await lastSync(third), null, 'a connection with another secret is not synced')
})

t.test('GitLab: a push hook with the token syncs with source gitlab; a wrong token is 401; redelivery once', async (t) => {
  const { repo, api } = await connected('gitlab')
  const after = await repo.commit({ 'openapi.yaml': stringify(petstore('2.0.0')) })
  const payload = gitlabPush(repo.url, 'refs/heads/main', after, after)
  const bad = await deliverGitlab(payload, { token: 'wrong' })
  t.equal(bad.statusCode, 401)
  const delivery = randomUUID()
  const res = await deliverGitlab(payload, { delivery })
  t.equal(res.statusCode, 202, res.body)
  t.match(await syncedBy(api, delivery), { status: 'succeeded', commit: after, version_number: 2 })
  t.match(json(await s.call({ method: 'GET', url: `/v1/apis/${api}` })).data.current, { source: 'gitlab', version: '2.0.0' })

  await repo.commit({ 'openapi.yaml': stringify(petstore('3.0.0')) })
  const again = await deliverGitlab(payload, { delivery })
  t.match(json(again).data, { status: 'duplicate' })
  const other = await deliverGitlab(gitlabPush(repo.url, 'refs/heads/develop', after, after))
  t.match(json(other).data, { status: 'ignored' })
  const tagPush = await deliverGitlab(payload, { event: 'Tag Push Hook' })
  t.match(json(tagPush).data, { status: 'ignored' })
  t.equal((await s.call({ method: 'POST', url: `/v1/apis/${api}/sync` })).statusCode, 201, 'version 3 was left for the manual sync')

  const github = await deliverGithub('push', githubPush(repo.url, 'refs/heads/main', after, after))
  t.equal(github.statusCode, 401, 'a GitLab connection is not reached through the GitHub webhook')
})

t.test('a connection without a webhook secret is synced by hand only', async (t) => {
  const { repo, api } = await connected('github', { secret: null })
  const head = await repo.commit({ 'openapi.yaml': stringify(petstore('2.0.0')) })
  const payload = githubPush(repo.url, 'refs/heads/main', head, head)
  t.equal((await deliverGithub('push', payload, { secret: '' })).statusCode, 401)
  t.equal(await versionCount(api), 1)
})

t.test('bad webhook requests', async (t) => {
  const missingEvent = await s.app.inject({ method: 'POST', url: '/webhooks/github', payload: '{}', headers: { 'content-type': 'application/json' } })
  t.equal(missingEvent.statusCode, 400)
  const notJson = await s.app.inject({ method: 'POST', url: '/webhooks/github', payload: 'nope', headers: { 'content-type': 'text/plain', 'x-github-event': 'push' } })
  t.equal(notJson.statusCode, 400)
  const huge = await s.app.inject({
    method: 'POST', url: '/webhooks/gitlab', payload: JSON.stringify({ padding: 'x'.repeat(6 * 1024 * 1024) }),
    headers: { 'content-type': 'application/json', 'x-gitlab-event': 'Push Hook' },
  })
  t.equal(huge.statusCode, 413)
  t.equal(json(huge).code, 'payload_too_large')
})

t.test('GitHub form-encoded deliveries are verified over the raw body', async (t) => {
  const { repo, api } = await connected('github')
  const head = await repo.commit({ 'openapi.yaml': stringify(petstore('5.0.0')) })
  const body = new URLSearchParams({ payload: JSON.stringify(githubPush(repo.url, 'refs/heads/main', head, head)) }).toString()
  const delivery = randomUUID()
  const res = await s.app.inject({
    method: 'POST', url: '/webhooks/github', payload: body,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-github-event': 'push', 'x-github-delivery': delivery, 'x-hub-signature-256': signed(body) },
  })
  t.equal(res.statusCode, 202, res.body)
  t.match(await syncedBy(api, delivery), { status: 'succeeded', version_number: 2 })
})

t.test('a webhook sync that fails is reported to the caller (the server logs it), besides last_sync', async (t) => {
  const { repo, api } = await connected('github')
  const before = await repo.commit({})
  const after = await repo.commit({ 'openapi.yaml': 'openapi: [not valid' })
  const body = JSON.stringify(githubPush(repo.url, 'refs/heads/main', before, after))
  const delivery = randomUUID()
  const headers = {
    'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': delivery, 'x-hub-signature-256': signed(body),
  }
  const failed = new Promise<{ apiId: string; delivery: string | null; error: unknown }>((resolve) => {
    void s.registry.repositorySync.receive('github', { headers, body: Buffer.from(body) }, resolve)
  })
  const failure = await failed
  t.equal(failure.apiId, api)
  t.equal(failure.delivery, delivery)
  t.match(failure.error, { code: 'invalid_document' })
  t.match(await syncedBy(api, delivery), { status: 'failed', error: { code: 'invalid_document' } })
})
