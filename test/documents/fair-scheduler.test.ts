/**
 * The fair scheduler's companion tasks (issue 20, figure 20b): an upload's compatibility diff may run
 * beside its own validation on a worker its organization's cap leaves free, but only while nothing
 * waits, so another tenant is never delayed by it.
 */
import t from 'tap'
import { companionOf, FairScheduler } from '../../src/documents/fair-scheduler.js'

const limits = { slots: 2, perOrganization: 1, perKey: 1, queuePerKey: 8, queuePerOrganization: 8 }
const acme = { organization: 'acme', key: 'a' }
const globex = { organization: 'globex', key: 'g' }

/** Resolves true when `acquired` settled within a few event-loop turns (the worker was given at once). */
async function startsAtOnce(acquired: Promise<() => void>): Promise<boolean> {
  let started = false
  void acquired.then(() => { started = true })
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
  return started
}

t.test("a task that is not a companion waits for its organization's cap, even with a worker free", async (t) => {
  const scheduler = new FairScheduler(limits)
  const releaseCheck = await scheduler.acquire(acme)
  t.equal(await startsAtOnce(scheduler.acquire(acme)), false, "a second task of the organization waits for its cap")
  t.equal(scheduler.waiting, 1)
  releaseCheck()
  t.equal(scheduler.waiting, 0, 'and starts when the first ends')
})

t.test('a companion starts at once on a free worker when nothing waits', async (t) => {
  const scheduler = new FairScheduler(limits)
  const releaseCheck = await scheduler.acquire(acme)
  const diff = scheduler.acquire(companionOf(acme))
  t.equal(await startsAtOnce(diff), true, 'the diff runs beside the check')
  // Both workers are busy now: another organization waits for one of them, as it would for any task.
  const other = scheduler.acquire(globex)
  t.equal(await startsAtOnce(other), false)
  ;(await diff)()
  t.equal(await startsAtOnce(other), true, 'and gets the worker the companion gives back')
  releaseCheck()
  ;(await other)()
})

t.test('a companion that asks first leaves its own organization\'s task the worker the caps allow it', async (t) => {
  const scheduler = new FairScheduler(limits)
  const diff = await scheduler.acquire(companionOf(acme))
  t.equal(await startsAtOnce(scheduler.acquire(acme)), true, 'the check starts beside the diff that asked first')
  diff()
})

t.test('a companion does not borrow while another task waits: it queues like any task', async (t) => {
  const scheduler = new FairScheduler({ ...limits, slots: 3 })
  const releaseCheck = await scheduler.acquire(acme)
  const releaseSecond = await scheduler.acquire(globex)
  const waitingGlobex = scheduler.acquire(globex)
  t.equal(await startsAtOnce(waitingGlobex), false, "globex's second task waits for its own cap")
  const diff = scheduler.acquire(companionOf(acme))
  t.equal(await startsAtOnce(diff), false, 'with a task waiting, the companion does not take the free worker')
  releaseCheck()
  t.equal(await startsAtOnce(diff), true, "it runs in its organization's turn")
  releaseSecond()
  t.equal(await startsAtOnce(waitingGlobex), true)
})
