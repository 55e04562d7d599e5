import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from '../config.js'
import { DocumentWorkers, type WorkerObserver } from '../documents/pool.js'
import { FsBlobStore } from '../store/fs-blob-store.js'
import type { BlobStore, RegistryIndex } from '../store/interfaces.js'
import { LmdbIndex } from '../store/lmdb-index.js'
import type { DocumentProcessor } from './documents.js'
import { NO_METRICS, type DomainMetrics } from './metrics.js'
import { Organizations } from './organizations.js'
import { PublicRegistry } from './public-registry.js'
import { Resources } from './resources.js'
import { Uploads } from './uploads.js'
import { Versions } from './versions.js'

export type RegistryOptions = Pick<Config, 'storage' | 'workers' | 'lintTimeoutMs' | 'lintMemoryMb' | 'documentCacheBytes'>
  & Partial<Pick<Config, 'workerMaxRuns' | 'workerMaxHeapMb'>>

/** The whole domain, wired to a storage directory. */
export class Registry {
  readonly organizations: Organizations
  readonly resources: Resources
  readonly uploads: Uploads
  readonly versions: Versions
  readonly publicRegistry: PublicRegistry
  #closed = false

  constructor(
    readonly index: RegistryIndex,
    readonly blobs: BlobStore,
    readonly documents: DocumentProcessor,
    metrics: DomainMetrics = NO_METRICS,
  ) {
    this.organizations = new Organizations(index)
    this.uploads = new Uploads(index, blobs, documents, metrics)
    this.resources = new Resources(index, this.uploads, metrics)
    this.versions = new Versions(index, blobs, documents, undefined, metrics)
    this.publicRegistry = new PublicRegistry(index)
  }

  /** Opens a storage directory; `metrics` (optional) hears about the domain's work and the workers'. */
  static open(options: RegistryOptions, metrics?: DomainMetrics & WorkerObserver): Registry {
    mkdirSync(options.storage, { recursive: true })
    const index = new LmdbIndex(join(options.storage, 'index'))
    const blobs = new FsBlobStore(options.storage, { cacheBytes: options.documentCacheBytes })
    const documents = new DocumentWorkers({
      threads: options.workers, timeoutMs: options.lintTimeoutMs, memoryMb: options.lintMemoryMb,
      maxRuns: options.workerMaxRuns, maxHeapMb: options.workerMaxHeapMb, observer: metrics,
    })
    return new Registry(index, blobs, documents, metrics)
  }

  /** What `/readyz` reports: the index answers a read, and a worker can take a task. */
  readiness(): { storage: boolean; workers: boolean } {
    let storage = !this.#closed
    if (storage) {
      try {
        this.index.getOrganization('readyz')
      } catch {
        storage = false
      }
    }
    return { storage, workers: !this.#closed && this.documents.ready !== false }
  }

  async close(): Promise<void> {
    this.#closed = true
    await this.organizations.flushUse()
    await this.documents.close()
    await this.index.close()
  }
}
