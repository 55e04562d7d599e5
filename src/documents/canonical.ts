/** The canonical form of a document: the basis of its checksum (CONTRACT §5). */
import { createHash } from 'node:crypto'
import stableStringify from 'fast-json-stable-stringify'

/** JSON with keys sorted at every level and no whitespace. The document must be JSON data (no cycles). */
export function canonicalJson(doc: unknown): string {
  return stableStringify(doc)
}

/** `sha256:` + 64 lowercase hex digits of the canonical JSON (UTF-8). */
export function checksumOf(canonical: string): string {
  return 'sha256:' + createHash('sha256').update(canonical, 'utf8').digest('hex')
}
