/**
 * The key read every request makes (the key by its hash, its organization, and for a read of one
 * resource that resource), one statement for the requests that arrive together. Requests read in the
 * same turn of the event loop wait for the end of that turn (`setImmediate`), then one statement reads
 * for all of them: a round trip, a socket write and a backend wake-up for several requests instead of
 * one each. It stays as strict as a read per request: the statement is sent after every request in it
 * arrived, so whatever was committed before a request arrived (a key revoked through another replica)
 * is seen by it. A request alone is read with the statements of its own kind.
 */
import type { ResourceLookup } from '../port.js'
import { run, type Prepared, type Sql } from './sql.js'

/** A key's row and what was joined to it, as stored text (CommittedRecords parses it). */
export interface KeyTexts {
  key: string
  organization: string | null
  resource?: string | null
}

const KEY_BY_HASH_WITH_ORGANIZATION: Prepared = {
  name: 'key-by-hash-with-organization-text',
  text: 'SELECT k.record::text AS key, o.record::text AS organization FROM keys k LEFT JOIN organizations o ON o.id = k.organization_id WHERE k.hash = $1',
}
// The same with the resource a read names, so that `GET /v1/apis/{api}` makes one round trip, not two.
const withResource = (by: 'id' | 'slug'): Prepared => ({
  name: `key-by-hash-with-organization-and-resource-by-${by}-text`,
  text: `SELECT k.record::text AS key, o.record::text AS organization, r.record::text AS resource FROM keys k
    LEFT JOIN organizations o ON o.id = k.organization_id
    LEFT JOIN resources r ON r.${by} = $3 AND r.organization_id = k.organization_id AND r.kind = $2
    WHERE k.hash = $1`,
})
const KEY_WITH_RESOURCE = { id: withResource('id'), slug: withResource('slug') }

// Several reads at once: row `i` answers the i-th (1-based) lookup; a hash no key has gives no row.
const KEYS_TOGETHER: Prepared = {
  name: 'keys-by-hash-together-text',
  text: `SELECT l.i::int AS i, k.record::text AS key, o.record::text AS organization,
      COALESCE(by_id.record, by_slug.record)::text AS resource
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS l(hash, kind, id, slug, i)
    JOIN keys k ON k.hash = l.hash COLLATE "C"
    LEFT JOIN organizations o ON o.id = k.organization_id
    LEFT JOIN resources by_id ON by_id.id = l.id COLLATE "C" AND by_id.organization_id = k.organization_id AND by_id.kind = l.kind COLLATE "C"
    LEFT JOIN resources by_slug ON by_slug.slug = l.slug COLLATE "C" AND by_slug.organization_id = k.organization_id AND by_slug.kind = l.kind COLLATE "C"`,
}

interface Waiting {
  hash: string
  along: ResourceLookup | undefined
  resolve: (texts: KeyTexts | undefined) => void
  reject: (error: unknown) => void
}

/** One statement alone: a key read outside a batch (and inside a transaction). */
export async function readKey(sql: Sql, hash: string, along: ResourceLookup | undefined): Promise<KeyTexts | undefined> {
  const { rows: [found] } = along
    ? await run<KeyTexts>(sql, KEY_WITH_RESOURCE[along.by], [hash, along.kind, along.ref])
    : await run<KeyTexts>(sql, KEY_BY_HASH_WITH_ORGANIZATION, [hash])
  return found
}

export class KeyReads {
  #waiting: Waiting[] = []

  constructor(private readonly sql: Sql) {}

  read(hash: string, along: ResourceLookup | undefined): Promise<KeyTexts | undefined> {
    return new Promise((resolve, reject) => {
      if (this.#waiting.push({ hash, along, resolve, reject }) === 1) setImmediate(() => void this.#send())
    })
  }

  async #send(): Promise<void> {
    const batch = this.#waiting
    this.#waiting = []
    try {
      if (batch.length === 1) {
        batch[0].resolve(await readKey(this.sql, batch[0].hash, batch[0].along))
        return
      }
      const { rows } = await run<KeyTexts & { i: number }>(this.sql, KEYS_TOGETHER, [
        batch.map((w) => w.hash),
        batch.map((w) => w.along?.kind ?? null),
        batch.map((w) => (w.along?.by === 'id' ? w.along.ref : null)),
        batch.map((w) => (w.along?.by === 'slug' ? w.along.ref : null)),
      ])
      const found = new Map(rows.map((row) => [row.i, row]))
      batch.forEach((waiting, index) => {
        const row = found.get(index + 1)
        waiting.resolve(row && { key: row.key, organization: row.organization, ...(waiting.along && { resource: row.resource }) })
      })
    } catch (error) {
      for (const waiting of batch) waiting.reject(error)
    }
  }
}
