/**
 * The LMDB adapter of the storage port: the environment under `<storage>/index` and the file blob
 * store under `<storage>/blobs`, with optimistic transactions (transaction-view.ts).
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { FsBlobStore } from './fs-blob-store.js'
import { Lanes } from '../lanes.js'
import type { Election, ReadStores, Storage, Stores } from '../port.js'
import type { BlobStore } from '../records.js'
import { INDEX_FILE, openEnvironment, type LmdbEnvironment } from './databases.js'
import { LmdbMirrorJournal } from './mirror-journal.js'
import { OpenGate } from './open-gate.js'
import { DEFAULT_ATTEMPTS, optimistic } from './optimistic.js'
import { LmdbKeys, LmdbOrganizations } from './organizations.js'
import { LmdbResources } from './resources.js'
import { CommittedAccess, type LmdbAccess } from './transaction-view.js'
import { LmdbVersions } from './versions.js'
import { LmdbWebhooks } from './webhooks.js'
import { LmdbResults } from './results.js'
import { LmdbSessions } from './sessions.js'
import { LmdbSites } from './sites.js'
import { LmdbSdks } from './sdks.js'
import { LmdbRepositories } from './repositories.js'
import { LmdbSearch } from './search.js'
import { LmdbTallies } from './tallies.js'
import { LmdbSecrets } from './secrets.js'
import { WriterLock } from './writer-lock.js'

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
  private readonly listeners: ((what: { journal: boolean }) => void)[] = []
  private readonly attempts: number
  /** Keeps this process's opening and commits apart from other processes' (open-gate.ts). */
  private readonly gate: OpenGate

  /** Opens `<storage>/index` and `<storage>/blobs`. */
  constructor(private readonly directory: string, options: LmdbStorageOptions = {}) {
    this.gate = OpenGate.of(directory)
    this.environment = this.gate.opening(() => openEnvironment(directory))
    this.blobs = new FsBlobStore(directory, { cacheBytes: options.documentCacheBytes })
    this.attempts = options.attempts ?? DEFAULT_ATTEMPTS
    this.lanes = new Lanes()
    this.read = this.stores(new CommittedAccess(), () => {
      throw new Error('storage writes happen inside storage.transaction()')
    })
  }

  /** One transaction at a time per organization, organizations side by side (lanes.ts). */
  private readonly lanes: Lanes

  transaction<T>(work: (tx: Stores) => Promise<T>, lane = ''): Promise<T> {
    return this.lanes.run(lane, () => this.run(work))
  }

  /** Lanes with a transaction running or waiting (tests see that idle lanes are forgotten). */
  get activeLanes(): number {
    return this.lanes.active
  }

  private async run<T>(work: (tx: Stores) => Promise<T>): Promise<T> {
    let journaled = false
    const result = await optimistic(this.environment.root, (view) => {
      journaled = false
      return work(this.stores(view, () => { journaled = true }))
    }, this.attempts, this.gate)
    for (const listener of this.listeners) listener({ journal: journaled })
    return result
  }

  onCommit(listener: (what: { journal: boolean }) => void): void {
    this.listeners.push(listener)
  }

  /** One writer per storage directory: the lock file `git/writer.lock` (writer-lock.ts). */
  writerElection(): Election {
    return WriterLock.of(this.directory)
  }

  async snapshot(directory: string): Promise<void> {
    mkdirSync(directory, { recursive: true })
    await this.environment.root.backup(join(directory, INDEX_FILE), true)
  }

  async close(): Promise<void> {
    await this.environment.root.close()
  }

  private stores(access: LmdbAccess, journaled: () => void): Stores {
    const { index } = this.environment
    const holders = {
      mirror: new LmdbMirrorJournal(access, this.environment, journaled),
      webhooks: new LmdbWebhooks(access, this.environment.port, index),
      sdks: new LmdbSdks(access, this.environment),
      repositories: new LmdbRepositories(access, this.environment),
    }
    return {
      ...holders,
      organizations: new LmdbOrganizations(access, index),
      keys: new LmdbKeys(access, index),
      resources: new LmdbResources(access, index),
      versions: new LmdbVersions(access, index),
      results: new LmdbResults(access, index),
      sessions: new LmdbSessions(access, this.environment.sessions),
      sites: new LmdbSites(access, this.environment),
      search: new LmdbSearch(access, this.environment.search),
      tallies: new LmdbTallies(access, index),
      secrets: new LmdbSecrets(access, this.environment, holders),
    }
  }
}
