/**
 * How far V8 lets a heap grow past what its last full collection kept, set for the document workers
 * (issue 19 item 3, figure 8 of docs/benchmarks.md).
 *
 * After each full (mark-compact) collection V8 sets the next one's trigger at the surviving heap times a
 * growing factor. The factor is worked out from the collector's and the program's measured speeds and is
 * capped at 4 for a heap with a large limit, as a worker's is (`REGISTRY_LINT_MEMORY_MB`, 4 GB by
 * default; V8 caps it lower only for limits of about 1 to 2 GB and less). A lint of the 5 MB generated
 * document keeps up to 350 MB alive, and a full collection can fall at any point of it: the linting
 * worker's heap then peaked at 540 to 865 MB and the server's resident memory at 757 to 1,085 MB from run
 * to run, the larger figures when other work on the machine changed the measured speeds
 * (bench/lint-memory.ts, docs/lint.md "Memory"). Most of that heap was garbage; with 50 % the worker's heap
 * peaked at 505 to 584 MB and the server at 722 to 803 MB.
 *
 * `--heap-growing-percent` fixes the factor at 1 + percent/100 instead. V8 reads it each time it sets a
 * trigger, so setting it when the worker starts is enough. It is a process-wide V8 flag, so it also holds
 * for the server's main thread once the first worker has started (its heap is small: under 100 MB in the
 * bench). The worker's heap limit (`resourceLimits`, pool.ts) is unchanged: a document the worker could
 * lint before still fits. The cost: a few more full collections per lint (about 5 % of the 5 MB lint's time).
 */
import { setFlagsFromString } from 'node:v8'

/** The heap may grow by half of what the last full collection kept (V8 still grows it by at least its minimum step). */
export const HEAP_GROWING_PERCENT = 50

let limited = false

/** True when node was started with a growing percent of its own (0 is V8's own heuristics; NODE_OPTIONS cannot carry it). */
export function growingPercentGiven(execArgv: readonly string[]): boolean {
  return execArgv.some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg))
}

/**
 * Sets the growing factor for this process's heaps, once (a worker module may be loaded again by
 * tests), unless node was started with `--heap-growing-percent` on its command line (a worker inherits
 * it): that one stays, and `--heap-growing-percent=0` gives V8's own heuristics back.
 */
export function limitHeapGrowth(): void {
  if (limited) return
  limited = true
  if (!growingPercentGiven(process.execArgv)) setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`)
}
