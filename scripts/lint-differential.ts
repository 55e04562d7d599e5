/**
 * The lint differential over the corpus (issue 19 item 5; docs/lint.md, "The differential test"):
 * every OpenAPI document of the corpus (its MANIFEST.jsonl), and `--edits` seeded edits of each
 * (test/support/document-edits.ts), linted with every ruleset the registry accepts (the default
 * ruleset, `spectral:oas` recommended, and each ruleset file of the corpus that compiles) by the
 * registry's lint (validator cache on, warm) and by plain Spectral (cache off, ruleset compiled afresh),
 * comparing the findings and Spectral's diagnostics exactly: code, severity, path, message and range.
 * Each document's edits are linted in turn as new versions of it, so the registry re-lints them with
 * the memo of the version before, as an upload is linted (src/documents/incremental-lint.ts); for a
 * re-lint the findings are compared, not the diagnostics (a re-lint has no ranges for what it reused).
 *
 *   npm run lint:differential -- [--corpus DIR] [--edits N] [--seed N] [--min-bytes N] [--max-bytes N]
 *     [--documents TEXT] [--rulesets TEXT] [--minutes N] [--lint-timeout SECONDS] [--show N]
 *
 * The corpus is `--corpus`, else $LINT_DIFFERENTIAL_CORPUS, else ../shared/corpus next to the project.
 * Documents go smallest first, so `--minutes` (stop starting documents after that long) leaves out the
 * largest. A lint longer than `--lint-timeout` (120 s, the registry's default REGISTRY_LINT_TIMEOUT_MS)
 * is ended and not compared, and that ruleset is not run on that document's edits (a ruleset's
 * regular expression that backtracks without end on a document's paths does so on its edits too).
 * Exit status: 0 no difference, 1 a difference, 2 no corpus (or a bad option).
 */
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import cliProgress from 'cli-progress'
import { canonicalJson, checksumOf } from '../src/documents/canonical.js'
import { DEFAULT_RULESET } from '../src/documents/defaults.js'
import { parseDocumentText } from '../src/documents/parse.js'
import { compileRuleset } from '../src/documents/ruleset.js'
import type { RulesetInput } from '../src/documents/types.js'
import { documentEdits } from '../test/support/document-edits.js'
import { LintDifferential, type Difference } from '../test/support/lint-differential.js'

const project = resolve(dirname(fileURLToPath(import.meta.url)), '..')

function usage(message: string): never {
  process.stderr.write(`lint-differential: ${message}\n`)
  process.exit(2)
}

let options
try {
  options = parseArgs({
    options: {
      corpus: { type: 'string' },
      edits: { type: 'string', default: '3' },
      seed: { type: 'string', default: '1' },
      'min-bytes': { type: 'string' },
      'max-bytes': { type: 'string' },
      documents: { type: 'string' },
      rulesets: { type: 'string' },
      minutes: { type: 'string' },
      'lint-timeout': { type: 'string', default: '120' },
      show: { type: 'string', default: '5' },
    },
  }).values
} catch (err) {
  usage((err as Error).message)
}

function count(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isFinite(n) || n < 0) usage(`--${name} must be a number, not ${JSON.stringify(value)}`)
  return n
}

const corpus = resolve(options.corpus ?? process.env.LINT_DIFFERENTIAL_CORPUS ?? join(project, '..', 'shared', 'corpus'))
const editsPerDocument = Math.floor(count('edits', options.edits) ?? 3)
const seed = Math.floor(count('seed', options.seed) ?? 1)
const minBytes = count('min-bytes', options['min-bytes']) ?? 0
const maxBytes = count('max-bytes', options['max-bytes']) ?? Infinity
const minutes = count('minutes', options.minutes) ?? Infinity
const shown = Math.floor(count('show', options.show) ?? 5)
const lintTimeoutMs = (count('lint-timeout', options['lint-timeout']) ?? 120) * 1000

if (!existsSync(join(corpus, 'MANIFEST.jsonl'))) {
  usage(`no corpus at ${corpus} (no MANIFEST.jsonl there): give its directory with --corpus DIR or LINT_DIFFERENTIAL_CORPUS`)
}

// ------------------------------------------------------------------------------------------------
// Rulesets: the default one and every ruleset file of the corpus the registry accepts

interface NamedRuleset { name: string; input: RulesetInput }

function rulesetFiles(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir).sort().flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return rulesetFiles(path)
    return /\.(ya?ml|json)$/.test(name) ? [path] : []
  })
}

const rulesets: NamedRuleset[] = []
const refused: { name: string; reason: string }[] = []
const withRuleset = (name: string, document: unknown): NamedRuleset => ({ name, input: { checksum: checksumOf(canonicalJson(document)), document } })
rulesets.push(withRuleset('default (spectral:oas recommended)', JSON.parse(JSON.stringify(DEFAULT_RULESET))))
for (const path of rulesetFiles(join(corpus, 'rulesets'))) {
  const name = relative(corpus, path)
  try {
    const { document } = parseDocumentText(readFileSync(path, 'utf8'))
    compileRuleset(document)
    rulesets.push(withRuleset(name, document))
  } catch (err) {
    refused.push({ name, reason: (err as Error).message })
  }
}
const chosenRulesets = rulesets.filter((r) => options.rulesets === undefined || r.name.includes(options.rulesets))

// ------------------------------------------------------------------------------------------------
// Documents: the manifest's OpenAPI documents, smallest first

interface Entry { file: string; bytes: number }
const manifest: Entry[] = readFileSync(join(corpus, 'MANIFEST.jsonl'), 'utf8').split('\n').filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as Entry).filter((e) => e.file.startsWith('openapi/'))
const selected = manifest.filter((e) => options.documents === undefined || e.file.includes(options.documents))
const documents = selected.filter((e) => e.bytes >= minBytes && e.bytes <= maxBytes).sort((a, b) => a.bytes - b.bytes || (a.file < b.file ? -1 : 1))

/** A document's own seed: its edits do not depend on which other documents run. */
function seedOf(file: string): number {
  let h = seed >>> 0
  for (let i = 0; i < file.length; i++) h = Math.imul(h ^ file.charCodeAt(i), 0x01000193) >>> 0
  return h
}

// ------------------------------------------------------------------------------------------------

const differential = new LintDifferential(lintTimeoutMs)
const began = performance.now()
const totals = { documents: 0, notParsed: [] as string[], leftAtTimeLimit: 0, edits: 0, pairs: 0, findings: 0, diagnostics: 0, errors: 0, timedOut: 0, skipped: 0, registryMs: 0, spectralMs: 0, relinted: 0 }
const timedOut: string[] = []
const editKinds = new Map<string, number>()
const errorsSeen: string[] = []
const differences: { document: string; edit: string; ruleset: string; difference: Difference }[] = []

process.stdout.write(`lint differential: corpus ${corpus}\n`)
process.stdout.write(`rulesets: ${chosenRulesets.length} (${rulesets.length} accepted: the default and ${rulesets.length - 1} of the corpus's ${rulesets.length - 1 + refused.length} YAML and JSON files under rulesets/; ${refused.length} refused by the registry)\n`)
process.stdout.write(`documents: ${documents.length} of the manifest's ${manifest.length} OpenAPI documents${documents.length < selected.length ? ` (${selected.length - documents.length} outside --min-bytes ${minBytes} and --max-bytes ${maxBytes})` : ''}, ${editsPerDocument} edits each\n`)

const bar = new cliProgress.SingleBar({
  format: 'lint differential [{bar}] {value}/{total} documents, {pairs} lint pairs, {differences} differences, {file}',
  stream: process.stderr, noTTYOutput: true, notTTYSchedule: 30_000, hideCursor: false, etaBuffer: 20,
}, cliProgress.Presets.shades_classic)
bar.start(documents.length, 0, { pairs: 0, differences: 0, file: '' })

for (const entry of documents) {
  if ((performance.now() - began) / 60_000 >= minutes) {
    totals.leftAtTimeLimit = documents.length - totals.documents - totals.notParsed.length
    break
  }
  bar.update({ file: `${entry.file} (${Math.round(entry.bytes / 1024)} KB)` })
  let document: unknown
  try {
    document = parseDocumentText(readFileSync(join(corpus, entry.file), 'utf8')).document
  } catch (err) {
    totals.notParsed.push(`${entry.file}: ${(err as Error).message}`)
    bar.increment()
    continue
  }
  const variants = [{ edit: 'as published', document }, ...documentEdits(document, editsPerDocument, seedOf(entry.file)).map((e) => {
    editKinds.set(e.kind, (editKinds.get(e.kind) ?? 0) + 1)
    return { edit: `${e.kind}: ${e.description}`, document: e.document }
  })]
  totals.documents += 1
  totals.edits += variants.length - 1
  const tooSlow = new Set<string>()
  for (const variant of variants) {
    const canonical = canonicalJson(variant.document)
    for (const ruleset of chosenRulesets) {
      if (tooSlow.has(ruleset.name)) {
        totals.skipped += 1
        continue
      }
      // Each edit in turn as the next version of the document (a lineage): the registry re-lints it as an upload would.
      const result = await differential.compare(canonical, ruleset.input, entry.file)
      if (result.relinted) totals.relinted += 1
      if (result.timedOut) {
        totals.timedOut += 1
        tooSlow.add(ruleset.name)
        timedOut.push(`${entry.file}, ${variant.edit}, ruleset ${ruleset.name}`)
        continue
      }
      totals.pairs += 1
      totals.findings += result.findings
      totals.diagnostics += result.diagnostics
      totals.registryMs += result.registryMs
      totals.spectralMs += result.spectralMs
      if (result.error !== undefined && !result.difference) {
        totals.errors += 1
        if (errorsSeen.length < shown) errorsSeen.push(`${entry.file}, ${variant.edit}, ruleset ${ruleset.name}: ${result.error}`)
      }
      if (result.difference) differences.push({ document: entry.file, edit: variant.edit, ruleset: ruleset.name, difference: result.difference })
    }
  }
  bar.increment(1, { pairs: totals.pairs, differences: differences.length })
}
bar.stop()
await differential.close()

const seconds = (ms: number) => `${(ms / 1000).toFixed(0)} s`
const n = (x: number) => x.toLocaleString('en')
const lines = [
  '',
  `documents linted: ${n(totals.documents)}${totals.notParsed.length > 0 ? `, ${totals.notParsed.length} the registry cannot parse` : ''}${totals.leftAtTimeLimit > 0 ? `, ${totals.leftAtTimeLimit} (the largest) left at the --minutes ${minutes} limit` : ''}`,
  `edits: ${n(totals.edits)} (${[...editKinds].map(([kind, k]) => `${kind} ${k}`).join(', ')})`,
  `rulesets: ${chosenRulesets.length}`,
  `lint pairs (each document and edit with each ruleset, linted both ways): ${n(totals.pairs)}`,
  `findings compared: ${n(totals.findings)}; Spectral diagnostics compared (with ranges): ${n(totals.diagnostics)}`,
  `re-linted by the registry (a new version reusing the findings of the one before; findings compared, not diagnostics): ${n(totals.relinted)} lint pairs`,
  `lints that threw, the same on both sides: ${n(totals.errors)}`,
  `not compared: ${n(totals.timedOut)} lint pairs past --lint-timeout ${lintTimeoutMs / 1000} s, and ${n(totals.skipped)} pairs of the same ruleset on those documents' edits`,
  `differences: ${n(differences.length)}`,
  `time: ${seconds(performance.now() - began)} (lint time: registry ${seconds(totals.registryMs)}, plain Spectral ${seconds(totals.spectralMs)}; the two sides run at the same time)`,
]
for (const failed of totals.notParsed.slice(0, shown)) lines.push(`  not parsed: ${failed}`)
for (const error of errorsSeen) lines.push(`  threw on both sides: ${error}`)
for (const slow of timedOut.slice(0, shown)) lines.push(`  past the time limit: ${slow}`)
for (const d of differences.slice(0, shown)) {
  lines.push(`  DIFFERENCE in ${d.difference.what}${d.difference.at === undefined ? '' : ` at #${d.difference.at}`}: ${d.document}, ${d.edit}, ruleset ${d.ruleset}`)
  lines.push(`    registry: ${JSON.stringify(d.difference.registry)}`)
  lines.push(`    spectral: ${JSON.stringify(d.difference.spectral)}`)
}
process.stdout.write(`${lines.join('\n')}\n`)
process.exit(differences.length > 0 ? 1 : 0)
