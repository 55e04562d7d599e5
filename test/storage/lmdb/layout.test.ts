import { rmSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { LmdbStorage } from '../../../src/storage/lmdb/storage.js'
import { LmdbIndex } from '../../../src/store/lmdb-index.js'
import { tempDir } from '../../temp.js'
import { appendNext, organization, resource, version } from '../contract/contract.js'

t.test('a storage written by today\'s index is read and extended by the port\'s LMDB adapter, and back', async (t) => {
  const directory = tempDir()
  t.teardown(() => rmSync(directory, { recursive: true, force: true }))
  const org = organization('acme')
  const api = resource(org.id, 'Shop', { visibility: 'public' })
  const before = new LmdbIndex(join(directory, 'index'))
  await before.createOrganization(org, {
    id: `${org.id}K`, organization_id: org.id, name: null, hash: 'f'.repeat(64), created_at: org.created_at, last_used_at: null, revoked_at: null,
  })
  await before.createResource(api, 'explicit', (created) => version(created, 1))
  await before.appendVersion(api.id, (current, _v, number) => ({ version: version(current, number) }))
  const journaled = before.mirror.lastSeq()
  await before.close()

  const storage = new LmdbStorage(directory)
  t.same(await storage.read.organizations.bySlug('acme'), org)
  t.equal((await storage.read.keys.byHash('f'.repeat(64)))?.organization_id, org.id)
  t.equal((await storage.read.resources.bySlug(org.id, 'api', 'shop'))?.last_number, 2)
  t.same((await storage.read.resources.list(org.id, 'api', { offset: 0, limit: 10 }, true)).total, 1)
  t.equal((await storage.read.versions.current(api.id))?.number, 2)
  t.same((await storage.read.versions.list(api.id, { offset: 0, limit: 10 })).items.map((v) => v.number), [2, 1])
  t.equal((await storage.read.mirror.pending(10)).length, journaled)
  const third = await storage.transaction((tx) => appendNext(tx, api.id))
  const other = resource(org.id, 'Other')
  await storage.transaction((tx) => tx.resources.create(other))
  await storage.close()

  const after = new LmdbIndex(join(directory, 'index'))
  t.teardown(() => after.close())
  t.same(after.getCurrentVersion(api.id), third)
  t.same(after.getVersionById(third.id), third)
  t.equal(after.getResource(api.id)?.last_number, 3)
  t.same(after.listResources(org.id, 'api', { offset: 0, limit: 10 }).items.map((r) => r.id), [other.id, api.id])
  t.equal(after.listResources(org.id, 'api', { offset: 0, limit: 10 }).total, 2, 'the counts the adapter kept')
  t.equal(after.mirror.lastSeq(), journaled + 1, 'the journal\'s sequence continued')
  t.same(after.mirror.pending(10).at(-1), { ...(after.mirror.pending(10).at(-1)!), seq: journaled + 1, change: 'version' })
  t.equal([...after.mirror.historyOf(org.id)].length, journaled + 1, 'the history kept by the same writer')
})
