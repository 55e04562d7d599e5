import type { ResourceKind, VersionSource } from '../registry-records.js'
import type { TallyStore } from '../port.js'
import type { StorageTallies } from '../features/tallies.js'
import type { IndexDatabases } from './databases.js'
import type { LmdbAccess } from './transaction-view.js'

/** Today's `tallies` database (keys `['blobs', 'count' | 'bytes']` and `['versions-written', kind, source]`). */
export class LmdbTallies implements TallyStore {
  constructor(private readonly access: LmdbAccess, private readonly db: IndexDatabases) {}

  async get(): Promise<StorageTallies> {
    const versionsWritten: StorageTallies['versionsWritten'] = []
    for (const { key, value } of this.access.range<number>(this.db.tallies, { start: ['versions-written'], end: ['versions-written', '\uffff'] })) {
      const [, kind, source] = key as [string, ResourceKind, VersionSource]
      versionsWritten.push({ kind, source, count: value })
    }
    const tally = (name: string): number => this.access.get<number>(this.db.tallies, ['blobs', name]) ?? 0
    // LMDB's own entry count: exact, and no read of the versions themselves.
    const versions = (this.db.versions.getStats() as { entryCount: number }).entryCount
    return { versions, versionsWritten, blobs: { count: tally('count'), bytes: tally('bytes') } }
  }

  async addBlobs(count: number, bytes: number): Promise<void> {
    if (count === 0 && bytes === 0) return
    const tallies = this.db.tallies
    this.access.atCommit(() => {
      tallies.put(['blobs', 'count'], (tallies.get(['blobs', 'count']) ?? 0) + count)
      tallies.put(['blobs', 'bytes'], (tallies.get(['blobs', 'bytes']) ?? 0) + bytes)
    })
  }
}
