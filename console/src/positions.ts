/**
 * Where a finding's path is in the text that was uploaded: the registry answers findings by JSON path
 * (it lints the parsed document), and the console, which has the text, finds the line. YAML 1.2 parses
 * JSON too, so one parser serves both formats. Loaded only when there are findings to place.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml'

export interface Position {
  /** Offsets into the text: the key of the deepest node found (or the value, in a list). */
  from: number
  to: number
  /** 1-based line of `from`. */
  line: number
  /** False when only a prefix of the path is in the text (a path inside a bundled $ref, say). */
  exact: boolean
}

export interface Located {
  /** Where a path is; undefined when the text does not parse or the path names nothing in it. */
  position(path: (string | number)[]): Position | undefined
  /** The text's syntax errors, with their offsets (for the editor's squiggles). */
  syntaxErrors: { from: number; to: number; message: string }[]
}

export function locate(text: string): Located {
  const lines = new LineCounter()
  const document = parseDocument(text, { lineCounter: lines, uniqueKeys: false, strict: false })
  const at = (from: number, to: number, exact: boolean): Position => ({ from, to, line: lines.linePos(from).line, exact })
  return {
    syntaxErrors: document.errors.map((error) => ({ from: error.pos[0], to: Math.max(error.pos[1], error.pos[0] + 1), message: error.message.split('\n')[0] })),
    position(path) {
      let node = document.contents as Node | null
      let range: [number, number] | undefined = node?.range ? [node.range[0], node.range[1]] : undefined
      let exact = true
      for (const segment of path) {
        if (isMap(node)) {
          const pair = node.items.find((item) => String(isScalar(item.key) ? item.key.value : item.key) === String(segment))
          if (!pair) { exact = false; break }
          const key = pair.key as Node | null
          if (key?.range) range = [key.range[0], key.range[1]]
          node = pair.value as Node | null
        } else if (isSeq(node)) {
          const item = node.items[Number(segment)] as Node | undefined
          if (!item) { exact = false; break }
          if (item.range) range = [item.range[0], item.range[1]]
          node = item
        } else {
          exact = false
          break
        }
      }
      return range ? at(range[0], range[1], exact) : undefined
    },
  }
}
