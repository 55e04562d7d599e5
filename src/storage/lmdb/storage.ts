/**
 * The LMDB adapter of the storage port: today's environment (`<storage>/index`) and file blob store
 * (`<storage>/blobs`), with optimistic transactions (transaction-view.ts).
 */
import { FsBlobStore } from '../../store/fs-blob-store.js'
import type { ReadStores, Storage, Stores } from '../port.js'
import type { BlobStore } from '../records.js'
import type { RootDatabase } from 'lmdb'
import { environmentOn, openEnvironment, type LmdbEnvironment } from './databases.js'
import { LmdbMirrorJournal, journalWriter } from './mirror-journal.js'
import { DEFAULT_ATTEMPTS, optimistic } from './optimistic.js'
import { LmdbKeys, LmdbOrganizations } from './organizations.js'
import { LmdbResources } from './resources.js'
import { CommittedAccess, type Key, type LmdbAccess } from './transaction-view.js'
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
  /** False when the environment was opened by someone else (`LmdbIndex`), who closes it. */
  private readonly ownsEnvironment: boolean

  /**
   * Opens `<storage>/index` and `<storage>/blobs`; or, given an environment already open and a blob
   * store, works on those (the registry shares `LmdbIndex`'s environment while features move over).
   */
  constructor(storage: string | { root: RootDatabase<any, Key>; blobs: BlobStore }, options: LmdbStorageOptions = {}) {
    this.ownsEnvironment = typeof storage === 'string'
    this.environment = typeof storage === 'string' ? openEnvironment(storage) : environmentOn(storage.root)
    this.journal = journalWriter(this.environment)
    this.blobs = typeof storage === 'string' ? new FsBlobStore(storage, { cacheBytes: options.documentCacheBytes }) : storage.blobs
    this.attempts = options.attempts ?? DEFAULT_ATTEMPTS
    this.read = this.stores(new CommittedAccess(), () => {
      throw new Error('storage writes happen inside storage.transaction()')
    })
  }

  /**
   * One transaction at a time in this process: they would otherwise conflict with each other (20
   * concurrent uploads to one API all read its last number) and run again until some gave up with
   * 409. Their work is storage reads and computation only, so the queue costs about one commit each;
   * conflicts are left to writers in other processes (the CLI), which are rare.
   */
  private tail: Promise<unknown> = Promise.resolve()

  transaction<T>(work: (tx: Stores) => Promise<T>): Promise<T> {
    const run = this.tail.then(() => this.run(work))
    this.tail = run.catch(() => undefined)
    return run
  }

  private async run<T>(work: (tx: Stores) => Promise<T>): Promise<T> {
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
    if (this.ownsEnvironment) await this.environment.root.close()
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
