/**
 * The changelog of an API or a schema (issue 20): its versions newest first, each with what changed
 * from the version before it, counted and listed by class. Built from the same cached diffs as
 * `GET …/diff` (one per pair of documents, computed in the document workers the first time).
 */
import type { Classification, DiffResult, Operation } from '../../documents/diff/types.js'
import type { Tenant } from '../documents.js'
import { notFound } from '../../errors.js'
import type { Storage } from '../../storage/port.js'
import type { Page, PageRequest, ResourceRecord, VersionRecord } from '../../storage/registry-records.js'
import { isDiffable, summaryView, type Changes } from './changes.js'
import { versionView } from '../resources/views.js'

/** Changes listed per class in one changelog entry, at most (the summary counts them all). */
const LISTED_PER_CLASS = 50

/** One version in the changelog: the version, the one before it, and the diff between them. */
export interface ChangelogEntry {
  version: VersionRecord
  /** The version before it (none for the first). */
  previous: VersionRecord | null
  result: DiffResult | null
}

/** One listed change: a message, and the operations it is reported at (one entry for all of them). */
export interface ChangelogChange {
  check: string
  message: string
  operations: Operation[]
  component: string | null
}

export class Changelog {
  constructor(
    private readonly storage: Storage,
    private readonly changes: Changes,
  ) {}

  /** A page of a resource's changelog, newest first; its diffs are `tenant`'s work. */
  async page(resource: ResourceRecord, page: PageRequest, tenant?: Tenant): Promise<Page<ChangelogEntry>> {
    const kind = resource.kind
    if (!isDiffable(kind)) throw notFound('changelog')
    const versions = await this.storage.read.versions.list(resource.id, page)
    // One comparison at a time: each holds both documents' text while it waits for a worker, and a
    // page of 100 versions of a 5 MB document must not hold them all at once.
    const items: ChangelogEntry[] = []
    for (const version of versions.items) {
      const previous = version.number > 1 ? (await this.storage.read.versions.get(resource.id, version.number - 1)) ?? null : null
      const result = previous ? await this.changes.diff(kind, this.changes.side(previous), this.changes.side(version), tenant) : null
      items.push({ version, previous, result })
    }
    return { items, total: versions.total }
  }
}

/** The changes of one class in an entry, one per diff entry, in the diff's order. */
export function listedChanges(result: DiffResult | null, classification: Classification): ChangelogChange[] {
  if (!result) return []
  const listed: ChangelogChange[] = []
  for (const entry of result.entries) {
    if (entry.classification !== classification) continue
    if (listed.length >= LISTED_PER_CLASS) break
    listed.push({
      check: entry.check,
      message: entry.message,
      operations: (entry.operations ?? []).map((index) => result.operations[index]),
      component: entry.component ?? null,
    })
  }
  return listed
}

/** An entry as `GET …/changelog` answers it. */
export function changelogEntryView(entry: ChangelogEntry): Record<string, unknown> {
  return {
    version: versionView(entry.version),
    previous: entry.previous?.number ?? null,
    summary: entry.result ? summaryView(entry.result) : null,
    breaking: listedChanges(entry.result, 'breaking'),
    non_breaking: listedChanges(entry.result, 'non-breaking'),
  }
}
