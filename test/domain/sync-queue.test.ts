/** The sync queue: one job per API at a time, drain. */
import t from 'tap'
import { SyncQueue } from '../../src/domain/repository-sync/sync-queue.js'
import { RegistryError } from '../../src/errors.js'

function gate() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => { open = resolve })
  return { open, opened }
}

t.test('jobs of one key run one at a time, in order; other keys run alongside', async (t) => {
  const queue = new SyncQueue()
  const log: string[] = []
  const first = gate()
  const a1 = queue.run('a', async () => { log.push('a1 start'); await first.opened; log.push('a1 end'); return 1 })
  const a2 = queue.run('a', async () => { log.push('a2'); return 2 })
  const b1 = queue.run('b', async () => { log.push('b1'); return 3 })
  t.equal(await b1, 3)
  t.same(log, ['a1 start', 'b1'], 'a2 waits for a1; b1 does not')
  first.open()
  t.same(await Promise.all([a1, a2]), [1, 2])
  t.same(log, ['a1 start', 'b1', 'a1 end', 'a2'])
})

t.test('a failing job does not stop the next one', async (t) => {
  const queue = new SyncQueue()
  const failed = queue.run('a', async () => { throw new Error('boom') })
  const next = queue.run('a', async () => 'ran')
  await t.rejects(failed, /boom/)
  t.equal(await next, 'ran')
})

t.test('drain waits for queued jobs and refuses new ones', async (t) => {
  const queue = new SyncQueue()
  const slow = gate()
  const done: string[] = []
  void queue.run('a', async () => { await slow.opened; done.push('a1') })
  void queue.run('a', async () => { done.push('a2') })
  const drained = queue.drain()
  await t.rejects(queue.run('b', async () => undefined), RegistryError)
  slow.open()
  await drained
  t.same(done, ['a1', 'a2'])
  t.equal(queue.size, 0)
})
