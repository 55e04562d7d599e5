/**
 * The build queue in a real server process (`node dist/server.js`): `kill -9` while a build runs,
 * twice. The first restart runs it again (attempt 2); after the second it is failed with a clear
 * error, and a build queued meanwhile still runs.
 */
import { readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import t from 'tap'
import { petstore } from '../helpers.js'
import { OUTBOUND_LOOPBACK_ENV, startServer } from '../process/spawn.js'
import { buildFixture } from './support.js'

const KEY = 'sk_sdkprocesstestkey0000000000000000000000'

async function api(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${base}${path}`, {
    method, headers: { authorization: `Bearer ${KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
  return text ? JSON.parse(text) : undefined
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}

t.test('kill -9 during a build: retried once after the restart, failed after the second', async (t) => {
  let requests = 0
  const { petsUrl, stuckUrl, storage, closeStuckConnections } = await buildFixture(t, () => { requests += 1 })

  let server = await startServer(storage, { REGISTRY_BOOTSTRAP_KEY: KEY, ...OUTBOUND_LOOPBACK_ENV })
  t.teardown(() => server.stop('SIGKILL'))
  const apiId = (await api(server.url, 'POST', '/v1/apis', { name: 'Petstore' })).data.id
  await api(server.url, 'POST', `/v1/apis/${apiId}/spec`, { document: petstore() })
  const stuckSdk = (await api(server.url, 'POST', '/v1/sdks', { name: 'Stuck', targets: ['php'], apis: [{ api_id: apiId }] })).data
  const goodSdk = (await api(server.url, 'POST', '/v1/sdks', { name: 'Good', targets: ['php'], apis: [{ api_id: apiId }] })).data
  await api(server.url, 'PUT', `/v1/sdks/${stuckSdk.id}/targets/php/repository`, { provider: 'git', url: stuckUrl })
  await api(server.url, 'PUT', `/v1/sdks/${goodSdk.id}/targets/php/repository`, { provider: 'git', url: petsUrl })

  const [build] = (await api(server.url, 'POST', `/v1/sdks/${stuckSdk.id}/builds`)).data
  const [later] = (await api(server.url, 'POST', `/v1/sdks/${goodSdk.id}/builds`)).data
  const status = async (id: string) => (await api(server.url, 'GET', `/v1/builds/${id}`)).data

  const killed: number[] = []
  for (const attempt of [1, 2]) {
    await until(`attempt ${attempt} to reach the git server`, async () => requests >= attempt)
    t.match(await status(build.id), { status: 'running', attempts: attempt })
    killed.push(server.child.pid!)
    await server.stop('SIGKILL')
    closeStuckConnections()
    server = await startServer(storage, { REGISTRY_BOOTSTRAP_KEY: KEY, ...OUTBOUND_LOOPBACK_ENV })
  }
  await until('the build to fail', async () => (await status(build.id)).status === 'failed')
  t.match(await status(build.id), { status: 'failed', attempts: 2, error: /stopped while this build was running, 2 times; it is not retried again/ })
  await until('the later build to finish', async () => ['succeeded', 'failed'].includes((await status(later.id)).status))
  t.match(await status(later.id), { status: 'succeeded', output: { branch: 'registry/good-php-1' } })
  t.equal(await server.stop('SIGTERM'), 0)
  const left = readdirSync(tmpdir()).filter((name) => killed.some((pid) => name.startsWith(`registry-build-${pid}-`)))
  t.same(left, [], 'the work directories of the killed processes were removed at the restarts')
})
