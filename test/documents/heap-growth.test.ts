import { execFileSync } from 'node:child_process'
import t from 'tap'
import { growingPercentGiven, HEAP_GROWING_PERCENT } from '../../src/documents/heap-growth.js'

t.test('a growing percent given to node is left as given', async (t) => {
  t.equal(growingPercentGiven([]), false)
  t.equal(growingPercentGiven(['--import', 'tsx', '--max-old-space-size=512']), false)
  t.equal(growingPercentGiven(['--heap-growing-percent=0']), true)
  t.equal(growingPercentGiven(['--heap_growing_percent=20']), true)
  t.equal(growingPercentGiven(['--heap-growing-percent-x=1']), false)
  t.ok(HEAP_GROWING_PERCENT > 0 && HEAP_GROWING_PERCENT < 100)
})

// V8 has no getter for a flag: what shows is the heap. The same program (it keeps about 80 MB and
// churns garbage) in two child processes: one where limitHeapGrowth sets the factor (1.5), one started
// with --heap-growing-percent=300 (a factor of 4, V8's own cap), which limitHeapGrowth leaves alone.
t.test('limitHeapGrowth makes the heap grow less between full collections', async (t) => {
  const program = `
    const { limitHeapGrowth } = await import(${JSON.stringify(new URL('../../src/documents/heap-growth.ts', import.meta.url).href)})
    const { getHeapStatistics } = await import('node:v8')
    limitHeapGrowth()
    const kept = []
    for (let i = 0; i < 16; i++) kept.push(new Array(128 * 1024).fill(i).map((n) => ({ n })))
    let largest = 0, sink
    for (let round = 0; round < 200; round++) {
      sink = new Array(64 * 1024).fill(round).map((n) => ({ n, s: String(n) }))
      largest = Math.max(largest, getHeapStatistics().total_heap_size)
    }
    console.log(JSON.stringify({ largest: Math.round(largest / 1048576), kept: kept.length, sink: sink.length }))`
  const largest = (flags: string[]) => JSON.parse(execFileSync(process.execPath, [...flags, '--import', 'tsx', '--input-type=module', '-e', program], { encoding: 'utf8' })).largest as number
  const limited = largest([])
  const four = largest(['--heap-growing-percent=300'])
  t.ok(limited * 1.5 < four, `the heap peaked at ${limited} MB, against ${four} MB with a factor of 4`)
})
