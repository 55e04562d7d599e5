import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from '../config.js'
import { DocumentWorkers } from '../documents/pool.js'
import { FsBlobStore } from '../store/fs-blob-store.js'
import type { BlobStore, RegistryIndex } from '../store/interfaces.js'
import { LmdbIndex } from '../store/lmdb-index.js'
import type { DocumentProcessor } from './documents.js'
import { Organizations } from './organizations.js'
import { PublicRegistry } from './public-registry.js'
import { Resources } from './resources.js'
import { Uploads } from './uploads.js'
import { Versions } from './versions.js'

export type RegistryOptions = Pick<Config, 'storage' | 'workers' | 'lintTimeoutMs' | 'lintMemoryMb' | 'documentCacheBytes'>

/** The whole domain, wired to a storage directory. */
export class Registry {
  readonly organizations: Organizations
  readonly resources: Resources
  readonly uploads: Uploads
  readonly versions: Versions
  readonly publicRegistry: PublicRegistry

  constructor(
    readonly index: RegistryIndex,
    readonly blobs: BlobStore,
    readonly documents: DocumentProcessor,
  ) {
    this.organizations = new Organizations(index)
    this.uploads = new Uploads(index, blobs, documents)
    this.resources = new Resources(index, this.uploads)
    this.versions = new Versions(index, blobs, documents)
    this.publicRegistry = new PublicRegistry(index)
  }

  static open(options: RegistryOptions): Registry {
    mkdirSync(options.storage, { recursive: true })
    const index = new LmdbIndex(join(options.storage, 'index'))
    const blobs = new FsBlobStore(options.storage, { cacheBytes: options.documentCacheBytes })
    const documents = new DocumentWorkers({
      threads: options.workers, timeoutMs: options.lintTimeoutMs, memoryMb: options.lintMemoryMb,
    })
    return new Registry(index, blobs, documents)
  }

  async close(): Promise<void> {
    await this.organizations.flushUse()
    await this.documents.close()
    await this.index.close()
  }
}
