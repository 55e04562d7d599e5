/**
 * Builds delivered to a real git server on loopback (git http-backend, with auth), and pull/merge
 * requests opened against stand-ins for GitHub's and GitLab's REST APIs.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { startGitHttpServer } from '../support/git-http-server.js'
import { OUTBOUND_LOOPBACK, json, petstore, startTestServer, tempDir } from '../helpers.js'
import { createApi, createSdk, filesOf, git, seed, startProviderStandIn, waitForBuild } from './support.js'

const run = promisify(execFile)
const TOKEN = 'git-token-123'

t.test('git provider: the branch is pushed with the generated tree, then unchanged once merged', async (t) => {
  const root = tempDir('sdk-git-')
  const server = await startGitHttpServer(root, { auth: { password: TOKEN } })
  const s = await startTestServer({ outboundHosts: OUTBOUND_LOOPBACK })
  t.teardown(async () => { await s.close(); await server.close(); rmSync(root, { recursive: true, force: true }) })
  server.createBare('acme/pets-php')
  const authed = `http://x:${TOKEN}@${server.url.slice('http://'.length)}/acme/pets-php.git`
  await seed(authed)

  const api = await createApi(s)
  const sdk = await createSdk(s, [api], ['php'])
  const put = await s.call({ method: 'PUT', url: `/v1/sdks/${sdk.id}/targets/php/repository`, payload: { provider: 'git', url: `${server.url}/acme/pets-php.git`, token: TOKEN } })
  t.equal(put.statusCode, 201, put.body)

  const queued = await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })
  t.equal(queued.statusCode, 202, queued.body)
  const [build] = json(queued).data
  t.match(build, { sdk_id: sdk.id, target: 'php', number: 1, status: 'queued', output: null, error: null, repository: { provider: 'git', base_branch: 'main' } })
  t.match(build.inputs, { apis: [{ api_id: api, checksum: /^sha256:/ }], config_checksum: /^sha256:/, generator: { name: 'registry-php' } })

  const done = await waitForBuild(s, build.id)
  t.equal(done.status, 'succeeded', done.error)
  t.match(done.output, { branch: 'registry/pets-sdk-php-1', commit: /^[0-9a-f]{40}$/, pull_request: null, reason: 'git_provider' })
  t.ok(done.output.files.includes('composer.json'))
  t.same(done.output.files, [...done.output.files].sort())
  t.ok(done.started_at && done.finished_at)

  const pushed = await filesOf(authed, 'registry/pets-sdk-php-1')
  t.teardown(pushed.cleanup)
  t.same(pushed.files, done.output.files, 'the branch holds exactly the generated files (the base tree is replaced)')
  t.match(JSON.parse(await pushed.read('composer.json')), { name: 'registry/pets-sdk', autoload: { 'psr-4': { 'PetsSdk\\': 'src/' } } })

  const log = await s.call({ method: 'GET', url: `/v1/builds/${build.id}/logs` })
  t.equal(log.statusCode, 200)
  t.match(log.headers['content-type'], /text\/plain/)
  t.match(log.body, /pushed registry\/pets-sdk-php-1/)
  t.notMatch(log.body, new RegExp(TOKEN))

  // Merge the branch into main: the next build generates the same tree and delivers nothing.
  await git(['--git-dir', join(root, 'acme/pets-php.git'), 'update-ref', 'refs/heads/main', done.output.commit])
  const [second] = json(await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })).data
  t.equal(second.number, 2)
  const unchanged = await waitForBuild(s, second.id)
  t.equal(unchanged.status, 'succeeded', unchanged.error)
  t.match(unchanged.output, { branch: null, commit: null, pull_request: null, reason: 'unchanged' })
  const heads = await git(['ls-remote', '--heads', authed])
  t.notMatch(heads, /pets-sdk-php-2/, 'no branch was pushed')

  // Same inputs, byte-identical artifact.
  const a1 = await s.call({ method: 'GET', url: `/v1/builds/${build.id}/artifact` })
  const a2 = await s.call({ method: 'GET', url: `/v1/builds/${second.id}/artifact` })
  t.equal(a1.statusCode, 200)
  t.equal(a1.headers['content-type'], 'application/gzip')
  t.match(a1.headers['content-disposition'], /pets-sdk-php-1\.tar\.gz/)
  t.ok(a1.rawPayload.equals(a2.rawPayload), 'byte-identical artifacts')
  const dir = mkdtempSync(join(tmpdir(), 'sdk-artifact-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'a.tar.gz'), a1.rawPayload)
  const listing = (await run('tar', ['-tzf', join(dir, 'a.tar.gz')])).stdout.split('\n').filter(Boolean)
  t.same(listing, done.output.files, 'the artifact holds the generated files, sorted')
  const verbose = (await run('tar', ['-tvzf', join(dir, 'a.tar.gz')])).stdout
  t.match(verbose, /1970-01-01/, 'fixed mtime')
})

t.test('git provider: wrong token fails the build with a clear error; an empty repository gets a first commit', async (t) => {
  const root = tempDir('sdk-git-')
  const server = await startGitHttpServer(root, { auth: { password: TOKEN } })
  const s = await startTestServer({ outboundHosts: OUTBOUND_LOOPBACK })
  t.teardown(async () => { await s.close(); await server.close(); rmSync(root, { recursive: true, force: true }) })
  server.createBare('empty')
  const api = await createApi(s)
  const sdk = await createSdk(s, [api], ['php'])
  const repo = `/v1/sdks/${sdk.id}/targets/php/repository`
  await s.call({ method: 'PUT', url: repo, payload: { provider: 'git', url: `${server.url}/empty.git`, token: 'wrong' } })
  const [bad] = json(await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })).data
  const failed = await waitForBuild(s, bad.id)
  t.equal(failed.status, 'failed')
  t.match(failed.error, /^could not deliver to http:\/\/127\.0\.0\.1:\d+\/empty\.git: unreachable/)
  t.notMatch(failed.error, /wrong/)
  t.match(s.serverLog, [{ message: 'SDK build: the delivery failed', reason: /refused the token \(HTTP 401 or 403\)/ }], "the operator's log says why")
  t.ok((await s.call({ method: 'GET', url: `/v1/builds/${bad.id}/artifact` })).statusCode === 200, 'the files were generated before delivery failed')

  await s.call({ method: 'PUT', url: repo, payload: { provider: 'git', url: `${server.url}/empty.git`, token: TOKEN } })
  const [good] = json(await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })).data
  const done = await waitForBuild(s, good.id)
  t.equal(done.status, 'succeeded', done.error)
  t.equal(done.output.branch, 'registry/pets-sdk-php-2')
})

/**
 * A registry, a git server (with auth) holding `acme/pets-ts` with a first commit on `trunk`, and a
 * stand-in for `provider`'s REST API; a TypeScript SDK of one API delivered to that repository, pull
 * requests through the stand-in. `repositoryUrl` carries the token, for reading what was pushed.
 */
async function pullRequestDelivery(t: Test, provider: 'github' | 'gitlab') {
  const root = tempDir('sdk-git-')
  const server = await startGitHttpServer(root, { auth: { password: TOKEN } })
  const standIn = await startProviderStandIn(provider)
  const s = await startTestServer({ outboundHosts: OUTBOUND_LOOPBACK })
  t.teardown(async () => { await s.close(); await server.close(); await standIn.close(); rmSync(root, { recursive: true, force: true }) })
  server.createBare('acme/pets-ts', 'trunk')
  const repositoryUrl = `http://x:${TOKEN}@${server.url.slice('http://'.length)}/acme/pets-ts.git`
  await seed(repositoryUrl, 'trunk')

  const api = await createApi(s, 'Petstore', petstore('2.0.0'))
  const sdk = await createSdk(s, [api], ['typescript'])
  const apiUrl = provider === 'github' ? standIn.url : `${standIn.url}/api/v4`
  const put = await s.call({
    method: 'PUT', url: `/v1/sdks/${sdk.id}/targets/typescript/repository`,
    payload: { provider, url: `${server.url}/acme/pets-ts.git`, base_branch: 'trunk', api_url: apiUrl, token: TOKEN },
  })
  t.equal(put.statusCode, 201, put.body)
  return { s, standIn, sdk, repositoryUrl }
}

for (const provider of ['github', 'gitlab'] as const) {
  t.test(`${provider}: a pull request is opened through the provider's REST API`, async (t) => {
    const { s, standIn, sdk, repositoryUrl } = await pullRequestDelivery(t, provider)
    const [build] = json(await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })).data
    const done = await waitForBuild(s, build.id)
    t.equal(done.status, 'succeeded', done.error)
    t.equal(done.inputs.generator.name, '@hey-api/openapi-ts')

    t.same(standIn.seen.map((r) => r.method), ['GET', 'POST'], 'the open one looked up by branch (none), then one opened')
    const [lookup, request] = standIn.seen
    if (provider === 'github') {
      t.equal(lookup.url, '/repos/acme/pets-ts/pulls?head=acme%3Aregistry%2Fpets-sdk-typescript-1&state=open')
      t.equal(lookup.headers.authorization, `Bearer ${TOKEN}`)
    } else {
      t.equal(lookup.url, '/api/v4/projects/acme%2Fpets-ts/merge_requests?source_branch=registry%2Fpets-sdk-typescript-1&state=opened')
      t.equal(lookup.headers['private-token'], TOKEN)
    }
    t.equal(request.method, 'POST')
    t.equal(request.headers['content-type'], 'application/json')
    const title = 'Pets SDK: typescript SDK, build 1'
    if (provider === 'github') {
      t.equal(request.url, '/repos/acme/pets-ts/pulls')
      t.equal(request.headers.authorization, `Bearer ${TOKEN}`)
      t.equal(request.headers.accept, 'application/vnd.github+json')
      t.equal(request.headers['x-github-api-version'], '2022-11-28')
      t.same(Object.keys(request.body).sort(), ['base', 'body', 'head', 'title'])
      t.match(request.body, { title, head: 'registry/pets-sdk-typescript-1', base: 'trunk', body: /Generated by the API registry/ })
      t.same(done.output.pull_request, { number: 42, url: 'https://github.example/acme/pets/pull/42', branch: 'registry/pets-sdk-typescript-1', base: 'trunk', title })
    } else {
      t.equal(request.url, '/api/v4/projects/acme%2Fpets-ts/merge_requests')
      t.equal(request.headers['private-token'], TOKEN)
      t.same(Object.keys(request.body).sort(), ['description', 'source_branch', 'target_branch', 'title'])
      t.match(request.body, { title, source_branch: 'registry/pets-sdk-typescript-1', target_branch: 'trunk', description: /Generated by the API registry/ })
      t.same(done.output.pull_request, { number: 42, url: 'https://gitlab.example/acme/pets/-/merge_requests/42', branch: 'registry/pets-sdk-typescript-1', base: 'trunk', title })
    }
    t.equal(done.output.reason, null)
    const pushed = await filesOf(repositoryUrl, 'registry/pets-sdk-typescript-1')
    t.teardown(pushed.cleanup)
    t.ok(pushed.files.includes('src/petstore/sdk.gen.ts') && pushed.files.includes('package.json'), 'the generated TypeScript is on the branch')
    t.notOk(pushed.files.includes('README.md') && (await pushed.read('README.md')).startsWith('# output repository'), 'the base tree is replaced')
  })
}

for (const provider of ['github', 'gitlab'] as const) {
  t.test(`${provider}: a build retried after its pull request was opened reuses it (one POST, the same URL)`, async (t) => {
    const { s, standIn, sdk } = await pullRequestDelivery(t, provider)
    const [queued] = json(await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })).data
    const first = await waitForBuild(s, queued.id)
    t.equal(first.status, 'succeeded', first.error)
    const opened = first.output.pull_request.url

    // The replica died after opening the pull request and before recording it: the build is found
    // running by the next start of the runner, which runs it again (attempt 2).
    await s.registry.builds.stop()
    await s.registry.storage.transaction(async ({ sdks }) => {
      await sdks.putBuild({ ...(await sdks.build(queued.id))!, status: 'running', output: null, finished_at: null, lease: { holder: 'dead-replica', until: '2000-01-01T00:00:00.000Z' } })
    })
    s.registry.builds.start()
    const retried = await waitForBuild(s, queued.id)
    t.equal(retried.status, 'succeeded', retried.error)
    t.equal(retried.attempts, 2, 'run again')
    t.equal(retried.output.pull_request.url, opened, 'the same pull request')
    t.equal(retried.output.pull_request.number, first.output.pull_request.number)
    t.same(standIn.seen.map((r) => r.method), ['GET', 'POST', 'GET'], 'one POST: the retry found the open one by its branch')
    const logs = (await s.call({ method: 'GET', url: `/v1/builds/${queued.id}/logs` })).body
    t.match(logs, /queued again/)
  })
}
