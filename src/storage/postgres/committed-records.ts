import { deepFreeze } from '../frozen.js'

/** Records kept at most; past it all are dropped (a replica's working set is far smaller). */
const KEPT_RECORDS = 20_000

/**
 * Records read outside transactions on every request (the key, its organization, the resource named),
 * parsed only when their stored text changed: the text is read from the database on every request, as
 * ever (a key revoked through another replica is refused on the next request), and compared with the
 * text of the record kept for the same lookup. The record is shared and frozen, so that the answers
 * built from it can be kept by its identity too (http/resource-json.ts), as on LMDB.
 */
export class CommittedRecords {
  readonly #kept = new Map<string, { text: string; record: unknown }>()

  /** The record stored as `text` (null: none), found by the lookup `slot`. */
  of<T>(slot: string, text: string | null): T | undefined {
    if (text === null) return undefined
    const kept = this.#kept.get(slot)
    if (kept && kept.text === text) return kept.record as T
    const record = deepFreeze(JSON.parse(text) as T)
    if (!kept && this.#kept.size >= KEPT_RECORDS) this.#kept.clear()
    this.#kept.set(slot, { text, record })
    return record
  }
}
