/**
 * The git mirror writer's election on PostgreSQL, among every replica on one database: a session-level
 * advisory lock (`pg_try_advisory_lock`) held on a connection of its own, outside the pool. PostgreSQL
 * releases it when that session ends, however it ends (the replica stopped, killed, or cut off and its
 * connection terminated), and the next replica that asks takes it over.
 */
import pg from 'pg'
import type { Election } from '../port.js'

/** The lock's key (the bytes of "mwrite"): one writer for the whole database. */
export const WRITER_LOCK_KEY = '120359788049509'

export class AdvisoryLockElection implements Election {
  private client: pg.Client | undefined
  private connecting: Promise<pg.Client> | undefined
  held = false

  constructor(private readonly url: string) {}

  async acquire(): Promise<boolean> {
    if (this.held) return true
    const client = await this.connection()
    const { rows: [row] } = await client.query<{ taken: boolean }>(`SELECT pg_try_advisory_lock(${WRITER_LOCK_KEY}) AS taken`)
    // A session lost while asking holds nothing: its end already cleared `client`.
    this.held = row.taken && this.client === client
    return this.held
  }

  private connection(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client)
    this.connecting ??= (async () => {
      // Keepalives: a replica cut off from the database notices that its session (and the lock) is gone.
      const client = new pg.Client({ connectionString: this.url, keepAlive: true })
      const lost = () => {
        if (this.client !== client) return
        this.client = undefined
        this.held = false
      }
      client.on('error', lost)
      client.on('end', lost)
      try {
        await client.connect()
      } finally {
        this.connecting = undefined
      }
      this.client = client
      return client
    })()
    return this.connecting
  }

  async release(): Promise<void> {
    const client = this.client
    this.client = undefined
    this.held = false
    // Ending the session releases the lock.
    await client?.end().catch(() => {})
  }
}
