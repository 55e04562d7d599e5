import { rmSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { LmdbStorage } from '../../../src/storage/lmdb/storage.js'
import { LmdbIndex } from '../../../src/store/lmdb-index.js'
import { tempDir } from '../../temp.js'
import { appendNext, organization, resource, version } from '../contract/contract.js'
import { mirroredVersions } from '../../support/stored.js'

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
  await before.close()

  const storage = new LmdbStorage(directory)
  t.same(await storage.read.organizations.bySlug('acme'), org)
  t.equal((await storage.read.keys.byHash('f'.repeat(64)))?.organization_id, org.id)
  t.equal((await storage.read.resources.bySlug(org.id, 'api', 'shop'))?.last_number, 2)
  t.same((await storage.read.resources.list(org.id, 'api', { offset: 0, limit: 10 }, true)).total, 1)
  t.equal((await storage.read.versions.current(api.id))?.number, 2)
  t.same((await storage.read.versions.list(api.id, { offset: 0, limit: 10 })).items.map((v) => v.number), [2, 1])
  // The index journaled the create and both versions: the adapter reads the entries and the history it wrote.
  const journaled = (await storage.read.mirror.pending(10)).length
  t.equal(journaled, 3)
  t.equal(await storage.read.mirror.lastSeq(org.id), journaled)
  t.same((await storage.read.mirror.history(org.id)).map((entry) => entry.change), ['create', 'version', 'version'])
  const third = await storage.transaction((tx) => appendNext(tx, api.id))
  const other = resource(org.id, 'Other')
  await storage.transaction((tx) => tx.resources.create(other))
  t.equal(await storage.read.mirror.lastSeq(org.id), journaled + 1, 'the journal\'s sequence continued')
  await storage.close()

  const after = new LmdbIndex(join(directory, 'index'))
  t.teardown(() => after.close())
  t.same(after.getCurrentVersion(api.id), third)
  t.same(after.getVersionById(third.id), third)
  t.equal(after.getResource(api.id)?.last_number, 3)
  t.same(after.listResources(org.id, 'api', { offset: 0, limit: 10 }).items.map((r) => r.id), [other.id, api.id])
  t.equal(after.listResources(org.id, 'api', { offset: 0, limit: 10 }).total, 2, 'the counts the adapter kept')
  // The index journals on after the adapter: the same counter, entries and history.
  await after.updateResource(other.id, (current) => ({ ...current, name: 'Other API' }))
  const reopened = new LmdbStorage(directory)
  t.teardown(() => reopened.close())
  t.same((await mirroredVersions(reopened.read)).map((v) => v.id), [after.getVersion(api.id, 1)!.id, after.getVersion(api.id, 2)!.id, third.id], 'the history\'s versions, the index\'s entries among them')
  const pending = await reopened.read.mirror.pending(10)
  t.same(pending.map((entry) => [entry.seq, entry.change]), [[1, 'create'], [2, 'version'], [3, 'version'], [4, 'version'], [5, 'update']],
    'one sequence across both writers')
  t.same((await reopened.read.mirror.history(org.id, journaled)).map((entry) => entry.change), ['version', 'update'], 'the history kept by both')
})
