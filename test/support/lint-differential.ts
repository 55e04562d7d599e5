/**
 * The lint differential (issue 19 item 5; docs/lint.md): the registry's lint and plain Spectral lint
 * the same document with the same ruleset, each in its own worker thread
 * (lint-differential-worker.ts), and what they found must be the same: the findings as the registry
 * answers them (code, severity, path, message, in order), and Spectral's raw diagnostics behind them
 * (code, severity, path, message and range). Used by test/documents/lint-differential.test.ts on a
 * sample and by scripts/lint-differential.ts on the corpus.
 */
import { Worker } from 'node:worker_threads'
import type { Finding, RulesetInput } from '../../src/documents/types.js'

export type Side = 'registry' | 'spectral'

interface Position { line: number; character: number }

/** What Spectral reports, as `Spectral#run` answers it (only what a finding is made of). */
export interface Diagnostic {
  code: string | number
  severity: number
  path: (string | number)[]
  message: string
  range: { start: Position; end: Position }
}

/** `lineage`: the document is a version of that lineage, and the registry side re-lints it with the memo of the version before (as an upload is). */
export interface LintRequest { canonical: string; ruleset: RulesetInput; lineage?: string }

/** `relinted`: the registry side reused an earlier version's findings; its diagnostics are then those of the changed units only. */
export type LintReply = { findings: Finding[]; diagnostics: Diagnostic[]; ms: number; relinted?: boolean } | { error: string; ms: number }

/** A lint past the time limit: its thread is ended (Spectral cannot be interrupted otherwise). */
interface TimedOut { timedOut: true; ms: number }

export interface Difference {
  /** `findings`: the registry's answer; `diagnostics`: Spectral's raw results; `error`: a lint threw. */
  what: 'findings' | 'diagnostics' | 'error'
  /** The first place the two lists part (an index; the shorter list's length when one is a prefix). */
  at?: number
  registry: unknown
  spectral: unknown
}

export interface Comparison {
  /** The registry's findings (empty when a lint threw). */
  found: Finding[]
  /** Findings (and raw diagnostics) each side answered; 0 when a lint threw. */
  findings: number
  diagnostics: number
  registryMs: number
  spectralMs: number
  /** The registry side re-linted (findings compared; diagnostics not: a re-lint has no ranges of the parts it reused). */
  relinted?: boolean
  /** What both sides threw, when they threw the same (not a difference: Spectral itself fails so). */
  error?: string
  /** A side ran past the time limit: nothing was compared (the production pool ends such lints too). */
  timedOut?: boolean
  difference?: Difference
}

/**
 * The side's module runs under tsx (the tests and the script are TypeScript, never compiled): a new
 * thread does not inherit tsx's loader, so the thread's one-line script registers it first.
 */
const SCRIPT = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then(({ register }) => { register() })`
  + `.then(() => import(${JSON.stringify(new URL('./lint-differential-worker.ts', import.meta.url).href)}))`

/** One side's thread; a thread that dies (out of memory) fails its lint and is started again for the next. */
class SideThread {
  private worker: Worker | undefined
  private pending: { worker: Worker; resolve: (reply: LintReply | TimedOut) => void; started: number } | undefined

  constructor(private readonly side: Side) {}

  private start(): Worker {
    const worker = new Worker(SCRIPT, { eval: true, workerData: { side: this.side } })
    const fail = (reason: string) => {
      if (this.worker === worker) this.worker = undefined
      const pending = this.pending
      if (pending?.worker !== worker) return
      this.pending = undefined
      pending.resolve({ error: `the lint thread stopped: ${reason}`, ms: performance.now() - pending.started })
    }
    worker.on('message', (reply: LintReply) => {
      const pending = this.pending
      if (pending?.worker !== worker) return
      this.pending = undefined
      pending.resolve(reply)
    })
    worker.on('error', (err) => fail(err.message))
    worker.on('exit', (code) => fail(`exit code ${code}`))
    return worker
  }

  lint(request: LintRequest, timeoutMs: number): Promise<LintReply | TimedOut> {
    this.worker ??= this.start()
    const worker = this.worker
    const started = performance.now()
    return new Promise((resolve) => {
      const timer = Number.isFinite(timeoutMs)
        ? setTimeout(() => {
          if (this.pending?.worker !== worker) return
          this.pending = undefined
          this.worker = undefined
          void worker.terminate()
          resolve({ timedOut: true, ms: performance.now() - started })
        }, timeoutMs)
        : undefined
      this.pending = { worker, resolve: (reply) => { clearTimeout(timer); resolve(reply) }, started }
      worker.postMessage(request)
    })
  }

  async close(): Promise<void> {
    const worker = this.worker
    this.worker = undefined
    await worker?.terminate()
  }
}

const key = (d: Diagnostic): string => JSON.stringify([d.path, d.code, d.message, d.severity, d.range])

/** The first index where the lists differ (as JSON), or undefined when they are the same. */
function firstDifference(a: unknown[], b: unknown[]): number | undefined {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (JSON.stringify(a[i]) !== JSON.stringify(b[i])) return i
  return a.length === b.length ? undefined : n
}

export class LintDifferential {
  private readonly registry = new SideThread('registry')
  private readonly spectral = new SideThread('spectral')

  /** `timeoutMs`: the longest one side's lint may take (none by default). */
  constructor(private readonly timeoutMs = Infinity) {}

  /**
   * Lints one canonical document both ways, at the same time, and compares. With a lineage, the
   * registry side lints it as the next version of that lineage (a re-lint, when it applies).
   */
  async compare(canonical: string, ruleset: RulesetInput, lineage?: string): Promise<Comparison> {
    const [mine, theirs] = await Promise.all([
      this.registry.lint({ canonical, ruleset, lineage }, this.timeoutMs), this.spectral.lint({ canonical, ruleset }, this.timeoutMs),
    ])
    const times = { registryMs: mine.ms, spectralMs: theirs.ms }
    if ('timedOut' in mine || 'timedOut' in theirs) return { found: [], findings: 0, diagnostics: 0, ...times, timedOut: true }
    if ('error' in mine || 'error' in theirs) {
      const registry = 'error' in mine ? mine.error : `${mine.findings.length} findings`
      const spectral = 'error' in theirs ? theirs.error : `${theirs.findings.length} findings`
      return registry === spectral
        ? { found: [], findings: 0, diagnostics: 0, ...times, error: registry }
        : { found: [], findings: 0, diagnostics: 0, ...times, difference: { what: 'error', registry, spectral } }
    }
    const counts = {
      found: mine.findings, findings: mine.findings.length, diagnostics: mine.relinted ? 0 : mine.diagnostics.length, ...times, ...(mine.relinted && { relinted: true }),
    }
    const findingAt = firstDifference(mine.findings, theirs.findings)
    if (findingAt !== undefined) {
      return { ...counts, difference: { what: 'findings', at: findingAt, registry: mine.findings[findingAt] ?? '(no more findings)', spectral: theirs.findings[findingAt] ?? '(no more findings)' } }
    }
    if (mine.relinted) return counts
    // Spectral's own order of diagnostics is not what anyone sees (the findings are sorted): compared as sets.
    const sorted = (list: Diagnostic[]) => list.map((d) => ({ d, k: key(d) })).sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0)).map((x) => x.d)
    const a = sorted(mine.diagnostics)
    const b = sorted(theirs.diagnostics)
    const diagnosticAt = firstDifference(a, b)
    if (diagnosticAt !== undefined) {
      return { ...counts, difference: { what: 'diagnostics', at: diagnosticAt, registry: a[diagnosticAt] ?? '(no more diagnostics)', spectral: b[diagnosticAt] ?? '(no more diagnostics)' } }
    }
    return counts
  }

  /**
   * One side's lint alone, its findings and time (the bench times each side in turn: two lints at
   * once on shared cores would time each other).
   */
  lint(side: Side, canonical: string, ruleset: RulesetInput): Promise<LintReply | TimedOut> {
    return (side === 'registry' ? this.registry : this.spectral).lint({ canonical, ruleset }, this.timeoutMs)
  }

  async close(): Promise<void> {
    await Promise.all([this.registry.close(), this.spectral.close()])
  }
}
