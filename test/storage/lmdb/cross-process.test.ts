import { spawn } from 'node:child_process'
import t from 'tap'
import { nodeCommand, ROOT, userEnv } from '../../process/spawn.js'
import { appendNext } from '../contract/contract.js'
import { storageWithApi } from './with-api.js'

/** Runs the fixture writer in a child process; answers the version numbers it was given. */
function writer(storage: string, resourceId: string, count: number): Promise<number[]> {
  const child = spawn(...nodeCommand(['--import', 'tsx', 'test/fixtures/storage/append-versions.ts', storage, resourceId, String(count)]), {
    cwd: ROOT, env: userEnv(), stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk) => { out += chunk })
  child.stderr.on('data', (chunk) => { err += chunk })
  return new Promise((resolve, reject) => child.on('close', (code) => {
    if (code === 0) resolve(JSON.parse(out) as number[])
    else reject(new Error(`writer exited ${code}: ${err}`))
  }))
}

t.test('writers in other processes and this one append to one resource: numbers 1..N, no gap, no duplicate', async (t) => {
  const { directory, storage, api } = await storageWithApi(t, { attempts: 10_000 })
  const perWriter = 30
  let running = 2
  const children = [writer(directory, api.id, perWriter), writer(directory, api.id, perWriter)]
    .map((child) => child.finally(() => { running-- }))
  // This process keeps writing for as long as the others do, so that the three really overlap.
  const mine: number[] = []
  while (running > 0) mine.push((await storage.transaction((tx) => appendNext(tx, api.id))).number)
  const theirs = await Promise.all(children)
  const all = [...mine, ...theirs.flat()].sort((a, b) => a - b)
  const total = all.length
  t.equal(total, mine.length + 2 * perWriter)
  t.ok(theirs.some((numbers) => mine.some((n) => n > Math.min(...numbers) && n < Math.max(...numbers))),
    'this process wrote between the versions of another one (the writers overlapped)')
  t.same(all, Array.from({ length: total }, (_, i) => i + 1), 'each number handed out once, none skipped')
  const stored = await storage.read.versions.list(api.id, { offset: 0, limit: 1000 })
  t.equal(stored.total, total)
  t.equal((await storage.read.resources.get(api.id))?.last_number, total)
  t.equal((await storage.read.versions.current(api.id))?.number, total)
  const journal = await storage.read.mirror.pending(1000)
  t.equal(journal.length, total, 'one journal entry per version, across processes')
  t.equal(new Set(journal.map((e) => e.seq)).size, total, 'sequence numbers unique across processes')
})
