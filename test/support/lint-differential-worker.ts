/**
 * One side of the lint differential (test/support/lint-differential.ts), in its own thread so that
 * each side keeps its own state for the whole run:
 * - `registry`: the registry's lint as a document worker runs it: the validator cache on and warm
 *   from every lint before, compiled rulesets kept by checksum, the resolver's dependency graph sped
 *   up (dependency-graph-speedup.ts), nimma's build for current engines (current-nimma.ts), the
 *   unique-items fast path (in the validator cache);
 * - `spectral`: plain Spectral: none of these (Spectral's own per-document Ajv instances, its own
 *   dependency graph, nimma's legacy build), and the ruleset compiled again for every lint.
 * Both go through `lintDocument`, so both answers have the same post-processing (severity filter,
 * the external `$ref` message, the order); Spectral's raw diagnostics, ranges included, are taken from
 * `Spectral#run` on the way.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { clearRulesetCache, lintDocument } from '../../src/documents/lint.js'
import { relintDocument } from '../../src/documents/incremental-lint.js'
import type { Finding, LintMemo } from '../../src/documents/types.js'
import { spectral } from '../../src/documents/spectral.js'
import { useDependencyGraphSpeedup } from '../../src/documents/dependency-graph-speedup.js'
import { useValidatorCache } from '../../src/documents/validator-cache.js'
import { useCurrentNimma } from '../../src/documents/current-nimma.js'
import type { Diagnostic, LintReply, LintRequest, Side } from './lint-differential.js'

const side = (workerData as { side: Side }).side
useValidatorCache(side === 'registry')
useDependencyGraphSpeedup(side === 'registry')

type Run = (this: unknown, ...args: unknown[]) => Promise<Diagnostic[]>
const prototype = spectral().core.Spectral.prototype as unknown as { run: Run }
useCurrentNimma(side === 'registry')
const run = prototype.run
let diagnostics: Diagnostic[] = []
prototype.run = async function (this: unknown, ...args: unknown[]) {
  const results = await run.apply(this, args)
  diagnostics = results.map(({ code, severity, path, message, range }) => ({ code, severity, path, message, range }))
  return results
}

/** The registry side's memos of one lineage (as the pool keeps them), by ruleset. */
let lineage: string | undefined
const memos = new Map<string, LintMemo>()

/** The registry's lint of a version of a lineage: a re-lint with the memo of the version before, as uploads are linted. */
async function relint(request: LintRequest): Promise<{ findings: Finding[]; relinted: boolean }> {
  if (request.lineage !== lineage) memos.clear()
  lineage = request.lineage
  const lint = await relintDocument(request.canonical, request.ruleset, memos.get(request.ruleset.checksum))
  if (lint.memo) memos.set(request.ruleset.checksum, lint.memo)
  return { findings: lint.findings, relinted: lint.reused !== undefined }
}

parentPort!.on('message', async (request: LintRequest) => {
  if (side === 'spectral') clearRulesetCache()
  diagnostics = []
  const started = performance.now()
  let reply: LintReply
  try {
    if (side === 'registry' && request.lineage !== undefined) {
      const { findings, relinted } = await relint(request)
      reply = { findings, diagnostics, ms: performance.now() - started, ...(relinted && { relinted }) }
    } else {
      const findings = await lintDocument(request.canonical, request.ruleset)
      reply = { findings, diagnostics, ms: performance.now() - started }
    }
  } catch (err) {
    reply = { error: err instanceof Error ? `${err.name}: ${err.message}` : String(err), ms: performance.now() - started }
  }
  parentPort!.postMessage(reply)
})
