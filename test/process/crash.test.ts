import t from 'tap'
import { runCrashTest } from '../crash/harness.js'

// The short version of `npm run test:crash` (20 kills): a real server, six clients streaming writes,
// `kill -9` three times at random moments, and after each restart every acknowledged write is there,
// nothing is half there, and `registry verify` passes. The seed is printed to repeat a failing run.
t.test('kill -9 while clients write, three times: nothing acknowledged is lost, nothing is half there', async (t) => {
  const result = await runCrashTest({ kills: 3, log: (line) => t.comment(line) })
  t.comment(`seed ${result.seed}: ${result.acknowledgedWrites} writes acknowledged, ${result.unanswered} cut off, ${result.seconds.toFixed(1)} s`)
  t.same(result.problems, [], 'no problems')
  t.equal(result.kills, 3)
  t.ok(result.acknowledgedWrites > 0 && result.unanswered > 0, 'writes were acknowledged, and some were cut off by the kills')
  t.ok(result.acknowledgedVersions > 0, `${result.acknowledgedVersions} acknowledged versions checked as answered`)
})
