/**
 * What changed between versions (issue 20): the diff of two versions' documents, computed in a
 * document worker once per pair of checksums and kept in storage (like lint results, a pure function
 * of the two documents: no version, policy or resource is part of it).
 */
import { DIFF_VERSION, type Classification, type DiffResult } from '../../documents/diff/types.js'
import { changesPage, changeTotal, emptyCounts } from '../../documents/diff/result.js'
import { notFound } from '../../errors.js'
import type { BlobStore } from '../../storage/records.js'
import type { Storage } from '../../storage/port.js'
import type { PageRequest, ResourceKind, ResourceRecord, VersionRecord } from '../../storage/registry-records.js'
import type { DocumentProcessor, Tenant } from '../documents.js'
import { versionView } from '../resources/views.js'

/** One side of a comparison: a document's checksum, and its text when it has to be compared. */
export interface DiffSide {
  checksum: string
  text(): Promise<string>
}

export const NO_CHANGES: DiffResult = Object.freeze({ operations: [], entries: [], counts: emptyCounts() }) as DiffResult

/** The kinds whose versions are compared, and how the worker reads them. */
const DIFF_KIND = { api: 'openapi', schema: 'jsonschema' } as const
export type DiffableKind = keyof typeof DIFF_KIND

export function isDiffable(kind: ResourceKind): kind is DiffableKind {
  return kind === 'api' || kind === 'schema'
}

export interface VersionDiff {
  from: VersionRecord
  to: VersionRecord
  result: DiffResult
}

export class Changes {
  /** Comparisons running now, so that a pair asked for twice at once is compared once. */
  readonly #running = new Map<string, Promise<DiffResult>>()

  constructor(
    private readonly storage: Storage,
    private readonly blobs: BlobStore,
    private readonly documents: DocumentProcessor,
  ) {}

  /** The diff from one document to another (cached by their checksums); computed as `tenant`'s work. */
  async diff(kind: DiffableKind, from: DiffSide, to: DiffSide, tenant?: Tenant): Promise<DiffResult> {
    if (from.checksum === to.checksum) return NO_CHANGES
    const method = `${DIFF_KIND[kind]}/${DIFF_VERSION}`
    const cached = await this.storage.read.results.diff(method, from.checksum, to.checksum)
    if (cached) return cached
    const key = `${method} ${from.checksum} ${to.checksum}`
    let running = this.#running.get(key)
    if (!running) {
      running = this.compare(kind, method, from, to, tenant).finally(() => this.#running.delete(key))
      this.#running.set(key, running)
    }
    return running
  }

  private async compare(kind: DiffableKind, method: string, from: DiffSide, to: DiffSide, tenant: Tenant | undefined): Promise<DiffResult> {
    const [before, after] = await Promise.all([from.text(), to.text()])
    const result = await this.documents.diff({ kind: DIFF_KIND[kind], before, after }, tenant)
    await this.storage.transaction((tx) => tx.results.putDiff(method, from.checksum, to.checksum, result), tenant?.organization)
    return result
  }

  /** A stored version as one side of a comparison. */
  side(version: VersionRecord): DiffSide {
    return { checksum: version.checksum, text: async () => (await this.blobs.get(version)).toString('utf8') }
  }

  /**
   * Two versions of a resource by number (`to` defaults to the current one, `from` to the one before
   * `to`) and the diff between them.
   */
  async between(resource: ResourceRecord, fromNumber?: number, toNumber?: number, tenant?: Tenant): Promise<VersionDiff> {
    if (!isDiffable(resource.kind)) throw notFound('diff')
    const { versions } = this.storage.read
    const to = toNumber === undefined ? await versions.current(resource.id) : await versions.get(resource.id, toNumber)
    if (!to) throw notFound(toNumber === undefined ? 'current version' : `version ${toNumber}`)
    const wanted = fromNumber ?? to.number - 1
    const from = wanted >= 1 ? await versions.get(resource.id, wanted) : undefined
    if (!from) {
      throw notFound(fromNumber === undefined ? `a version before version ${to.number} (give 'from')` : `version ${fromNumber}`)
    }
    return { from, to, result: await this.diff(resource.kind, this.side(from), this.side(to), tenant) }
  }
}

/** The counts clients see: `non_breaking` in the field name, `non-breaking` as a class. */
export function summaryView(result: DiffResult): Record<string, number> {
  return { breaking: result.counts.breaking, non_breaking: result.counts['non-breaking'], annotation: result.counts.annotation }
}

/** Changes listed with a diff that is not paged (a dry run's), at most: breaking ones first. */
const SUMMARY_CHANGES = 100

/** The diff a dry run answers: from the current version, the counts and the first changes. */
export function diffSummaryView(from: VersionRecord, result: DiffResult): Record<string, unknown> {
  return { from: versionView(from), summary: summaryView(result), changes: changesPage(result, 0, SUMMARY_CHANGES), total: changeTotal(result) }
}

/** `GET …/diff`: both versions, the counts, and a page of the changes (optionally of one class). */
export function diffView(diff: VersionDiff, page: PageRequest, classification?: Classification): { data: Record<string, unknown>; total: number } {
  return {
    data: {
      from: versionView(diff.from),
      to: versionView(diff.to),
      summary: summaryView(diff.result),
      changes: changesPage(diff.result, page.offset, page.limit, classification),
    },
    total: changeTotal(diff.result, classification),
  }
}
