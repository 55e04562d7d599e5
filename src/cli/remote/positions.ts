import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml'

export interface Position {
  /** 1-based line in the text. */
  line: number
  /** 1-based column (characters) in that line. */
  column: number
}

/**
 * Where a JSON-pointer path lies in a document's own text, YAML or JSON alike (JSON is YAML 1.2): the
 * server reports findings by path into the parsed document, and CI annotations need the line the
 * author wrote. A path that ends at a member points at its key (the line a reader looks for); a path
 * that goes on past what the text holds (into a part bundled from another file, a member that is
 * missing) stops at the deepest place the text has: the `$ref`, or the object that lacks the member.
 */
export class TextPositions {
  private readonly lines = new LineCounter()
  private readonly root: Node | null

  constructor(text: string) {
    const document = parseDocument(text, { lineCounter: this.lines, uniqueKeys: false, strict: false })
    this.root = document.contents as Node | null
  }

  locate(path: readonly (string | number)[]): Position {
    let node: Node | null = this.root
    let offset = node?.range?.[0] ?? 0
    for (const segment of path) {
      if (isMap(node)) {
        const pair = node.items.find((item) => isPair(item) && isScalar(item.key) && String(item.key.value) === String(segment))
        if (!pair) break
        offset = (pair.key as Node).range?.[0] ?? offset
        node = pair.value as Node | null
      } else if (isSeq(node)) {
        const item = node.items[Number(segment)] as Node | undefined
        if (!item || !Number.isInteger(Number(segment))) break
        offset = item.range?.[0] ?? offset
        node = item
      } else break
    }
    const { line, col } = this.lines.linePos(offset)
    return { line, column: col }
  }
}
