import { readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { rmSync } from 'node:fs'
import t from 'tap'
import { FsBlobStore } from '../../../src/storage/lmdb/fs-blob-store.js'
import { tempDir } from '../../temp.js'

const ref = { checksum: `sha256:${'a'.repeat(64)}`, digest: 'b'.repeat(64), format: 'json' as const }

t.test('put writes once, touches an existing blob, and remove spares blobs touched since a cutoff', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const blobs = new FsBlobStore(storage)
  t.same(await blobs.put(ref, '{"a":1}'), { created: true, size: 7 })
  const path = blobs.pathOf(ref)
  t.match(path, /blobs\/sha256\/aa\/a{64}\.b{64}\.json$/)
  const hourAgo = new Date(Date.now() - 3_600_000)
  utimesSync(path, hourAgo, hourAgo)
  t.same(await blobs.put(ref, '{"a":1}'), { created: false, size: 7 })
  t.ok(statSync(path).mtimeMs > Date.now() - 60_000, 'an upload that finds the blob makes it young again')
  t.equal(await blobs.remove(ref, Date.now() - 60_000), 0, 'a blob touched after the cutoff is kept')
  t.equal((await blobs.get(ref)).toString(), '{"a":1}')
  t.equal(await blobs.remove(ref, Date.now() + 1000), 7)
  t.equal(await blobs.has(ref), false)
  t.equal(await blobs.remove(ref), 0, 'removing a missing blob frees nothing')
  const listed = []
  for await (const r of blobs.list()) listed.push(r)
  t.same(listed, [])
})

t.test('temporary files a crash left are removed once older than the cutoff; younger ones are kept', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const blobs = new FsBlobStore(storage)
  await blobs.put(ref, '{"a":1}') // creates tmp/
  const tmp = join(storage, 'tmp')
  writeFileSync(join(tmp, 'left-by-a-crash.tmp'), 'x'.repeat(100))
  writeFileSync(join(tmp, 'being-written.tmp'), 'y'.repeat(10))
  writeFileSync(join(tmp, 'not-ours.txt'), 'z')
  const hourAgo = new Date(Date.now() - 3_600_000)
  utimesSync(join(tmp, 'left-by-a-crash.tmp'), hourAgo, hourAgo)
  utimesSync(join(tmp, 'not-ours.txt'), hourAgo, hourAgo)
  t.equal(await blobs.removeTemporaries(Date.now() - 60_000), 100)
  t.same(readdirSync(tmp).sort(), ['being-written.tmp', 'not-ours.txt'])
  t.equal((await blobs.get(ref)).toString(), '{"a":1}', 'blobs are untouched')
  const fresh = tempDir()
  t.teardown(() => rmSync(fresh, { recursive: true, force: true }))
  t.equal(await new FsBlobStore(fresh).removeTemporaries(Date.now()), 0, 'no tmp/ yet: nothing to do')
})
