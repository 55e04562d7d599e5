import t from 'tap'
import { DocumentWorkers, type WorkerEnd, type WorkPhase } from '../../src/documents/pool.js'
import { canonicalJson } from '../../src/documents/canonical.js'
import { petstore, workerExecArgv } from '../helpers.js'

const oas = { checksum: 'sha256:oas', document: { extends: [['spectral:oas', 'recommended']] } }

/** Workers report phase times in a message of their own, which may arrive just after the result. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 100))

function observer() {
  const ended: WorkerEnd[] = []
  const phases = new Map<WorkPhase, number>()
  return {
    ended, phases,
    observer: {
      phase: (phase: WorkPhase) => { phases.set(phase, (phases.get(phase) ?? 0) + 1) },
      workerEnded: (reason: WorkerEnd) => { ended.push(reason) },
    },
  }
}

t.test('a worker is replaced after maxRuns Spectral runs, and no task is lost', async (t) => {
  const seen = observer()
  const workers = new DocumentWorkers({ execArgv: workerExecArgv(), threads: 1, timeoutMs: 60_000, memoryMb: 512, warm: false, maxRuns: 2, observer: seen.observer })
  t.teardown(() => workers.close())
  const canonical = canonicalJson(petstore())
  // All submitted at once: the queue holds them while each retired worker finishes and is replaced.
  const results = await Promise.all(Array.from({ length: 4 }, () => workers.lint({ canonical, ruleset: oas })))
  t.equal(results.length, 4)
  for (const { findings } of results) t.same(findings, results[0].findings, 'every run gives the same findings')
  await settle()
  t.same(seen.ended, ['runs', 'runs'], 'four runs at two per worker: two workers retired, a third took their place')
  t.equal(seen.phases.get('lint'), 4, 'every lint run reported its time')
  // Other tasks do not count as Spectral runs; the pool keeps serving.
  for (let i = 0; i < 3; i++) t.equal((await workers.digest({ body: `{"a":${i}}` })).unchanged, false)
  t.equal(seen.ended.length, 2, 'digests are not Spectral runs')
  t.equal(workers.ready, true)
})

t.test('a worker whose heap is over the bound after a task is replaced; queued tasks all finish', async (t) => {
  const seen = observer()
  // A 1 MB bound: every worker is over it after its first task.
  const workers = new DocumentWorkers({ execArgv: workerExecArgv(), threads: 1, timeoutMs: 60_000, memoryMb: 512, warm: false, maxHeapMb: 1, observer: seen.observer })
  t.teardown(() => workers.close())
  const texts = Array.from({ length: 4 }, (_, i) => `{"n":${i}}`)
  const results = await Promise.all(texts.map((body) => workers.digest({ body })))
  t.same(results.map((r) => r.unchanged), texts.map(() => false), 'every task answered')
  await settle()
  // The report comes after the task: a worker may have been given the next ones already, and runs them
  // (on a loaded machine one worker ran all four before its report arrived).
  t.ok(seen.ended.length >= 1 && seen.ended.every((r) => r === 'heap'), `workers were retired for their heap (${seen.ended.length})`)
  const ended = seen.ended.length
  t.equal((await workers.digest({ body: '{"n":4}' })).unchanged, false, 'a replacement serves the next task')
  await settle()
  t.ok(seen.ended.length > ended, 'and is retired in turn after it')
  t.equal(seen.phases.get('digest'), 5, 'every digest reported its time')
})

t.test('without bounds no worker is replaced', async (t) => {
  const seen = observer()
  const workers = new DocumentWorkers({ execArgv: workerExecArgv(), threads: 1, timeoutMs: 60_000, memoryMb: 512, warm: false, observer: seen.observer })
  t.teardown(() => workers.close())
  const canonical = canonicalJson(petstore())
  for (let i = 0; i < 4; i++) await workers.check({ kind: 'openapi', canonical, ruleset: oas })
  await settle()
  t.same(seen.ended, [])
  t.equal(seen.phases.get('validate'), 4, 'validation and lint are timed separately')
  t.equal(seen.phases.get('lint'), 4)
})
