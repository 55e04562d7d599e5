/**
 * Where findings lie in the text a document was sent as (docs/api.md, "Findings"): the registry reports
 * findings by path into the parsed document, and a CI annotation or an editor needs the line and column
 * the author wrote. Used by the document worker for the answers to an upload, a dry run or a lint, and
 * by the CLI for the user's own file.
 *
 * A path that ends at a member points at its key (the line a reader looks for, `get:` under `/pets`);
 * an array item at the item. A path that goes on past what the text holds (a member that is missing, a
 * part bundled in from elsewhere, the inside of a YAML alias or merge key) stops at the deepest place
 * the text has: the object that lacks the member, the member whose `$ref` brought the part in, the
 * alias. So every path has a position.
 */
import { LineCounter } from 'yaml'
import { jsonOffsets } from './json-positions.js'
import type { DocumentFormat } from './types.js'
import { yamlOffsets } from './yaml-positions.js'

export interface Position {
  /** 1-based line in the text. */
  line: number
  /** 1-based column in that line, in UTF-16 code units (as JavaScript, JSON Schema and editors count). */
  column: number
}

export type DocumentPath = readonly (string | number)[]

/** A text starts like JSON and is JSON: the reading the registry's own parse gives it (parse.ts). */
function isJson(text: string): boolean {
  const start = text.search(/[^\s\ufeff]/)
  if (start === -1 || (text[start] !== '{' && text[start] !== '[')) return false
  try {
    JSON.parse(text.slice(start))
    return true
  } catch {
    return false
  }
}

function lineCounter(text: string): LineCounter {
  const lines = new LineCounter()
  lines.addNewLine(0)
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines.addNewLine(i + 1)
  return lines
}

/**
 * The position of each path in `text`, in order. `format` is the one the registry parsed the text as;
 * without it, the text is read as JSON when it is JSON, else as YAML (JSON is YAML 1.2, but reading a
 * JSON text as YAML costs some fifty times its size in memory, so JSON is scanned instead).
 */
export function locatePaths(text: string, paths: readonly DocumentPath[], format?: DocumentFormat): Position[] {
  const json = format === undefined ? isJson(text) : format === 'json'
  const offsets = json ? jsonOffsets(text, paths) : yamlOffsets(text, paths)
  const lines = lineCounter(text)
  return offsets.map((offset) => {
    const { line, col } = lines.linePos(offset)
    return { line, column: col }
  })
}
