/**
 * What CI checkouts do to the mirror: `git clone --depth 1`, deepening and unshallowing later,
 * `--shallow-since`, partial clones (`--filter=blob:none`), a pull into a shallow clone, and what
 * `git push` and a protocol v0 client are told.
 */
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { petstore, tempDir } from '../helpers.js'
import { git, gitStatus, startMirrorServer, type MirrorServer } from './helpers.js'

const count = async (cwd: string) => Number((await git(['rev-list', '--count', 'HEAD'], { cwd })).trim())
const isShallow = async (cwd: string) => (await git(['rev-parse', '--is-shallow-repository'], { cwd })).trim() === 'true'

async function storedDocument(s: MirrorServer, versionId: string): Promise<Buffer> {
  const record = (await s.registry.storage.read.versions.byId(versionId))!
  return s.registry.blobs.get({ checksum: record.checksum, digest: record.digest, format: record.format })
}

t.test('shallow clones: --depth, --deepen, --unshallow, --shallow-since, and a pull into a shallow clone', async (t) => {
  const s = await startMirrorServer()
  const work = tempDir('mirror-shallow-')
  t.teardown(async () => { await s.close(); rmSync(work, { recursive: true, force: true }) })
  const remote = `http://ci:${s.key}@${s.host}/git/acme.git`

  const api = await s.createApi('Petstore')
  for (const v of ['1.0.0', '1.1.0']) await s.upload(api.id, petstore(v))
  await s.settle()
  // Commits carry the time of their change in seconds: the next ones are in a later second.
  await sleep(1_100)
  const since = Math.ceil(Date.now() / 1000)
  await sleep(1_100)
  let last
  for (const v of ['2.0.0', '2.1.0', '3.0.0']) last = await s.upload(api.id, petstore(v))
  await s.settle()
  const full = join(work, 'full')
  await git(['clone', '--quiet', remote, full])
  const total = await count(full)
  t.equal(total, 6, 'created + five versions')

  const shallow = join(work, 'depth1')
  await git(['clone', '--quiet', '--depth', '1', remote, shallow])
  t.ok(await isShallow(shallow), 'the clone is shallow')
  t.equal(await count(shallow), 1, '--depth 1: one commit')
  t.ok(readFileSync(join(shallow, 'apis', 'petstore', 'openapi.json')).equals(await storedDocument(s, last!.id)), 'the current document is checked out')
  await git(['fsck', '--no-dangling'], { cwd: shallow })

  await git(['fetch', '--quiet', '--deepen', '2'], { cwd: shallow })
  t.equal(await count(shallow), 3, '--deepen 2: two more')
  await git(['fetch', '--quiet', '--depth', '4'], { cwd: shallow })
  t.equal(await count(shallow), 4, '--depth 4 from the tip')
  await git(['fetch', '--quiet', '--unshallow'], { cwd: shallow })
  t.notOk(await isShallow(shallow), '--unshallow: the whole history')
  t.equal(await count(shallow), total)
  t.equal((await git(['rev-parse', 'HEAD'], { cwd: shallow })).trim(), (await git(['rev-parse', 'HEAD'], { cwd: full })).trim())
  await git(['fsck', '--strict', '--no-dangling'], { cwd: shallow })

  const recent = join(work, 'since')
  await git(['clone', '--quiet', `--shallow-since=${since}`, remote, recent])
  t.equal(await count(recent), 3, '--shallow-since: the three versions after that time')
  t.ok(await isShallow(recent))

  // New changes reach a shallow clone by a plain pull (no deepen: only what it lacks is sent).
  const tip = join(work, 'tip')
  await git(['clone', '--quiet', '--depth', '1', remote, tip])
  const next = await s.upload(api.id, petstore('4.0.0'))
  await s.settle()
  await git(['pull', '--quiet', '--ff-only'], { cwd: tip })
  t.equal(await count(tip), 2, 'the shallow clone gained exactly the new commit')
  t.ok(readFileSync(join(tip, 'apis', 'petstore', 'openapi.json')).equals(await storedDocument(s, next.id)))
})

t.test('a partial clone (--filter=blob:none) fetches the blobs it checks out', async (t) => {
  const s = await startMirrorServer()
  const work = tempDir('mirror-partial-')
  t.teardown(async () => { await s.close(); rmSync(work, { recursive: true, force: true }) })
  const api = await s.createApi('Petstore')
  const versions = []
  for (const v of ['1.0.0', '2.0.0']) versions.push(await s.upload(api.id, petstore(v)))
  await s.settle()

  const partial = join(work, 'partial')
  await git(['clone', '--quiet', '--filter=blob:none', `http://ci:${s.key}@${s.host}/git/acme.git`, partial])
  t.equal(await count(partial), 3, 'the whole history of commits')
  t.ok(readFileSync(join(partial, 'apis', 'petstore', 'openapi.json')).equals(await storedDocument(s, versions[1].id)))
  const missing = (await git(['rev-list', '--objects', '--all', '--missing=print'], { cwd: partial })).split('\n').filter((line) => line.startsWith('?'))
  t.ok(missing.length > 0, 'blobs of older versions were not sent')
  // An older version's blob is fetched when it is needed.
  const older = (await git(['show', 'HEAD~1:apis/petstore/openapi.json'], { cwd: partial }))
  t.ok(Buffer.from(older).equals(await storedDocument(s, versions[0].id)), 'an older document is fetched on demand')
})

t.test('push and protocol v0 clients are told what the mirror serves', async (t) => {
  const s = await startMirrorServer()
  const work = tempDir('mirror-refuse-')
  t.teardown(async () => { await s.close(); rmSync(work, { recursive: true, force: true }) })
  await s.createApi('Petstore')
  await s.settle()
  const remote = `http://ci:${s.key}@${s.host}/git/acme.git`
  const clone = join(work, 'clone')
  await git(['clone', '--quiet', remote, clone])

  await git(['-c', 'user.name=x', '-c', 'user.email=x@example.com', 'commit', '--quiet', '--allow-empty', '-m', 'mine'], { cwd: clone })
  const push = await gitStatus(['push', 'origin', 'HEAD:main'], { cwd: clone })
  t.not(push.code, 0)
  t.match(push.stderr, /the mirror is read-only/, 'git push says the mirror is read-only')
  t.notMatch(push.stderr, /not found/)

  const old = await gitStatus(['-c', 'protocol.version=0', 'clone', remote, join(work, 'v0')])
  t.not(old.code, 0)
  t.match(old.stderr, /protocol version 2/, 'a protocol v0 client is told to speak version 2')

  const excluded = await gitStatus(['clone', '--shallow-exclude=main', remote, join(work, 'excluded')])
  t.not(excluded.code, 0)
  t.match(excluded.stderr, /deepen-not .* is not supported/)
})
