/**
 * API reference pages of large documents, in parts. Scalar prepares the whole document in the reader's
 * browser before it shows anything (a 2.5 MB document took 148 s to become usable on 2 cores, and a
 * 47 MB one would not finish), so a document over `splitAboveBytes` is served as an index of parts
 * (see documents/reference-split.ts), each a small complete document Scalar renders on its own page.
 *
 * The plan (which operations go in which part) is computed once per document checksum and each part
 * when first asked for, both in the reference worker (never on the event loop), and kept in memory:
 * a version's content never changes, so neither ever goes stale.
 */
import { LRUCache } from 'lru-cache'
import type { ReferenceWorkers } from '../../documents/reference-pool.js'
import type { PlannedPart, SplitLimits } from '../../documents/reference-split.js'
import { notFound } from '../../errors.js'
import type { VersionRecord } from '../../storage/registry-records.js'
import type { BlobStore } from '../../storage/records.js'
import { deriveSlug } from '../resources/slugs.js'

export interface ReferencePartsOptions {
  /** Documents whose stored text is larger are served in parts; 0: none is. */
  splitAboveBytes: number
  limits: SplitLimits
  /** Bytes of gzipped parts kept in memory. */
  cacheBytes: number
}

export const DEFAULT_REFERENCE_PARTS: ReferencePartsOptions = {
  splitAboveBytes: 1_000_000,
  limits: { maxOperations: 10, maxBytes: 500_000 },
  cacheBytes: 64 * 1024 * 1024,
}

/** One part as pages link to it. */
export interface ReferencePart {
  /** Unique within the document: the group's name as a slug, with `-2`, `-3`… for its later pieces. */
  slug: string
  name: string
  description: string | null
  piece: { index: number; of: number } | null
  operations: number
}

/** A planned part with its slug, and what the worker needs to build it. */
interface Planned extends ReferencePart {
  plan: Pick<PlannedPart, 'name' | 'operations'>
}

interface Plan {
  parts: Planned[]
  bySlug: Map<string, Planned>
}

function slugged(planned: PlannedPart[]): Plan {
  const taken = new Set<string>()
  const parts = planned.map((part): Planned => {
    const base = deriveSlug(part.name, 'operations')
    const wanted = part.piece && part.piece.index > 1 ? `${base}-${part.piece.index}` : base
    let slug = wanted
    for (let n = 2; taken.has(slug); n++) slug = `${wanted}-${n}`
    taken.add(slug)
    return {
      slug, name: part.name, description: part.description, piece: part.piece, operations: part.operations.length,
      plan: { name: part.name, operations: part.operations },
    }
  })
  return { parts, bySlug: new Map(parts.map((part) => [part.slug, part])) }
}

export class ReferenceParts {
  readonly #plans = new LRUCache<string, Plan>({ max: 16 })
  readonly #parts: LRUCache<string, Uint8Array>
  /** Work under way, so that concurrent readers of the same plan or part wait for one run. */
  readonly #running = new Map<string, Promise<unknown>>()

  constructor(
    private readonly blobs: BlobStore,
    private readonly workers: ReferenceWorkers,
    private readonly options: ReferencePartsOptions = DEFAULT_REFERENCE_PARTS,
  ) {
    this.#parts = new LRUCache({ maxSize: options.cacheBytes, sizeCalculation: (bytes) => Math.max(1, bytes.byteLength) })
  }

  /** Whether the version's reference is served in parts. */
  isSplit(version: VersionRecord): boolean {
    return this.options.splitAboveBytes > 0 && version.size > this.options.splitAboveBytes
  }

  /** The version's parts in reading order. */
  async parts(version: VersionRecord): Promise<ReferencePart[]> {
    return (await this.#plan(version)).parts.map(({ plan: _plan, ...part }) => part)
  }

  /** One part: where it sits among the others, and its document as gzipped JSON. 404 for an unknown slug. */
  async part(version: VersionRecord, slug: string): Promise<{ part: ReferencePart; gzipped: Uint8Array }> {
    const plan = await this.#plan(version)
    const planned = plan.bySlug.get(slug)
    if (!planned) throw notFound('part')
    const key = `${version.checksum} ${slug}`
    let gzipped = this.#parts.get(key)
    if (!gzipped) {
      gzipped = await this.#once(`part ${key}`, () => this.workers.part(version.checksum, planned.plan, () => this.#text(version)))
      this.#parts.set(key, gzipped)
    }
    const { plan: _plan, ...part } = planned
    return { part, gzipped }
  }

  async close(): Promise<void> {
    await this.workers.close()
  }

  async #plan(version: VersionRecord): Promise<Plan> {
    let plan = this.#plans.get(version.checksum)
    if (!plan) {
      plan = slugged(await this.#once(`plan ${version.checksum}`,
        () => this.workers.plan(version.checksum, this.options.limits, () => this.#text(version))))
      this.#plans.set(version.checksum, plan)
    }
    return plan
  }

  async #text(version: VersionRecord): Promise<Uint8Array> {
    return this.blobs.get(version)
  }

  #once<T>(key: string, work: () => Promise<T>): Promise<T> {
    let running = this.#running.get(key) as Promise<T> | undefined
    if (!running) {
      running = work().finally(() => this.#running.delete(key))
      this.#running.set(key, running)
    }
    return running
  }
}
