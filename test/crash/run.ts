/**
 * `npm run test:crash`: the crash test with 20 kills (or `--kills N`), then a summary; exit 1 on any
 * problem. Options: --kills N, --clients N, --seed N (repeat a run), --min-run-ms, --max-run-ms.
 */
import { parseArgs } from 'node:util'
import { runCrashTest } from './harness.js'

const { values } = parseArgs({
  options: {
    kills: { type: 'string', default: '20' },
    clients: { type: 'string', default: '6' },
    seed: { type: 'string' },
    'min-run-ms': { type: 'string', default: '200' },
    'max-run-ms': { type: 'string', default: '1500' },
  },
})

const result = await runCrashTest({
  kills: Number(values.kills),
  clients: Number(values.clients),
  seed: values.seed === undefined ? undefined : Number(values.seed),
  minRunMs: Number(values['min-run-ms']),
  maxRunMs: Number(values['max-run-ms']),
  log: (line) => console.log(line),
})

console.log(`\nseed ${result.seed}: ${result.kills} kills in ${result.seconds.toFixed(1)} s`)
console.log(`${result.acknowledgedWrites} writes acknowledged, ${result.unanswered} cut off by a kill`)
console.log(`at the end: ${result.resources} resources, ${result.versions} versions; ${result.acknowledgedVersions} acknowledged versions checked as answered; ${result.documents} documents read and checked`)
if (result.problems.length > 0) {
  console.log(`\n${result.problems.length} PROBLEMS:`)
  for (const problem of result.problems.slice(0, 50)) console.log(`- ${problem}`)
  process.exitCode = 1
} else {
  console.log('no problems: every acknowledged write survived every kill, nothing was half there, registry verify passed each time')
}
