/**
 * The git mirror on two registries serving one PostgreSQL database (issue 16, item 8): one writer, and
 * `git clone` of either replica gives the same refs and commits; the writer fails over when it stops.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { json, petstore } from '../helpers.js'
import { postgresForFile } from '../support/postgres.js'
import { git, startMirrorServer } from './helpers.js'

const server = await postgresForFile(t)

if (server) {
  t.test('two replicas on one database: one writer, the same refs from both, and fail-over', async (t) => {
    const url = await server.createDatabase()
    const a = await startMirrorServer({ databaseUrl: url })
    let aClosed = false
    t.teardown(() => aClosed ? undefined : a.close())
    await a.settle()
    t.equal(a.registry.mirror!.writer.isWriter, true, 'the first replica started is the writer')
    const b = await startMirrorServer({ databaseUrl: url })
    t.teardown(() => b.close())
    await b.settle()
    t.equal(b.registry.mirror!.writer.isWriter, false, 'the second is not')

    // Writes through both replicas; only A's writer commits them.
    const api = await a.createApi('Petstore')
    await a.upload(api.id, petstore('1.0.0'))
    await b.upload(api.id, petstore('1.1.0'))
    await b.call({ method: 'PATCH', url: `/v1/apis/${api.id}`, payload: { description: 'Pets, all of them.' } })
    for (let i = 0; i < 50 && (await a.registry.storage.read.mirror.pending(10)).length > 0; i++) {
      a.registry.mirror!.writer.nudge()
      await a.settle()
      await sleep(50)
    }
    const status = json(await b.call({ method: 'GET', url: '/v1/mirror' })).data as { head: string }
    t.match(status.head, /^[0-9a-f]{40}$/, 'the writer recorded a head')

    const dir = mkdtempSync(join(tmpdir(), 'replicas-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const clone = async (replica: typeof a, name: string) => {
      await git(['clone', '-q', `http://x:${replica.key}@${replica.host}/git/acme.git`, join(dir, name)])
      return (await git(['log', '--format=%H %s', 'main'], { cwd: join(dir, name) })).trim().split('\n')
    }
    const fromA = await clone(a, 'a')
    const fromB = await clone(b, 'b')
    t.same(fromB, fromA, 'the replica that is not the writer serves the same commits')
    t.equal(fromB[0].split(' ')[0], status.head, 'up to the recorded head')
    t.same(fromB.map((line) => line.split(' ').slice(1).join(' ')), [
      'apis/petstore: metadata updated', 'apis/petstore: version 2 (upload)', 'apis/petstore: version 1 (upload)', 'apis/petstore: created',
    ])
    t.equal(b.registry.mirror!.writer.isWriter, false, 'serving a clone did not make it the writer')

    // A stops (its session, and the lock with it, ends); B's writer takes over on its next round.
    await a.close()
    aClosed = true
    await b.upload(api.id, petstore('2.0.0'))
    for (let i = 0; i < 100 && !b.registry.mirror!.writer.isWriter; i++) await sleep(50)
    t.equal(b.registry.mirror!.writer.isWriter, true, 'the other replica is the writer now')
    for (let i = 0; i < 50 && (await b.registry.storage.read.mirror.pending(10)).length > 0; i++) {
      b.registry.mirror!.writer.nudge()
      await b.settle()
      await sleep(50)
    }
    await git(['pull', '-q', '--ff-only'], { cwd: join(dir, 'b') })
    const after = (await git(['log', '--format=%H %P %s', 'main'], { cwd: join(dir, 'b') })).trim().split('\n')
    t.equal(after.length, 5, 'one more commit')
    t.match(after[0], / apis\/petstore: version 3 \(upload\)$/)
    t.equal(after[0].split(' ')[1], status.head, 'on top of what the first writer wrote')
    await git(['fsck', '--strict'], { cwd: join(dir, 'b') })
  })
}
