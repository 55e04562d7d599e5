/** The repository-sync store: the webhook index by repository and branch, and bounded delivery ids. */
import { rmSync } from 'node:fs'
import t from 'tap'
import { LmdbIndex } from '../../src/store/lmdb-index.js'
import { LmdbRepositoryStore, type RepositoryConnectionRecord } from '../../src/store/repository-store.js'
import { tempDir } from '../helpers.js'

function connection(apiId: string, normalized: string, branch: string): RepositoryConnectionRecord {
  const at = new Date().toISOString()
  return {
    id: `c-${apiId}`, api_id: apiId, organization_id: 'org', provider: 'github', url: `https://${normalized}.git`, normalized_url: normalized,
    branch, path: 'openapi.yaml', token: null, webhook_secret: 's', created_at: at, updated_at: at, last_sync: null,
  }
}

t.test('connections are found by repository; a replace moves the index entry; remove drops it', async (t) => {
  const dir = tempDir()
  const index = new LmdbIndex(dir)
  t.teardown(async () => { await index.close(); rmSync(dir, { recursive: true, force: true }) })
  const store = new LmdbRepositoryStore(index)
  t.match(await store.put('a', () => connection('a', 'github.com/acme/x', 'main')), { created: true, connection: { api_id: 'a' } })
  await store.put('b', () => connection('b', 'github.com/acme/x', 'dev'))
  await store.put('c', () => connection('c', 'github.com/acme/xy', 'main'))
  t.same(store.byRepository('github.com/acme/x').map((c) => c.api_id).sort(), ['a', 'b'], 'a longer url with the same prefix is another repository')
  t.match(await store.put('a', () => connection('a', 'github.com/acme/y', 'main')), { created: false })
  t.same(store.byRepository('github.com/acme/x').map((c) => c.api_id), ['b'])
  t.same(store.byRepository('github.com/acme/y').map((c) => c.api_id), ['a'])
  t.equal(await store.remove('b'), true)
  t.equal(await store.remove('b'), false)
  t.same(store.byRepository('github.com/acme/x'), [])
})

t.test('delivery ids are remembered, the oldest forgotten past the bound', async (t) => {
  const dir = tempDir()
  const index = new LmdbIndex(dir)
  t.teardown(async () => { await index.close(); rmSync(dir, { recursive: true, force: true }) })
  const store = new LmdbRepositoryStore(index, 3)
  for (let i = 1; i <= 5; i++) t.equal(await store.claimDelivery('github', `d${i}`, 1000 + i), true, `d${i} is new`)
  t.equal(await store.claimDelivery('gitlab', 'd5', 2000), true, 'ids are per provider')
  t.equal(await store.claimDelivery('github', 'd5', 3000), false, 'd5 was seen')
  t.equal(await store.claimDelivery('github', 'd1', 3001), true, 'd1 was forgotten')
})
