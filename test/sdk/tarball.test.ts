import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { tarGz } from '../../src/sdk/tarball.js'
import { tempDir } from '../temp.js'

/** A path of `length` bytes, in directories of 40 characters, as a deep PSR-4 namespace makes them. */
function longPath(length: number, leaf: string): string {
  const segments: string[] = []
  let path = leaf
  for (let i = 0; path.length < length; i++) {
    segments.push(`Segment${String(i).padStart(2, '0')}${'x'.repeat(31)}`)
    path = [...segments, leaf].join('/')
  }
  return path.slice(path.length - length)
}

t.test('paths of any length are archived (a PAX header past ustar\'s 255 bytes) and read back by tar', async (t) => {
  const deep = longPath(300, 'Client.php')
  t.equal(Buffer.byteLength(deep), 300)
  const files = [
    { path: deep, content: '<?php // deep\n' },
    { path: `src/${'ü'.repeat(60)}.php`, content: 'unicode name, 120 bytes\n' },
    { path: 'README.md', content: '# SDK\n' },
  ]
  const archive = await tarGz(files)
  t.ok(archive.equals(await tarGz([...files].reverse())), 'the same files in another order: byte-identical')

  const dir = tempDir()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'sdk.tar.gz'), archive)
  const out = join(dir, 'out')
  mkdirSync(out)
  const listed = spawnSync('tar', ['-tzvf', join(dir, 'sdk.tar.gz')], { encoding: 'utf8' })
  t.equal(listed.status, 0, listed.stderr)
  t.match(listed.stdout, /-rw-r--r-- 0\/0 .* 1970-01-01 00:00/, 'fixed owner, mode and time')
  const extracted = spawnSync('tar', ['-xzf', join(dir, 'sdk.tar.gz'), '-C', out], { encoding: 'utf8' })
  t.equal(extracted.status, 0, extracted.stderr)
  for (const file of files) t.equal(readFileSync(join(out, file.path), 'utf8'), file.content, `${Buffer.byteLength(file.path)}-byte path`)
})
