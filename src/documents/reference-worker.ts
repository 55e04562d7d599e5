/**
 * The reference worker: parses a large document once, plans its reference parts and builds each part
 * when it is asked for, off the server's event loop. It keeps the last documents it parsed (a 47 MB
 * document takes seconds to parse and builds a part in a tenth of that); a task for a document it no
 * longer holds answers `needDocument`, and the pool sends it again with the document's text.
 */
import { gzipSync } from 'node:zlib'
import { move } from 'piscina'
import { parseDocumentText } from './parse.js'
import { planReference, referencePart, type PlannedPart, type SplitLimits } from './reference-split.js'

export type ReferenceTask = { checksum: string; text?: Uint8Array } & (
  | { op: 'plan'; limits: SplitLimits }
  | { op: 'part'; part: Pick<PlannedPart, 'name' | 'operations'> }
)

/** A part comes back as its gzipped JSON, moved to the caller rather than copied. */
export type ReferenceReply = { needDocument: true } | { plan: PlannedPart[] } | Uint8Array

/** Documents parsed last, by checksum, oldest first. */
const held = new Map<string, Record<string, unknown>>()
const HELD_DOCUMENTS = 2

function documentOf(task: ReferenceTask): Record<string, unknown> | undefined {
  const found = held.get(task.checksum)
  if (found) {
    held.delete(task.checksum)
    held.set(task.checksum, found)
    return found
  }
  if (!task.text) return undefined
  const text = Buffer.from(task.text.buffer, task.text.byteOffset, task.text.byteLength).toString('utf8')
  const { document } = parseDocumentText(text)
  const parsed = document !== null && typeof document === 'object' && !Array.isArray(document) ? document as Record<string, unknown> : {}
  held.set(task.checksum, parsed)
  if (held.size > HELD_DOCUMENTS) held.delete(held.keys().next().value!)
  return parsed
}

export default function run(task: ReferenceTask): ReferenceReply {
  const doc = documentOf(task)
  if (!doc) return { needDocument: true }
  if (task.op === 'plan') return { plan: planReference(doc, task.limits) }
  const gzipped = gzipSync(JSON.stringify(referencePart(doc, task.part)))
  return move(new Uint8Array(gzipped.buffer, gzipped.byteOffset, gzipped.byteLength)) as Uint8Array
}
