import { MirrorStore } from '../../store/mirror-store.js'
import type { MirrorJournalStore } from '../port.js'
import type { JournalChange, JournalEntry } from '../records.js'
import type { LmdbEnvironment } from './databases.js'
import type { LmdbAccess } from './transaction-view.js'

/** The journal's appends, written by today's MirrorStore (same sequence counter, entries and history). */
export function journalWriter(environment: LmdbEnvironment): MirrorStore {
  return new MirrorStore({
    database: (name) => environment.root.openDB({ name, cache: false }),
    transaction: () => { throw new Error('the port journals inside storage.transaction()') },
  })
}

export class LmdbMirrorJournal implements MirrorJournalStore {
  constructor(
    private readonly access: LmdbAccess,
    private readonly environment: LmdbEnvironment,
    private readonly writer: MirrorStore,
    private readonly appended: () => void,
  ) {}

  async pending(limit: number): Promise<JournalEntry[]> {
    return this.access.range<JournalEntry>(this.environment.mirror.journal, { limit }).map(({ value }) => value)
  }

  async append(organizationId: string, at: string, change: JournalChange): Promise<void> {
    // Commutative: the sequence number is taken from the counter as committed, under the write lock.
    this.access.atCommit(() => this.writer.append(organizationId, at, change))
    this.appended()
  }
}
