import { createHash } from 'node:crypto'
import { constants } from 'node:fs'
import { copyFile, mkdir, readdir } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { canonicalJson, checksumOf } from '../../documents/canonical.js'
import { parseDocumentText } from '../../documents/parse.js'
import { RegistryError } from '../../errors.js'
import type { BlobRef, BlobStore } from '../../storage/records.js'
import type { ReadStores, Storage } from '../../storage/port.js'
import type { MirrorVersion, VersionRecord } from '../../storage/records.js'
import { NO_PROGRESS, type ProgressListener } from './progress.js'

export interface VerifyReport {
  ok: boolean
  blobs: number
  versions: number
  problems: string[]
}

const refKey = (ref: BlobRef) => `${ref.checksum}.${ref.digest}.${ref.format}`

/** Versions read a page at a time by verify and gc. */
const PAGE = 500

/** Every stored version, read through the storage port a page at a time. */
async function* storedVersions(read: ReadStores): AsyncGenerator<VersionRecord> {
  for (let page: VersionRecord[] = []; ;) {
    page = await read.versions.scan(page.at(-1), PAGE)
    yield* page
    if (page.length < PAGE) return
  }
}

/** The versions the git mirror's history holds, deleted resources' too (a rebuild writes their blobs again). */
async function* mirroredVersions(read: ReadStores): AsyncGenerator<MirrorVersion> {
  let after: Awaited<ReturnType<ReadStores['mirror']['historyVersions']>>['next']
  do {
    const page = await read.mirror.historyVersions(after, PAGE)
    yield* page.versions
    after = page.next
  } while (after !== undefined)
}

/**
 * Checks every blob against its name (the canonical checksum of its content) and every stored version
 * against the blobs. Reads are not re-checked on the hot path: this is the guard against bytes changed
 * on disk.
 */
export async function verifyStorage(storage: Storage, blobs: BlobStore = storage.blobs, progress: ProgressListener = NO_PROGRESS): Promise<VerifyReport> {
  const { read } = storage
  const problems: string[] = []
  const present = new Set<string>()
  const listed = await listBlobs(blobs, progress)
  let blobCount = 0
  for (const ref of listed) {
    blobCount += 1
    progress('checking blobs', blobCount, listed.length)
    present.add(refKey(ref))
    try {
      const bytes = await blobs.get(ref)
      const digest = createHash('sha256').update(bytes).digest('hex')
      if (digest !== ref.digest) problems.push(`blob ${refKey(ref)}: bytes have SHA-256 ${digest}`)
      const actual = checksumOf(canonicalJson(parseDocumentText(bytes.toString('utf8')).document))
      if (actual !== ref.checksum) problems.push(`blob ${refKey(ref)}: content has checksum ${actual}`)
    } catch (error) {
      problems.push(`blob ${refKey(ref)}: unreadable: ${(error as Error).message}`)
    }
  }
  let versionCount = 0
  const versions = (await read.tallies.get()).versions
  for await (const version of storedVersions(read)) {
    versionCount += 1
    progress('checking versions', versionCount, versions)
    if (!present.has(refKey(version))) {
      problems.push(`version ${version.id} (${version.kind} ${version.resource_id} #${version.number}): blob ${refKey(version)} is missing`)
    }
    if (!(await read.resources.get(version.resource_id))) problems.push(`version ${version.id}: its ${version.kind} ${version.resource_id} is missing`)
  }
  for await (const version of mirroredVersions(read)) {
    if (!present.has(refKey(version)) && !(await read.versions.byId(version.id))) {
      problems.push(`version ${version.id} of a deleted resource, in the git mirror's history: blob ${refKey(version)} is missing (a mirror rebuild cannot write it)`)
    }
  }
  return { ok: problems.length === 0, blobs: blobCount, versions: versionCount, problems }
}

/**
 * Removes blobs no version references, nor the git mirror's history (a deleted resource's documents
 * stay in it, as in any git history, and a rebuild writes them again). An upload writes (or, when the blob exists, touches) its blob
 * before the index transaction that references it, so: candidates are blobs older than `graceMs`;
 * the referenced set is read after listing them; and a candidate is removed only if it was still not
 * touched since the cutoff at the moment of removal. Temporary files older than `graceMs` (a crash in
 * the middle of a blob write leaves one) go too; their bytes count in `bytesFreed`, not in `removed`.
 */
export async function collectGarbage(
  storage: Storage, blobs: BlobStore = storage.blobs, graceMs = 15 * 60_000, progress: ProgressListener = NO_PROGRESS,
): Promise<{ removed: number; bytesFreed: number }> {
  const cutoff = Date.now() - graceMs
  const candidates = (await listBlobs(blobs, progress)).filter((ref) => ref.modifiedMs < cutoff)
  const referenced = new Set<string>()
  for await (const version of storedVersions(storage.read)) referenced.add(refKey(version))
  for await (const version of mirroredVersions(storage.read)) referenced.add(refKey(version))
  const unreferenced = candidates.filter((ref) => !referenced.has(refKey(ref)))
  let removed = 0
  let bytesFreed = 0
  for (const [i, ref] of unreferenced.entries()) {
    progress('removing unreferenced blobs', i + 1, unreferenced.length)
    const freed = await blobs.remove(ref, cutoff)
    if (freed > 0) removed += 1
    bytesFreed += freed
  }
  await storage.transaction((tx) => tx.tallies.addBlobs(-removed, -bytesFreed))
  bytesFreed += (await blobs.removeTemporaries?.(cutoff)) ?? 0
  return { removed, bytesFreed }
}

/** Every stored blob, listed first so that the work on them can say how far it is. */
async function listBlobs(blobs: BlobStore, progress: ProgressListener): Promise<(BlobRef & { size: number; modifiedMs: number })[]> {
  const listed: (BlobRef & { size: number; modifiedMs: number })[] = []
  for await (const ref of blobs.list()) {
    listed.push(ref)
    progress('listing blobs', listed.length)
  }
  return listed
}

/**
 * A consistent, restorable copy while the server runs: first a snapshot of the index, then the blobs.
 * Blobs are immutable and written before the index commit that references them, so every blob the
 * snapshot names is already on disk when the copy of the blobs starts.
 */
export async function backupStorage(
  port: Storage, storage: string, destination: string, progress: ProgressListener = NO_PROGRESS,
): Promise<{ blobs: number }> {
  if (!port.snapshot) throw new RegistryError('invalid_request', 'a registry on PostgreSQL is backed up with pg_dump (docs/storage.md), not registry backup')
  await mkdir(destination, { recursive: true })
  const existing = await readdir(destination)
  if (existing.length > 0) throw new Error(`backup destination ${destination} is not empty`)
  progress('index snapshot', 0, 1)
  await port.snapshot(join(destination, 'index'))
  progress('index snapshot', 1, 1)
  const files = await filesUnder(join(storage, 'blobs'))
  const made = new Set<string>()
  let copied = 0
  for (const [i, file] of files.entries()) {
    const target = join(destination, 'blobs', file)
    if (!made.has(dirname(target))) {
      await mkdir(dirname(target), { recursive: true })
      made.add(dirname(target))
    }
    // A blob a concurrent gc removed since the listing is one no version of the snapshot references.
    if (await copyFile(join(storage, 'blobs', file), target, constants.COPYFILE_EXCL).then(() => true, missing)) copied += 1
    progress('copying blobs', i + 1, files.length)
  }
  return { blobs: copied }
}

/** False for a file that is not there (ENOENT); any other error is thrown. */
function missing(error: NodeJS.ErrnoException): false {
  if (error.code === 'ENOENT') return false
  throw error
}

/** The files under a folder (none when it does not exist), as paths relative to it. */
async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch((error: NodeJS.ErrnoException) => missing(error) || [])
  return entries.filter((entry) => entry.isFile()).map((entry) => relative(root, join(entry.parentPath, entry.name))).sort()
}
