/** Converting stored text between JSON and YAML for reads (`?format=yaml` on a JSON upload, and back). */
import { stringify } from 'yaml'
import type { DocumentFormat } from './types.js'
import { parseDocumentText } from './parse.js'

/**
 * Converts `text` from one format to the other; the same format returns the text untouched.
 * JSON output is compact `JSON.stringify`. YAML output is block style, 2-space indent, no line folding,
 * no anchors; strings are quoted wherever YAML 1.1 *or* 1.2 would read them as something else
 * (`"yes"`, `"on"`, `"2001-12-14"`, `"0777"` …), so older YAML 1.1 readers get the same data too.
 */
export function convertText(text: string, from: DocumentFormat, to: DocumentFormat): string {
  if (from === to) return text
  const { document } = parseDocumentText(text)
  if (to === 'json') return JSON.stringify(document)
  return yamlText(document)
}

/** A parsed document as YAML text, written as convertText writes it. */
export function yamlText(document: unknown): string {
  return stringify(document, {
    // The 1.1 schema quotes a superset of what 1.2 needs; the output reads the same under both.
    version: '1.1',
    indent: 2,
    lineWidth: 0,
    minContentWidth: 0,
    aliasDuplicateObjects: false,
    defaultStringType: 'PLAIN',
    defaultKeyType: 'PLAIN',
  })
}
