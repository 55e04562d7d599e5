import { rmSync } from 'node:fs'
import t from 'tap'
import { OUTBOUND_LOOPBACK, json, petstore, tempDir } from '../helpers.js'
import { startGitHttpServer } from '../support/git-http-server.js'
import { git, startMirrorServer } from './helpers.js'

t.test('push mirror: set with a token, pushed, failures shown, the token never returned', async (t) => {
  const root = tempDir('mirror-remote-')
  const remoteServer = await startGitHttpServer(root, { auth: { password: 'remote-secret-token' } })
  const s = await startMirrorServer({ outboundHosts: OUTBOUND_LOOPBACK })
  t.teardown(async () => {
    await s.close()
    await remoteServer.close()
    rmSync(root, { recursive: true, force: true })
  })
  const bare = remoteServer.createBare('acme-mirror')
  const url = `${remoteServer.url}/acme-mirror.git`
  const api = await s.createApi('Petstore')
  await s.upload(api.id, petstore('1.0.0'))
  await s.settle()

  const empty = json(await s.call({ method: 'GET', url: '/v1/mirror' })).data
  t.match(empty, { url: null, token_set: false, last_pushed_commit: null, head: /^[0-9a-f]{40}$/ })

  // A wrong token: the push fails, and the failure is shown.
  const wrong = await s.call({ method: 'PUT', url: '/v1/mirror', payload: { url, token: 'wrong-token' } })
  t.equal(wrong.statusCode, 200)
  await s.settle()
  const failed = json(await s.call({ method: 'GET', url: '/v1/mirror' })).data
  t.match(failed, { url, token_set: true, last_pushed_commit: null, last_error: /\S/, last_error_at: /^\d{4}-/ })
  t.notMatch(JSON.stringify(failed), 'wrong-token', 'the token is never returned')

  // The right token: pushed at once.
  const set = await s.call({ method: 'PUT', url: '/v1/mirror', payload: { url, token: 'remote-secret-token' } })
  t.notMatch(set.body, 'remote-secret-token')
  await s.settle()
  let status = json(await s.call({ method: 'GET', url: '/v1/mirror' })).data
  t.match(status, { url, token_set: true, last_error: null, last_pushed_at: /^\d{4}-/ })
  t.equal(status.last_pushed_commit, status.head, 'the head was pushed')
  t.equal((await git(['--git-dir', bare, 'rev-parse', 'main'])).trim(), status.head, 'the remote has it')

  // New versions are pushed as they are committed.
  await s.upload(api.id, petstore('2.0.0'))
  await s.settle()
  status = json(await s.call({ method: 'GET', url: '/v1/mirror' })).data
  t.equal((await git(['--git-dir', bare, 'rev-parse', 'main'])).trim(), status.head)
  t.equal(status.last_pushed_commit, status.head)
  await git(['--git-dir', bare, 'fsck', '--strict', '--no-dangling'])
  const pushes = remoteServer.requests.filter((r) => r.url.includes('git-receive-pack') && r.method === 'POST').length
  t.ok(pushes >= 2, 'each new head is one push')

  // Bad input: 400, nothing changed.
  for (const payload of [
    { url: 'http://user:pass@example.com/x.git' }, { url: 'file:///etc' }, { url: 'not a url' }, { url, token: 'x', extra: 1 }, {},
  ]) {
    const response = await s.call({ method: 'PUT', url: '/v1/mirror', payload })
    t.equal(response.statusCode, 400, JSON.stringify(payload))
    t.equal(json(response).code, 'invalid_request')
  }
  t.equal(json(await s.call({ method: 'GET', url: '/v1/mirror' })).data.url, url)

  t.equal((await s.call({ method: 'DELETE', url: '/v1/mirror' })).statusCode, 204)
  t.match(json(await s.call({ method: 'GET', url: '/v1/mirror' })).data, { url: null, token_set: false })
  t.equal((await s.call({ method: 'GET', url: '/v1/mirror', key: null })).statusCode, 401)
})

t.test('a failed push is retried with backoff until the remote accepts it', async (t) => {
  const root = tempDir('mirror-remote-')
  const remoteServer = await startGitHttpServer(root)
  const s = await startMirrorServer({ outboundHosts: OUTBOUND_LOOPBACK })
  t.teardown(async () => {
    await s.close()
    await remoteServer.close()
    rmSync(root, { recursive: true, force: true })
  })
  const api = await s.createApi('Petstore')
  await s.upload(api.id, petstore('1.0.0'))
  await s.settle()
  // The remote repository does not exist yet: the first push fails.
  await s.call({ method: 'PUT', url: '/v1/mirror', payload: { url: `${remoteServer.url}/later.git` } })
  await s.settle()
  t.match(json(await s.call({ method: 'GET', url: '/v1/mirror' })).data, { last_pushed_commit: null, last_error: /\S/ })
  const bare = remoteServer.createBare('later')
  let status = json(await s.call({ method: 'GET', url: '/v1/mirror' })).data
  for (let i = 0; i < 100 && status.last_pushed_commit === null; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    status = json(await s.call({ method: 'GET', url: '/v1/mirror' })).data
  }
  t.equal(status.last_pushed_commit, status.head, 'pushed by a retry, nobody asked again')
  t.equal(status.last_error, null)
  t.equal((await git(['--git-dir', bare, 'rev-parse', 'main'])).trim(), status.head)
})
