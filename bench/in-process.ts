/**
 * The in-process side of figures 4a/4c, in a worker thread of the bench: validation and lint of a
 * document without the registry. A worker keeps the bench's own event loop (its HTTP connections to
 * the registry) alive during a minute of Spectral.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { canonicalJson } from '../src/documents/canonical.js'
import { DEFAULT_RULESET } from '../src/documents/defaults.js'
import { lintDocument } from '../src/documents/lint.js'
import { validateOpenApi } from '../src/documents/openapi.js'
import { parseDocumentText } from '../src/documents/parse.js'

const RULESET = { checksum: `sha256:${'0'.repeat(64)}`, document: JSON.parse(JSON.stringify(DEFAULT_RULESET)) }

async function measure(text: string): Promise<number> {
  const canonical = canonicalJson(parseDocumentText(text).document)
  const began = performance.now()
  const { problems } = validateOpenApi(JSON.parse(canonical))
  if (problems.length) throw new Error(`invalid document: ${problems[0].message}`)
  await lintDocument(canonical, RULESET)
  return performance.now() - began
}

const { texts } = workerData as { texts: string[] }
const results: number[] = []
for (const text of texts) results.push(await measure(text))
parentPort!.postMessage(results)
