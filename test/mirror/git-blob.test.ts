import { execFileSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import t from 'tap'
import { GitRepository } from '../../src/git/git-repository.js'
import { generateOpenApi } from '../../bench/generate.js'
import { tempDir } from '../temp.js'

t.test("a mirror blob is the object git itself makes of the bytes, and git reads it back", async (t) => {
  const gitdir = tempDir('registry-blob-')
  t.teardown(() => rmSync(gitdir, { recursive: true, force: true }))
  const repo = new GitRepository(gitdir)
  await repo.ensure()
  const large = Buffer.from(JSON.stringify(generateOpenApi(300_000, 1)))
  for (const [label, bytes] of [['empty', Buffer.alloc(0)], ['a line', Buffer.from('hello\n')], ['UTF-8', Buffer.from('café 🐈\n')], ['a 300 KB document', large]] as const) {
    const oid = await repo.writeBlob(bytes)
    const git = (args: string[], input?: Buffer) => execFileSync('git', ['--git-dir', gitdir, ...args], { input, maxBuffer: 1 << 26 })
    t.equal(oid, git(['hash-object', '--stdin'], bytes).toString().trim(), `${label}: the id git hash-object gives`)
    t.equal(Buffer.compare(git(['cat-file', 'blob', oid]), bytes), 0, `${label}: git cat-file answers the bytes`)
    t.equal(await repo.writeBlob(bytes), oid, `${label}: written again, the same object`)
  }
})
