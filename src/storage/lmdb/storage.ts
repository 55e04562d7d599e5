/**
 * The LMDB adapter of the storage port: today's environment (`<storage>/index`) and file blob store
 * (`<storage>/blobs`), with optimistic transactions (transaction-view.ts).
 */
import { FsBlobStore } from '../../store/fs-blob-store.js'
import type { ReadStores, Storage, Stores } from '../port.js'
import type { BlobStore } from '../records.js'
import { openEnvironment, type LmdbEnvironment } from './databases.js'
import { LmdbMirrorJournal, journalWriter } from './mirror-journal.js'
import { DEFAULT_ATTEMPTS, optimistic } from './optimistic.js'
import { LmdbKeys, LmdbOrganizations } from './organizations.js'
import { LmdbResources } from './resources.js'
import { CommittedAccess, type LmdbAccess } from './transaction-view.js'
import { LmdbVersions } from './versions.js'

export interface LmdbStorageOptions {
  /** Bytes of documents kept in memory by the blob store. */
  documentCacheBytes?: number
  /** How often a conflicting transaction runs before 409 `conflict` (default 10). */
  attempts?: number
}

export class LmdbStorage implements Storage {
  readonly kind = 'lmdb'
  readonly blobs: BlobStore
  readonly read: ReadStores
  private readonly environment: LmdbEnvironment
  private readonly journal: ReturnType<typeof journalWriter>
  private readonly listeners: ((what: { journal: boolean }) => void)[] = []
  private readonly attempts: number

  constructor(storage: string, options: LmdbStorageOptions = {}) {
    this.environment = openEnvironment(storage)
    this.journal = journalWriter(this.environment)
    this.blobs = new FsBlobStore(storage, { cacheBytes: options.documentCacheBytes })
    this.attempts = options.attempts ?? DEFAULT_ATTEMPTS
    this.read = this.stores(new CommittedAccess(), () => {
      throw new Error('storage writes happen inside storage.transaction()')
    })
  }

  async transaction<T>(work: (tx: Stores) => Promise<T>): Promise<T> {
    let journaled = false
    const result = await optimistic(this.environment.root, (view) => {
      journaled = false
      return work(this.stores(view, () => { journaled = true }))
    }, this.attempts)
    for (const listener of this.listeners) listener({ journal: journaled })
    return result
  }

  onCommit(listener: (what: { journal: boolean }) => void): void {
    this.listeners.push(listener)
  }

  async close(): Promise<void> {
    await this.environment.root.close()
  }

  private stores(access: LmdbAccess, journaled: () => void): Stores {
    const { index } = this.environment
    return {
      organizations: new LmdbOrganizations(access, index),
      keys: new LmdbKeys(access, index),
      resources: new LmdbResources(access, index),
      versions: new LmdbVersions(access, index),
      mirror: new LmdbMirrorJournal(access, this.environment, this.journal, journaled),
    }
  }
}
