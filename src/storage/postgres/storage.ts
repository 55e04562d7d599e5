/**
 * The PostgreSQL adapter of the storage port (REGISTRY_DATABASE_URL=postgres://…): a pool, SERIALIZABLE
 * transactions run again on a serialization failure or a deadlock, and tables whose constraints keep
 * the data true whatever the code above does (migrations/).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { RegistryError } from '../../errors.js'
import { Lanes } from '../lanes.js'
import type { Election, ReadStores, Storage, Stores } from '../port.js'
import { PgBlobStore } from './blobs.js'
import { migrate } from './migrate.js'
import { PgMirrorJournal } from './mirror-journal.js'
import { PgKeys, PgOrganizations } from './organizations.js'
import { PgResources } from './resources.js'
import type { Sql } from './sql.js'
import { CommittedVersions, PgVersions } from './versions.js'
import { CommittedRecords } from './committed-records.js'
import { KeyReads } from './key-reads.js'
import { PgWebhooks } from './webhooks.js'
import { PgResults } from './results.js'
import { PgSessions } from './sessions.js'
import { PgSites } from './sites.js'
import { PgSdks } from './sdks.js'
import { PgRepositories } from './repositories.js'
import { PgSearch } from './search.js'
import { PgTallies } from './tallies.js'
import { PgSecrets } from './secrets.js'
import { answeringUnavailable, unavailableOr } from './unavailable.js'
import { AdvisoryLockElection } from './writer-election.js'

/** The database of REGISTRY_DATABASE_URL cannot be reached or refuses us: what start-up says, without the password. */
export class DatabaseUnavailable extends Error {
  constructor(url: string, cause: Error) {
    super(`cannot connect to the PostgreSQL database of REGISTRY_DATABASE_URL (${where(url)}): ${cause.message}`)
    this.name = 'DatabaseUnavailable'
  }
}

/** user@host:port/database of a connection URL, never its password. */
function where(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.username ? `${decodeURIComponent(parsed.username)}@` : ''}${parsed.host || 'localhost'}${parsed.pathname}`
  } catch {
    return 'an unreadable URL'
  }
}

/** SQLSTATEs after which the whole transaction runs again: serialization_failure, deadlock_detected. */
const RETRIED = new Set(['40001', '40P01'])
const DEFAULT_ATTEMPTS = 10

export interface PostgresStorageOptions {
  /** Connections of this replica's pool (default 10). */
  poolSize?: number
  /** How often a conflicting transaction runs before 409 `conflict` (default 10). */
  attempts?: number
}

export class PostgresStorage implements Storage {
  readonly kind = 'postgres'
  readonly blobs: PgBlobStore
  readonly read: ReadStores
  private readonly listeners: ((what: { journal: boolean }) => void)[] = []

  /** One transaction at a time per organization, organizations side by side (lanes.ts). */
  private readonly lanes = new Lanes()

  private constructor(private readonly url: string, private readonly pool: pg.Pool, private readonly attempts: number) {
    this.blobs = new PgBlobStore(pool)
    this.read = this.stores(pool, new PgMirrorJournal(pool), { versions: new CommittedVersions(), records: new CommittedRecords(), keyReads: new KeyReads(this.pool) })
  }

  /** Connects, applies the migrations this database has not run (refusing a newer schema), and answers the storage. */
  static async open(url: string, options: PostgresStorageOptions = {}): Promise<PostgresStorage> {
    const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 })
    // An idle connection the server dropped is replaced at the next query; without a listener its error would end the process.
    pool.on('error', () => {})
    try {
      const client = await pool.connect().catch((error: Error) => { throw new DatabaseUnavailable(url, error) })
      const release = listenWhileHeld(client)
      try {
        await migrate(client)
      } finally {
        release()
      }
    } catch (error) {
      await pool.end()
      throw error
    }
    // From here on, a database that cannot be reached is a 503 (unavailable.ts); at start it was DatabaseUnavailable.
    return new PostgresStorage(url, answeringUnavailable(pool), options.attempts ?? DEFAULT_ATTEMPTS)
  }

  transaction<T>(work: (tx: Stores) => Promise<T>, lane = ''): Promise<T> {
    return this.lanes.run(lane, () => this.run(work))
  }

  private async run<T>(work: (tx: Stores) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.connect().catch((error: unknown) => { throw unavailableOr(error) })
      const release = listenWhileHeld(client)
      try {
        await client.query('BEGIN ISOLATION LEVEL SERIALIZABLE')
        const journal = new PgMirrorJournal(client)
        const result = await work(this.stores(client, journal))
        // Last before COMMIT: the journal's numbers are taken under a lock held until the commit (mirror-journal.ts).
        const journaled = await journal.numberAppends()
        await client.query('COMMIT')
        release()
        for (const listener of this.listeners) listener({ journal: journaled })
        return result
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        release()
        const code = (error as { code?: string }).code
        if (code === undefined || !RETRIED.has(code)) throw translate(error)
        if (attempt >= this.attempts) {
          throw new RegistryError('conflict', `the change conflicted with concurrent changes ${this.attempts} times; try again`)
        }
        // A short random pause, longer each time, so that writers that keep colliding drift apart.
        await sleep(Math.random() * attempt * 5)
      }
    }
  }

  onCommit(listener: (what: { journal: boolean }) => void): void {
    this.listeners.push(listener)
  }

  /** One writer among every replica on this database: an advisory lock on a session of its own (writer-election.ts). */
  writerElection(): Election {
    return new AdvisoryLockElection(this.url)
  }

  async close(): Promise<void> {
    await this.pool.end()
  }

  /** `committed`: for the reads outside transactions (see PgVersions and PgKeys). */
  private stores(sql: Sql, mirror: PgMirrorJournal, committed?: { versions: CommittedVersions; records: CommittedRecords; keyReads: KeyReads }): Stores {
    const holders = {
      mirror,
      webhooks: new PgWebhooks(sql),
      sdks: new PgSdks(sql),
      repositories: new PgRepositories(sql),
    }
    return {
      ...holders,
      organizations: new PgOrganizations(sql),
      keys: new PgKeys(sql, committed?.records, committed?.keyReads),
      resources: new PgResources(sql),
      versions: new PgVersions(sql, committed?.versions),
      results: new PgResults(sql),
      sessions: new PgSessions(sql),
      sites: new PgSites(sql),
      search: new PgSearch(sql),
      tallies: new PgTallies(sql),
      secrets: new PgSecrets(sql, holders),
    }
  }
}

/**
 * A constraint the stores' own checks did not foresee (they check first, so this is a race the
 * serializable transaction did not turn into a retry, or a reference still in use) is a 409, not a 500.
 */
function translate(error: unknown): unknown {
  const { code, constraint } = error as { code?: string; constraint?: string }
  if (code === '23505') return new RegistryError('conflict', `already exists (${constraint})`)
  if (code === '23503') return new RegistryError('conflict', `still referenced, or refers to something missing (${constraint})`)
  return unavailableOr(error)
}

/**
 * Listens for the connection's errors while the client is out of the pool, and answers how to give it
 * back. pg-pool listens only while a client is idle: a session the server ends between two queries of
 * a transaction (a restart, an administrator's terminate) would be an uncaught 'error' that ends the
 * process. With a listener, the transaction's next query fails, answered as `unavailable`, and the
 * broken client is dropped, not pooled again.
 */
function listenWhileHeld(client: pg.PoolClient): () => void {
  let broken: Error | undefined
  const onError = (error: Error) => { broken = error }
  client.on('error', onError)
  return () => {
    client.off('error', onError)
    client.release(broken)
  }
}
