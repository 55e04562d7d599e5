import { sessionKeys } from './layout.js'
import type { SessionStore } from '../port.js'
import type { SessionRecord } from '../records.js'
import type { SessionDatabases } from './databases.js'
import type { LmdbAccess } from './transaction-view.js'

/** Today's `sessions` and `session-expiry` databases, with their keys. */
export class LmdbSessions implements SessionStore {
  constructor(private readonly access: LmdbAccess, private readonly db: SessionDatabases) {}

  async get(hash: string): Promise<SessionRecord | undefined> {
    return this.access.get(this.db.sessions, hash)
  }

  async expired(at: string, limit: number): Promise<string[]> {
    return this.access.range(this.db.sessionExpiry, { ...sessionKeys.expiredRange(at), limit }).map(({ key }) => (key as string[])[1])
  }

  async put(hash: string, session: SessionRecord): Promise<void> {
    const before = await this.get(hash)
    if (before) this.access.remove(this.db.sessionExpiry, sessionKeys.expiry(before.expires_at, hash))
    this.access.put(this.db.sessions, hash, session)
    this.access.put(this.db.sessionExpiry, sessionKeys.expiry(session.expires_at, hash), null)
  }

  async remove(hash: string): Promise<boolean> {
    const session = await this.get(hash)
    if (!session) return false
    this.access.remove(this.db.sessions, hash)
    this.access.remove(this.db.sessionExpiry, sessionKeys.expiry(session.expires_at, hash))
    return true
  }
}
