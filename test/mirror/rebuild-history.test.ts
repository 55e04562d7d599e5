/**
 * Issue 14, item 11: a rebuild of the git mirror writes the history a continuously running mirror wrote,
 * renames, metadata changes and deletions included. One storage is mirrored continuously through a
 * sequence of uploads, a rename, a metadata change, a restore, a delete (and gc), and a new resource
 * under the deleted one's slug; a copy of it (`registry backup`: the index and blobs, no git) is
 * rebuilt from the index at its first start. Commit by commit, the two have the same tree, message,
 * dates and parents, so the same ids.
 */
import { rmSync } from 'node:fs'
import t from 'tap'
import { json, petstore, tempDir } from '../helpers.js'
import { backupStorage, collectGarbage, verifyStorage } from '../../src/domain/operations/maintenance.js'
import { FsBlobStore } from '../../src/storage/lmdb/fs-blob-store.js'
import { repositoryPath } from '../../src/git/git-repository.js'
import { git, startMirrorServer, type MirrorServer } from './helpers.js'
import { allVersions, mirroredVersions } from '../support/stored.js'

interface Commit { id: string; tree: string; parents: string; date: string; message: string; files: string }

/** Every commit of `main`, oldest first, with the files of its tree (path and blob id). */
async function history(storage: string, orgId: string): Promise<Commit[]> {
  const gitdir = repositoryPath(storage, orgId)
  const log = await git(['--git-dir', gitdir, 'log', '--reverse', '--format=%H%x00%T%x00%P%x00%aI %cI%x00%B%x01', 'main'])
  const commits = log.split('\x01').map((entry) => entry.trim()).filter(Boolean).map((entry) => {
    const [id, tree, parents, date, message] = entry.split('\x00')
    return { id, tree, parents, date, message, files: '' }
  })
  for (const commit of commits) commit.files = await git(['--git-dir', gitdir, 'ls-tree', '-r', commit.id])
  return commits
}

async function call(s: MirrorServer, method: string, url: string, payload?: Record<string, unknown>, status?: number) {
  const response = await s.call({ method: method as 'POST', url, ...(payload === undefined ? {} : { payload }) })
  if (status !== undefined && response.statusCode !== status) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`)
  return response.statusCode === 204 ? undefined : json(response).data
}

t.test('a rebuilt mirror has the continuous mirror\'s commits: renames, deletions, restores included', async (t) => {
  const live = tempDir()
  const copy = tempDir()
  t.teardown(() => { rmSync(live, { recursive: true, force: true }); rmSync(copy, { recursive: true, force: true }) })
  const s = await startMirrorServer({ storage: live })
  t.teardown(() => s.close())

  const api = await s.createApi('Petstore')
  const first = await s.upload(api.id, petstore('1.0.0'))
  await s.upload(api.id, 'openapi: 3.1.0\ninfo: {title: Petstore, version: 2.0.0}\npaths: {}\n')
  const schema = await call(s, 'POST', '/v1/schemas', { name: 'Pet', document: { type: 'object' } }, 201)
  await call(s, 'PATCH', `/v1/apis/${api.id}`, { slug: 'pets', name: 'Pets' }, 200)
  await call(s, 'PATCH', `/v1/apis/${api.id}`, { description: 'All the pets' }, 200)
  await call(s, 'PATCH', `/v1/apis/${api.id}`, { description: 'All the pets' }, 200) // no change: no commit
  await s.upload(api.id, petstore('3.0.0'))
  await call(s, 'POST', `/v1/apis/${api.id}/versions/${first.id}/restore`, undefined, 201)
  await call(s, 'PATCH', `/v1/schemas/${schema.id}`, { visibility: 'public' }, 200)
  await call(s, 'DELETE', `/v1/schemas/${schema.id}`, undefined, 204)
  await call(s, 'POST', '/v1/schemas', { name: 'Pet', document: { type: 'object', required: ['id'] } }, 201)
  await s.settle()
  // gc after the delete: the deleted schema's document stays, since the mirror's history holds it.
  await collectGarbage(s.registry.storage, s.registry.blobs, 0)
  const continuous = await history(live, s.orgId)
  t.same(continuous.map((c) => c.message.split('\n')[0]), [
    'apis/petstore: created',
    'apis/petstore: version 1 (upload)',
    'apis/petstore: version 2 (upload)',
    'schemas/pet: created',
    'schemas/pet: version 1 (upload)',
    'apis/pets: renamed from apis/petstore',
    'apis/pets: metadata updated',
    'apis/pets: version 3 (upload)',
    'apis/pets: version 4 (restore)',
    'schemas/pet: metadata updated',
    'schemas/pet: deleted',
    'schemas/pet: created',
    'schemas/pet: version 1 (upload)',
  ], 'the continuous mirror: one commit per change')

  // The copy holds the index and the blobs, not the repository: its first start rebuilds it.
  await backupStorage(s.registry.storage, live, copy)
  const restored = await startMirrorServer({ storage: copy })
  t.teardown(() => restored.close())
  await restored.settle()
  const rebuilt = await history(copy, s.orgId)
  t.equal(rebuilt.length, continuous.length, `${rebuilt.length} commits`)
  for (const [i, commit] of continuous.entries()) {
    const other = rebuilt[i] ?? ({} as Commit)
    const subject = commit.message.split('\n')[0]
    t.equal(other.message, commit.message, `#${i + 1} ${subject}: the same message`)
    t.equal(other.files, commit.files, `#${i + 1}: the same files, byte for byte`)
    t.equal(other.date, commit.date, `#${i + 1}: the same dates`)
    t.equal(other.id, commit.id, `#${i + 1}: the same commit id`)
  }
  await git(['--git-dir', repositoryPath(copy, s.orgId), 'fsck', '--strict', '--no-dangling'])

  // verify checks the deleted schema's document too: without it, a rebuild could not write its commit.
  t.match(await verifyStorage(restored.registry.storage, restored.registry.blobs), { ok: true })
  const stillStored = new Set((await allVersions(restored.registry.storage.read)).map((v) => v.id))
  const deletedVersion = (await mirroredVersions(restored.registry.storage.read)).find((v) => !stillStored.has(v.id))!
  rmSync((restored.registry.blobs as FsBlobStore).pathOf(deletedVersion))
  const report = await verifyStorage(restored.registry.storage, restored.registry.blobs)
  t.equal(report.ok, false)
  t.match(report.problems, [new RegExp(`^version ${deletedVersion.id} of a deleted resource, in the git mirror's history: blob .* is missing`)])

  // And `mirror rebuild` on the live storage writes the same history again, in place.
  await s.registry.mirror!.rebuild([await s.registry.organizations.requireBySlug('acme')])
  t.equal((await history(live, s.orgId)).at(-1)?.id, continuous.at(-1)?.id, 'rebuild in place: the same head')
})
