/**
 * Issue 19's lint figures (docs/lint.md): the registry's lint against plain Spectral on the same
 * document in the same run, each in a worker thread of its own (the lint differential's two sides,
 * test/support/lint-differential.ts): the registry's as a document worker runs it (the validator cache
 * on, the compiled ruleset kept), and Spectral's own (its per-document Ajv instances, the ruleset
 * compiled for the lint, as the Spectral CLI does). Each side lints a warm-up document of the same
 * kind first, and the two are timed one after the other, never at once (the cores are shared). A
 * figure whose two sides found different things fails, whatever its time.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { canonicalJson, checksumOf } from '../src/documents/canonical.js'
import { DEFAULT_RULESET } from '../src/documents/defaults.js'
import { parseDocumentText } from '../src/documents/parse.js'
import type { Finding, RulesetInput } from '../src/documents/types.js'
import { LintDifferential } from '../test/support/lint-differential.js'

type Json = Record<string, unknown>

interface LintComparison {
  registryMs: number
  spectralMs: number
  /** Both sides found the same findings, in the same order (or threw the same). */
  same: boolean
  findings: number
}

const rulesetDocument = JSON.parse(JSON.stringify(DEFAULT_RULESET)) as Json
const DEFAULT_RULESET_INPUT: RulesetInput = { checksum: checksumOf(canonicalJson(rulesetDocument)), document: rulesetDocument }

const outcome = (reply: { findings: Finding[] } | { error: string } | { timedOut: true }): string =>
  'findings' in reply ? JSON.stringify(reply.findings) : 'error' in reply ? `threw ${reply.error}` : 'timed out'

/** Lints `document` both ways after `warmUp` (another document of the same kind), one side at a time. */
export async function lintBothWays(document: unknown, warmUp: unknown, ruleset = DEFAULT_RULESET_INPUT): Promise<LintComparison> {
  const differential = new LintDifferential()
  try {
    const canonical = canonicalJson(document)
    const warm = canonicalJson(warmUp)
    await differential.lint('registry', warm, ruleset)
    const mine = await differential.lint('registry', canonical, ruleset)
    await differential.lint('spectral', warm, ruleset)
    const theirs = await differential.lint('spectral', canonical, ruleset)
    return {
      registryMs: mine.ms, spectralMs: theirs.ms, same: outcome(mine) === outcome(theirs),
      findings: 'findings' in mine ? mine.findings.length : 0,
    }
  } finally {
    await differential.close()
  }
}

/**
 * A new version that changes one operation: the description and summary of the first operation of
 * the path item in the middle of `paths`, everything else as it was.
 */
export function withOneOperationChanged(document: Json): Json {
  const paths = document.paths as Record<string, Json>
  const names = Object.keys(paths)
  const name = names[Math.floor(names.length / 2)]
  const item = paths[name]
  const method = Object.keys(item).find((k) => ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'].includes(k))
  if (!method) throw new Error(`the path item ${name} has no operation`)
  const operation = item[method] as Json
  const changed = { ...operation, summary: `${String(operation.summary ?? '')} (changed)`, description: 'Changed in this version.' }
  return { ...document, paths: { ...paths, [name]: { ...item, [method]: changed } } }
}

/**
 * The corpus document of median size among the OpenAPI (and Swagger 2.0) documents of a directory,
 * and the next one up as its warm-up; undefined when the directory has fewer than two.
 */
export function medianCorpusDocuments(dir: string): { label: string; document: unknown; warmUp: unknown } | undefined {
  const files = readdirSync(dir).filter((f) => /\.(json|ya?ml)$/.test(f)).map((f) => join(dir, f))
    .map((path) => ({ path, bytes: statSync(path).size })).sort((a, b) => a.bytes - b.bytes)
  const isApi = (path: string): unknown => {
    try {
      const { document } = parseDocumentText(readFileSync(path, 'utf8'))
      const d = document as Json
      return d && typeof d === 'object' && (typeof d.openapi === 'string' || typeof d.swagger === 'string') ? document : undefined
    } catch {
      return undefined
    }
  }
  const picked: { path: string; document: unknown }[] = []
  for (let i = Math.floor(files.length / 2); i < files.length && picked.length < 2; i++) {
    const document = isApi(files[i].path)
    if (document !== undefined) picked.push({ path: files[i].path, document })
  }
  if (picked.length < 2) return undefined
  const bytes = files.find((f) => f.path === picked[0].path)!.bytes
  return { label: `${picked[0].path.split('/').pop()}, ${(bytes / 1000).toFixed(0)} KB`, document: picked[0].document, warmUp: picked[1].document }
}
