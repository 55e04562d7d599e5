import { statSync, utimesSync } from 'node:fs'
import { rmSync } from 'node:fs'
import t from 'tap'
import { FsBlobStore } from '../../src/store/fs-blob-store.js'
import { tempDir } from '../temp.js'

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
