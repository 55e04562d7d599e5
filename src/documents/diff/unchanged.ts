/**
 * Which parts of two versions of a document are unchanged, seen through their local `$ref`s: a part
 * is unchanged when it is equal in both and so is everything its references lead to, however far.
 * The diff skips such parts whole (a path item nothing in reaches a change reports nothing), so that
 * a new version that changes a few operations of a large document costs about their size, not the
 * document's (issue 20, figure 20b).
 */
import { fragmentSegments } from '../refs.js'
import { childPointer, deepEqual, type JsonDocument } from './json.js'

/** What a pointer holds in both documents: equal or not, and the references inside it. */
interface Part {
  equal: boolean
  /** The pointers its local references name (the same in both documents when `equal`). */
  targets: string[]
}

export class UnchangedParts {
  /** Pointer → its part, computed once. */
  readonly #parts = new Map<string, Part>()
  /** Pointer → whether everything reachable from it is equal, for pointers asked about. */
  readonly #answers = new Map<string, boolean>()

  constructor(private readonly before: JsonDocument, private readonly after: JsonDocument) {}

  /** True when the value at `ptr` is equal in both documents and so is everything its `$ref`s lead to. */
  at(ptr: string): boolean {
    const known = this.#answers.get(ptr)
    if (known !== undefined) return known
    // Everything reachable must be equal; a part already known unchanged needs no second walk.
    const seen = new Set<string>([ptr])
    const stack = [ptr]
    let answer = true
    while (answer && stack.length > 0) {
      const next = stack.pop()!
      if (next !== ptr && this.#answers.get(next) === true) continue
      const part = this.#part(next)
      if (!part.equal || this.#answers.get(next) === false) answer = false
      else {
        for (const target of part.targets) {
          if (seen.has(target)) continue
          seen.add(target)
          stack.push(target)
        }
      }
    }
    this.#answers.set(ptr, answer)
    return answer
  }

  #part(ptr: string): Part {
    let part = this.#parts.get(ptr)
    if (part) return part
    const before = this.before.at(ptr)
    const after = this.after.at(ptr)
    const refs = new Set<string>()
    // Missing in both: a reference there leads nowhere in either document, which the diff sees alike.
    const equal = before === undefined ? after === undefined : deepEqual(before, after, refs)
    const targets: string[] = []
    for (const ref of refs) {
      // Each hop of a chain is a part of its own, so a chain that changed anywhere is seen.
      const segments = ref.startsWith('#') ? fragmentSegments(ref) : null
      if (segments !== null) targets.push(segments.reduce(childPointer, ''))
    }
    part = { equal, targets }
    this.#parts.set(ptr, part)
    return part
  }
}
