/**
 * Console sign-in sessions: a session is found by the SHA-256 of its random id (the id itself is only
 * ever in the browser's HttpOnly cookie), and names the key it was opened with. Its own named
 * databases of the index's LMDB environment (`SESSION_DATABASES`); every method is async, so another
 * storage backend can take its place.
 */
import type { Database } from 'lmdb'
import type { RegistryIndex } from './interfaces.js'
import { SESSION_DATABASES, sessionKeys } from './layout.js'
import { LmdbIndex, type IndexKey } from './lmdb-index.js'

export interface SessionRecord {
  /** The key the session was opened with: its role, organization and revocation apply. */
  key_id: string
  organization_id: string
  created_at: string
  expires_at: string
}

export interface SessionStore {
  get(hash: string): Promise<SessionRecord | undefined>
  put(hash: string, session: SessionRecord): Promise<void>
  /** Answers false when there was no such session. */
  remove(hash: string): Promise<boolean>
  /** Removes up to `limit` sessions that expired at or before `at`; answers how many. */
  removeExpired(at: string, limit: number): Promise<number>
}

type Databases = { -readonly [name in keyof typeof SESSION_DATABASES]: Database<any, IndexKey> }

export class LmdbSessionStore implements SessionStore {
  private readonly db: Databases

  constructor(private readonly index: LmdbIndex) {
    this.db = index.databases(SESSION_DATABASES)
  }

  static of(index: RegistryIndex): LmdbSessionStore {
    return new LmdbSessionStore(LmdbIndex.require(index, 'sessions'))
  }

  async get(hash: string): Promise<SessionRecord | undefined> {
    return this.db.sessions.get(hash)
  }

  async put(hash: string, session: SessionRecord): Promise<void> {
    await this.index.transaction(() => {
      this.db.sessions.put(hash, session)
      this.db.sessionExpiry.put(sessionKeys.expiry(session.expires_at, hash), null)
    })
  }

  remove(hash: string): Promise<boolean> {
    return this.index.transaction(() => this.removeOne(hash))
  }

  removeExpired(at: string, limit: number): Promise<number> {
    return this.index.transaction(() => {
      let removed = 0
      for (const key of [...this.db.sessionExpiry.getKeys({ ...sessionKeys.expiredRange(at), limit })]) {
        this.db.sessionExpiry.remove(key)
        if (this.removeOne((key as string[])[1])) removed += 1
      }
      return removed
    })
  }

  /** Inside a write transaction. */
  private removeOne(hash: string): boolean {
    const session: SessionRecord | undefined = this.db.sessions.get(hash)
    if (!session) return false
    this.db.sessions.remove(hash)
    this.db.sessionExpiry.remove(sessionKeys.expiry(session.expires_at, hash))
    return true
  }
}
