/**
 * A `LISTEN` on one notification channel, on a session of its own outside the pool: what lets a
 * replica keep a cache without reading a stamp per request (issue 16, item 7). PostgreSQL signals the
 * listening sessions while the notifying transaction commits, before its writer is told of the commit,
 * so a change acknowledged to a client through one replica has been sent to the others by then.
 *
 * While the session is down (not yet connected, the server restarted, the connection cut) the watch is
 * not `live`, and the cache must check the stamp per request as it would without one; the session is
 * opened again with a growing pause, and `onChange` runs once it listens again, for whatever changed
 * while nobody listened.
 */
import pg from 'pg'
import type { ChangeWatch } from '../port.js'

const FIRST_RETRY_MS = 250
const LAST_RETRY_MS = 10_000

export class PgChangeWatch implements ChangeWatch {
  #live = false
  #closed = false
  #client: pg.Client | undefined
  #retryMs = FIRST_RETRY_MS
  #retry: NodeJS.Timeout | undefined

  constructor(private readonly url: string, private readonly channel: string, private readonly onChange: () => void) {
    void this.#listen()
  }

  get live(): boolean {
    return this.#live
  }

  async #listen(): Promise<void> {
    // Keepalives: a session cut off from the server is noticed, and the watch stops being live.
    const client = new pg.Client({ connectionString: this.url, keepAlive: true })
    this.#client = client
    const lost = () => {
      if (this.#client !== client) return
      this.#client = undefined
      this.#live = false
      client.end().catch(() => {})
      this.#again()
    }
    client.on('error', lost)
    client.on('end', lost)
    client.on('notification', (notice) => {
      if (notice.channel === this.channel && this.#client === client) this.onChange()
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${client.escapeIdentifier(this.channel)}`)
    } catch {
      lost()
      return
    }
    if (this.#client !== client) {
      // Closed (or lost) while connecting.
      await client.end().catch(() => {})
      return
    }
    this.#retryMs = FIRST_RETRY_MS
    this.#live = true
    this.onChange()
  }

  #again(): void {
    if (this.#closed) return
    this.#retry = setTimeout(() => void this.#listen(), this.#retryMs)
    this.#retry.unref()
    this.#retryMs = Math.min(this.#retryMs * 2, LAST_RETRY_MS)
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#live = false
    clearTimeout(this.#retry)
    const client = this.#client
    this.#client = undefined
    await client?.end().catch(() => {})
  }
}
