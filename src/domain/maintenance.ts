import { createHash } from 'node:crypto'
import { cp, mkdir, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { canonicalJson, checksumOf } from '../documents/canonical.js'
import { parseDocumentText } from '../documents/parse.js'
import type { BlobRef, BlobStore, RegistryIndex } from '../store/interfaces.js'

export interface VerifyReport {
  ok: boolean
  blobs: number
  versions: number
  problems: string[]
}

const refKey = (ref: BlobRef) => `${ref.checksum}.${ref.digest}.${ref.format}`

/**
 * Checks every blob against its name (the canonical checksum of its content) and every version in the
 * index against the blobs. Reads are not re-checked on the hot path: this is the guard against bytes
 * changed on disk.
 */
export async function verifyStorage(index: RegistryIndex, blobs: BlobStore): Promise<VerifyReport> {
  const problems: string[] = []
  const present = new Set<string>()
  let blobCount = 0
  for await (const ref of blobs.list()) {
    blobCount += 1
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
  for (const version of index.allVersions()) {
    versionCount += 1
    if (!present.has(refKey(version))) {
      problems.push(`version ${version.id} (${version.kind} ${version.resource_id} #${version.number}): blob ${refKey(version)} is missing`)
    }
    if (!index.getResource(version.resource_id)) problems.push(`version ${version.id}: its ${version.kind} ${version.resource_id} is missing`)
  }
  for (const version of index.mirroredVersions()) {
    if (!present.has(refKey(version)) && !index.getVersionById(version.id)) {
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
export async function collectGarbage(index: RegistryIndex, blobs: BlobStore, graceMs = 15 * 60_000): Promise<{ removed: number; bytesFreed: number }> {
  const cutoff = Date.now() - graceMs
  const candidates: BlobRef[] = []
  for await (const ref of blobs.list()) if (ref.modifiedMs < cutoff) candidates.push(ref)
  const referenced = new Set<string>()
  for (const version of index.allVersions()) referenced.add(refKey(version))
  for (const version of index.mirroredVersions()) referenced.add(refKey(version))
  let removed = 0
  let bytesFreed = 0
  for (const ref of candidates) {
    if (referenced.has(refKey(ref))) continue
    const freed = await blobs.remove(ref, cutoff)
    if (freed > 0) removed += 1
    bytesFreed += freed
  }
  bytesFreed += (await blobs.removeTemporaries?.(cutoff)) ?? 0
  return { removed, bytesFreed }
}

/**
 * A consistent, restorable copy while the server runs: first a snapshot of the index, then the blobs.
 * Blobs are immutable and written before the index commit that references them, so every blob the
 * snapshot names is already on disk when the copy of the blobs starts.
 */
export async function backupStorage(index: RegistryIndex, storage: string, destination: string): Promise<{ blobs: number }> {
  await mkdir(destination, { recursive: true })
  const existing = await readdir(destination)
  if (existing.length > 0) throw new Error(`backup destination ${destination} is not empty`)
  await index.backup(join(destination, 'index'))
  await cp(join(storage, 'blobs'), join(destination, 'blobs'), { recursive: true, errorOnExist: false, force: false })
    .catch((error: NodeJS.ErrnoException) => { if (error.code !== 'ENOENT') throw error })
  let count = 0
  const shards = await readdir(join(destination, 'blobs', 'sha256')).catch(() => [] as string[])
  for (const shard of shards) count += (await readdir(join(destination, 'blobs', 'sha256', shard))).length
  return { blobs: count }
}
