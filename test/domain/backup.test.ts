/**
 * registry backup copies the blobs it listed; one that a gc running at the same time removes after
 * the listing (a blob no version references) is left out of the copy instead of failing the backup.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { backupStorage } from '../../src/domain/operations/maintenance.js'
import { json, petstore, startTestServer } from '../helpers.js'
import { tempDir } from '../temp.js'

t.test('a blob removed during the copy is left out, the others are copied', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  for (const name of ['a', 'b', 'c']) {
    const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name } })).data
    const res = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('1.0.0', { title: name }) } })
    t.equal(res.statusCode, 201, 'uploaded')
  }
  const destination = tempDir()
  t.teardown(() => rmSync(destination, { recursive: true, force: true }))
  const shards = join(s.storage, 'blobs', 'sha256')
  const blobs = readdirSync(shards).flatMap((shard) => readdirSync(join(shards, shard)).map((name) => join(shards, shard, name))).sort()
  t.equal(blobs.length, 3)
  const phases: string[] = []
  const result = await backupStorage(s.registry.storage, s.storage, destination, (phase, done, total) => {
    phases.push(`${phase} ${done}/${total}`)
    // After the first copy, the last blob goes, as a concurrent gc would remove it.
    if (phase === 'copying blobs' && done === 1) rmSync(blobs[2])
  })
  t.same(result, { blobs: 2 })
  t.same(phases, ['index snapshot 0/1', 'index snapshot 1/1', 'copying blobs 1/3', 'copying blobs 2/3', 'copying blobs 3/3'])
  const copied = (path: string) => existsSync(join(destination, 'blobs', path.slice(join(s.storage, 'blobs').length + 1)))
  t.same(blobs.map(copied), [true, true, false])
  t.ok(existsSync(join(destination, 'index')), 'the index snapshot')
})
