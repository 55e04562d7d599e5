import { randomBytes } from 'node:crypto'
import { mkdir, open, readdir, readFile, rename, rm, stat, utimes } from 'node:fs/promises'
import { join } from 'node:path'
import { LRUCache } from 'lru-cache'
import type { DocumentFormat } from '../../documents/types.js'
import type { BlobRef, BlobStore } from '../records.js'

const CHECKSUM = /^sha256:([0-9a-f]{64})$/
const FILE_NAME = /^([0-9a-f]{64})\.([0-9a-f]{64})\.(json|yaml)$/
const DIGEST = /^[0-9a-f]{64}$/

/**
 * Immutable blobs on disk: `blobs/sha256/<two hex>/<canonical hex>.<bytes hex>.<format>`. The name
 * starts with the canonical checksum and carries the SHA-256 of the exact bytes, so the same text is
 * stored once however often it is uploaded, and every upload is served back in its own form.
 */
export class FsBlobStore implements BlobStore {
  readonly root: string
  private readonly tmp: string
  private readonly cache: LRUCache<string, Buffer> | undefined

  constructor(storage: string, options: { cacheBytes?: number } = {}) {
    this.root = join(storage, 'blobs')
    // Temporary files live inside the storage directory so that rename() never crosses file systems.
    this.tmp = join(storage, 'tmp')
    const maxSize = options.cacheBytes ?? 0
    this.cache = maxSize > 0 ? new LRUCache<string, Buffer>({ maxSize, sizeCalculation: (b) => Math.max(1, b.length) }) : undefined
  }

  pathOf(ref: BlobRef): string {
    const match = CHECKSUM.exec(ref.checksum)
    if (!match || !DIGEST.test(ref.digest)) throw new Error(`not a blob reference: ${ref.checksum} ${ref.digest}`)
    const hex = match[1]
    return join(this.root, 'sha256', hex.slice(0, 2), `${hex}.${ref.digest}.${ref.format}`)
  }

  async put(ref: BlobRef, bytes: string | Buffer): Promise<{ created: boolean; size: number }> {
    const data = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes
    const target = this.pathOf(ref)
    if (await touch(target)) return { created: false, size: data.length }
    await mkdir(this.tmp, { recursive: true })
    const temporary = join(this.tmp, `${randomBytes(12).toString('hex')}.tmp`)
    try {
      const handle = await open(temporary, 'wx')
      try {
        await handle.writeFile(data)
        await handle.sync()
      } finally {
        await handle.close()
      }
      const directory = join(target, '..')
      await mkdir(directory, { recursive: true })
      await rename(temporary, target)
      await syncDirectory(directory)
    } catch (error) {
      await rm(temporary, { force: true })
      throw error
    }
    this.cache?.set(this.cacheKey(ref), data)
    return { created: true, size: data.length }
  }

  async get(ref: BlobRef): Promise<Buffer> {
    const key = this.cacheKey(ref)
    const cached = this.cache?.get(key)
    if (cached) return cached
    const data = await readFile(this.pathOf(ref))
    this.cache?.set(key, data)
    return data
  }

  async has(ref: BlobRef): Promise<boolean> {
    return this.cache?.has(this.cacheKey(ref)) || exists(this.pathOf(ref))
  }

  async *list(): AsyncIterable<BlobRef & { size: number; modifiedMs: number }> {
    const base = join(this.root, 'sha256')
    for (const shard of await readdirOrEmpty(base)) {
      for (const name of await readdirOrEmpty(join(base, shard))) {
        const match = FILE_NAME.exec(name)
        if (!match) continue
        const { size, mtimeMs } = await stat(join(base, shard, name))
        yield { checksum: `sha256:${match[1]}`, digest: match[2], format: match[3] as DocumentFormat, size, modifiedMs: mtimeMs }
      }
    }
  }

  async remove(ref: BlobRef, unchangedSince?: number): Promise<number> {
    const freed = await removeFile(this.pathOf(ref), unchangedSince)
    if (freed > 0) this.cache?.delete(this.cacheKey(ref))
    return freed
  }

  async removeTemporaries(olderThan: number): Promise<number> {
    let freed = 0
    // One renamed into place (or removed) since it was listed was not left behind: removeFile answers 0.
    for (const name of await readdirOrEmpty(this.tmp)) if (name.endsWith('.tmp')) freed += await removeFile(join(this.tmp, name), olderThan)
    return freed
  }

  private cacheKey(ref: BlobRef): string {
    return `${ref.digest}.${ref.format}`
  }
}

/**
 * Deletes a file, only when it was last changed before `unchangedSince` (ms epoch) if given; answers
 * its size, or 0 when it was not there or is younger.
 */
async function removeFile(path: string, unchangedSince?: number): Promise<number> {
  try {
    const { size, mtimeMs } = await stat(path)
    if (unchangedSince !== undefined && mtimeMs >= unchangedSince) return 0
    await rm(path)
    return size
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0
    throw error
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
}

/** Sets a file's times to now; answers false when it does not exist. */
async function touch(path: string): Promise<boolean> {
  const at = new Date()
  try {
    await utimes(path, at, at)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
}

async function readdirOrEmpty(path: string): Promise<string[]> {
  try {
    return await readdir(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

/** Makes a rename durable: fsync the directory that holds the new name. */
async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
