import { rmSync } from 'node:fs'
import t from 'tap'
import { petstore } from '../helpers.js'
import { tempDir } from '../temp.js'
import { api, startServer } from './spawn.js'

t.test('a real server process: first start, uploads over HTTP, restart, graceful stop', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const bootstrap = `sk_${'b'.repeat(40)}`
  const server = await startServer(storage, { REGISTRY_BOOTSTRAP_KEY: bootstrap })
  t.teardown(() => server.stop('SIGKILL'))
  t.equal(server.key, bootstrap, 'first start prints the bootstrap key on its own line')
  t.notMatch(server.output().replace(`API key: ${bootstrap}`, ''), new RegExp(bootstrap), 'the key is printed once only')

  const health = await fetch(`${server.url}/healthz`)
  t.equal(health.status, 200)
  t.equal(health.headers.get('x-content-type-options'), 'nosniff')
  t.equal(health.headers.get('x-powered-by'), null)
  t.ok(health.headers.get('x-request-id'))
  const echoed = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': 'trace-123' } })
  t.equal(echoed.headers.get('x-request-id'), 'trace-123')

  const created = await api(server.url, bootstrap, 'POST', '/v1/apis', { name: 'Petstore', visibility: 'public' })
  t.equal(created.status, 201)
  const id = created.json().data.id
  const up = await api(server.url, bootstrap, 'POST', `/v1/apis/${id}/spec`, { document: petstore() })
  t.equal(up.status, 201)
  const again = await api(server.url, bootstrap, 'POST', `/v1/apis/${id}/spec`, { document: petstore() })
  t.equal(again.status, 200)
  const latest = await fetch(`${server.url}/@default/apis/petstore/latest`)
  t.equal(latest.status, 200)
  t.equal(((await latest.json()) as any).info.title, 'Petstore')
  const docs = await fetch(`${server.url}/openapi.json`)
  const description = (await docs.json()) as any
  t.ok(description.paths['/v1/apis/{api}/spec'], 'the service describes itself')
  const page = await fetch(`${server.url}/docs/`)
  t.equal(page.status, 200)
  t.notMatch(await page.text(), /https?:\/\/(?!127\.0\.0\.1)[a-z]/i, 'the reference page loads nothing from elsewhere')

  t.equal(await server.stop('SIGTERM'), 0, 'SIGTERM exits 0')

  const restarted = await startServer(storage)
  t.teardown(() => restarted.stop('SIGKILL'))
  t.equal(restarted.key, undefined, 'no new key on a storage that has one')
  const versions = await api(restarted.url, bootstrap, 'GET', `/v1/apis/${id}/versions`)
  t.equal(versions.json().total, 1, 'data survives a restart')
  t.equal(await restarted.stop('SIGINT'), 0, 'SIGINT exits 0')
})
