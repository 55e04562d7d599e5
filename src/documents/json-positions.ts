/**
 * Offsets of paths in a JSON text (positions.ts says which offset a path gets), in one scan that reads
 * only the members and items on the paths asked for and skips everything else: a large JSON document
 * is placed in a fraction of the time and none of the memory a YAML syntax tree of it would take.
 * The text is one JSON.parse accepted (the upload's digest did); anything else throws.
 */
import type { DocumentPath } from './positions.js'

/** The paths asked for, as a tree of their segments: which paths go through each member or item. */
interface Branch {
  children: Map<string, Branch>
  /** The indexes of the paths that go through this member or item. */
  through: number[]
}

function branchesOf(paths: readonly DocumentPath[]): Branch {
  const root: Branch = { children: new Map(), through: [] }
  paths.forEach((path, index) => {
    let branch = root
    for (const segment of path) {
      const key = String(segment)
      let child = branch.children.get(key)
      if (!child) branch.children.set(key, (child = { children: new Map(), through: [] }))
      child.through.push(index)
      branch = child
    }
  })
  return root
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
/** The next character that opens or closes a string or a container. */
const STRUCTURE = /["[\]{}]/g
/** The end of a number, `true`, `false` or `null`. */
const SCALAR_END = /[\s,\]}]/g

class Scanner {
  private pos = 0

  constructor(
    private readonly text: string,
    /** Where each path has got to so far: its deepest member key or item found. */
    private readonly offsets: number[],
  ) {}

  run(root: Branch): void {
    this.space()
    const start = this.pos
    this.offsets.fill(start)
    this.value(root)
  }

  /** Reads the value at the cursor, following the paths that go into it. */
  private value(branch: Branch): void {
    this.space()
    const c = this.text[this.pos]
    if (branch.children.size > 0 && c === '{') this.object(branch)
    else if (branch.children.size > 0 && c === '[') this.array(branch)
    else this.skip()
  }

  private object(branch: Branch): void {
    this.entries('}', () => {
      const keyStart = this.pos
      const key = this.string()
      this.space()
      this.expect(':')
      // A key met again takes over, as JSON.parse keeps the last one.
      this.member(branch.children.get(key), keyStart)
    })
  }

  private array(branch: Branch): void {
    this.entries(']', (index) => this.member(branch.children.get(String(index)), this.pos))
  }

  /** The members or items of the object or array at the cursor, up to `close`: `read` reads each one. */
  private entries(close: string, read: (index: number) => void): void {
    this.pos++
    this.space()
    if (this.text[this.pos] === close) {
      this.pos++
      return
    }
    for (let index = 0; ; index++) {
      this.space()
      read(index)
      if (!this.next(close)) return
    }
  }

  /** A member's or item's value: followed when paths go through it, which have got to `at`. */
  private member(child: Branch | undefined, at: number): void {
    if (!child) return this.skip()
    for (const index of child.through) this.offsets[index] = at
    this.value(child)
  }

  /** After a member or item: true at a comma (another follows), false past the closing `close`. */
  private next(close: string): boolean {
    this.space()
    if (this.text[this.pos] === ',') {
      this.pos++
      return true
    }
    this.expect(close)
    return false
  }

  /** The string at the cursor, decoded. */
  private string(): string {
    const start = this.pos
    if (this.text.charCodeAt(start) !== QUOTE) this.fail('a string')
    this.skipString()
    const token = this.text.slice(start, this.pos)
    return token.includes('\\') ? (JSON.parse(token) as string) : token.slice(1, -1)
  }

  private skipString(): void {
    let end = this.pos
    for (;;) {
      end = this.text.indexOf('"', end + 1)
      if (end === -1) this.fail('the end of a string')
      let backslashes = 0
      while (this.text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++
      if (backslashes % 2 === 0) break
    }
    this.pos = end + 1
  }

  /** Moves past the value at the cursor without reading it. */
  private skip(): void {
    this.space()
    const c = this.text[this.pos]
    if (c === '"') return this.skipString()
    if (c !== '{' && c !== '[') {
      SCALAR_END.lastIndex = this.pos
      this.pos = SCALAR_END.exec(this.text)?.index ?? this.text.length
      return
    }
    let depth = 0
    do {
      STRUCTURE.lastIndex = this.pos
      const found = STRUCTURE.exec(this.text)
      if (!found) this.fail('the end of a value')
      this.pos = found.index
      const s = found[0]
      if (s === '"') {
        this.skipString()
        continue
      }
      depth += s === '{' || s === '[' ? 1 : -1
      this.pos++
    } while (depth > 0)
  }

  private space(): void {
    const text = this.text
    let pos = this.pos
    for (;;) {
      const c = text.charCodeAt(pos)
      // space, tab, LF, CR, and a byte-order mark before the document
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0xfeff) break
      pos++
    }
    this.pos = pos
  }

  private expect(c: string): void {
    if (this.text[this.pos] !== c) this.fail(`'${c}'`)
    this.pos++
  }

  private fail(expected: string): never {
    throw new Error(`not the JSON text that was parsed: expected ${expected} at offset ${this.pos}`)
  }
}

export function jsonOffsets(text: string, paths: readonly DocumentPath[]): number[] {
  const offsets = new Array<number>(paths.length).fill(0)
  new Scanner(text, offsets).run(branchesOf(paths))
  return offsets
}
