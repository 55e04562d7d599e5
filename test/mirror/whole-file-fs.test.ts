/**
 * The mirror's repositories are written whole or not at all (src/git/whole-file-fs.ts): a write cut in
 * the middle leaves no partial file under the file's name, an existing file keeps its old bytes, and
 * isomorphic-git works through it, leaving nothing but its own files. The kill -9 this guards against
 * is test/process/replicas-kill.test.ts's.
 */
import { existsSync, readFileSync, readdirSync, rmSync, promises, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import git from 'isomorphic-git'
import t from 'tap'
import { GitRepository } from '../../src/git/git-repository.js'
import { wholeFileFs, writeFileWhole } from '../../src/git/whole-file-fs.js'
import { tempDir } from '../temp.js'

/** Bytes that end in an error after the first chunk: a write cut in the middle, as by a crash. */
async function* cutOff(): AsyncGenerator<Buffer> {
  yield Buffer.from('the first half')
  throw new Error('cut off')
}

t.test('a write cut in the middle leaves no file under its name, and an old file as it was', async (t) => {
  const dir = tempDir('whole-file-')
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))

  // What node's writeFile does, and what left empty objects in the mirror after a kill -9.
  await t.rejects(promises.writeFile(join(dir, 'plain'), cutOff()), /cut off/)
  t.equal(readFileSync(join(dir, 'plain'), 'utf8'), 'the first half', "node's writeFile leaves the part it wrote")

  await t.rejects(writeFileWhole(join(dir, 'whole'), cutOff()), /cut off/)
  t.notOk(existsSync(join(dir, 'whole')), 'writeFileWhole leaves nothing under the name')
  writeFileSync(join(dir, 'old'), 'old bytes')
  await t.rejects(writeFileWhole(join(dir, 'old'), cutOff()), /cut off/)
  t.equal(readFileSync(join(dir, 'old'), 'utf8'), 'old bytes', 'an existing file keeps its old bytes')
  t.same(readdirSync(dir).sort(), ['old', 'plain'], 'and no temporary file is left')

  await writeFileWhole(join(dir, 'old'), 'new bytes')
  t.equal(readFileSync(join(dir, 'old'), 'utf8'), 'new bytes', 'a write that completes replaces the file')
})

t.test('isomorphic-git writes objects and refs through it; only its own files are left', async (t) => {
  const dir = tempDir('whole-file-git-')
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const repo = new GitRepository(join(dir, 'acme.git'))
  await repo.ensure()
  const blob = await repo.writeBlob(Buffer.from('{"openapi":"3.1.0"}\n'))
  const folder = join(repo.gitdir, 'objects', blob.slice(0, 2))
  t.same(readdirSync(folder), [blob.slice(2)], 'the object, under its id only')
  const { blob: read } = await git.readBlob({ fs: wholeFileFs, gitdir: repo.gitdir, oid: blob })
  t.equal(Buffer.from(read).toString('utf8'), '{"openapi":"3.1.0"}\n', 'read back')

  const commit = await git.writeCommit({
    fs: wholeFileFs, gitdir: repo.gitdir,
    commit: { message: 'x\n', tree: await git.writeTree({ fs: wholeFileFs, gitdir: repo.gitdir, tree: [{ mode: '100644', path: 'a.json', oid: blob, type: 'blob' }] }), parent: [],
      author: { name: 'A', email: 'a@example.com', timestamp: 0, timezoneOffset: 0 }, committer: { name: 'A', email: 'a@example.com', timestamp: 0, timezoneOffset: 0 } },
  })
  await repo.setHead(commit)
  t.equal(await repo.head(), commit, 'the ref moved')
  t.same(readdirSync(join(repo.gitdir, 'refs', 'heads')), ['main'], 'refs/heads holds main only')
  t.same(readdirSync(repo.gitdir).filter((name) => name.endsWith('.tmp') || name.startsWith('tmp_obj_')), [], 'no temporary file left in the repository')
})
