/**
 * Issue 14, finding 1: a key revoked by the CLI while the server runs is dead on the server's very next
 * request, and no later write of the server (its last-use bookkeeping) brings it back. Likewise, what
 * the CLI writes while the server runs (an import, a restore) is what the server serves next.
 */
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { stringify } from 'yaml'
import { petstore } from '../helpers.js'
import { api, cliJson, startServer } from '../process/spawn.js'
import { tempDir } from '../temp.js'

/** The server writes `last_used_at` at most this long after a key's first use (organizations.ts). */
const LAST_USE_FLUSH_MS = 5_000

t.test('a key revoked by the CLI is refused at once, whatever the server wrote to it before or after', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const s = ['--storage', storage]
  const org = cliJson([...s, 'org', 'create', 'acme'])
  const seen = cliJson([...s, 'key', 'create', '--org', 'acme', '--name', 'used a while ago'])
  const fresh = cliJson([...s, 'key', 'create', '--org', 'acme', '--name', 'used just now'])
  const server = await startServer(storage)
  t.teardown(() => server.stop('SIGKILL'))
  const status = async (key: string) => (await api(server.url, key, 'GET', '/v1/apis')).status
  const listed = (id: string) => cliJson([...s, 'key', 'list', '--org', 'acme']).keys.find((k: { id: string }) => k.id === id)

  // The server has used the first key and written its last use to the index.
  t.equal(await status(seen.api_key), 200)
  await sleep(LAST_USE_FLUSH_MS + 1_500)
  t.match(listed(seen.id), { last_used_at: /Z$/, revoked_at: null })
  // The second key is used now: the server writes its last use a few seconds from now.
  t.equal(await status(fresh.api_key), 200)

  t.match(cliJson([...s, 'key', 'revoke', seen.id]), { key: { id: seen.id, revoked_at: /Z$/ } })
  t.match(cliJson([...s, 'key', 'revoke', fresh.id]), { key: { id: fresh.id, revoked_at: /Z$/ } })
  t.equal(await status(seen.api_key), 401, 'a key the server wrote to before: refused on the very next request')
  t.equal(await status(fresh.api_key), 401, 'a key the server is about to write to: refused on the very next request')

  await sleep(LAST_USE_FLUSH_MS + 1_500)
  t.match(listed(fresh.id), { last_used_at: /Z$/, revoked_at: /Z$/ }, 'the server recorded the last use and kept the revocation')
  for (const key of [seen, fresh]) {
    const after = await api(server.url, key.api_key, 'GET', '/v1/apis')
    t.equal(after.status, 401, 'still refused after the server wrote to the key')
    t.equal(after.headers.get('www-authenticate'), 'Bearer')
  }
  t.equal(await status(org.api_key), 200, 'the other key still works')
})

t.test('an import by the CLI while the server runs is what the server serves next', async (t) => {
  const storage = tempDir()
  const source = tempDir()
  t.teardown(() => { rmSync(storage, { recursive: true, force: true }); rmSync(source, { recursive: true, force: true }) })
  const s = ['--storage', storage]
  const org = cliJson([...s, 'org', 'create', 'acme'])
  const server = await startServer(storage)
  t.teardown(() => server.stop('SIGKILL'))

  const created = await api(server.url, org.api_key, 'POST', '/v1/apis', { name: 'petstore' })
  t.equal(created.status, 201)
  const id = created.json().data.id
  t.equal((await api(server.url, org.api_key, 'POST', `/v1/apis/${id}/spec`, { document: petstore() })).status, 201)
  for (let i = 0; i < 3; i++) t.equal((await api(server.url, org.api_key, 'GET', `/v1/apis/${id}`)).json().data.current.number, 1)

  writeFileSync(join(source, 'petstore.yaml'), stringify(petstore('2.0.0')))
  const imported = cliJson([...s, 'import', source, '--org', 'acme'])
  t.match(imported, { new_versions: 1, failed: 0 })

  const served = (await api(server.url, org.api_key, 'GET', `/v1/apis/${id}`)).json().data
  t.match(served.current, { number: 2, version: '2.0.0' }, 'the resource shows the version the CLI wrote')
  const spec = await api(server.url, org.api_key, 'GET', `/v1/apis/${id}/spec`)
  t.equal(spec.json().info.version, '2.0.0', 'and serves its document')
})
