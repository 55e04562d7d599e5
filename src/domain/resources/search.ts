/**
 * Search over an organization's APIs, schemas and rulesets (issue 17, item 11): names, slugs,
 * descriptions and what their current documents hold (title, description, paths, operation ids,
 * summaries, tags). Ranked (BM25, a name counts most), paged, typo-tolerant and by prefix, with
 * MiniSearch: an inverted index in memory, one per organization, built at its first search and then
 * kept up to date by the changes the index journals (the mirror's history), so a write by any process
 * (the CLI's import included) is found at the next search, and no document is read per query. What a
 * document holds is read once, in a worker, and kept by its checksum.
 */
import MiniSearch, { type SearchResult } from 'minisearch'
import type { Storage } from '../../storage/port.js'
import type { BlobStore, Page, PageRequest, ResourceKind, ResourceRecord, SearchTerms } from '../../storage/records.js'
import type { DocumentProcessor, Tenant } from '../documents.js'

export interface SearchHit {
  resource: ResourceRecord
  score: number
  /** The fields the query matched in (name, slug, description, title, document). */
  matched: string[]
}

export interface SearchQuery {
  q: string
  kind?: ResourceKind
  /** Public resources only (the public registry). */
  publicOnly?: boolean
}

interface Entry {
  id: string
  kind: ResourceKind
  visibility: string
  name: string
  slug: string
  description: string
  title: string
  about: string
  terms: string
}

const FIELDS = ['name', 'slug', 'description', 'title', 'about', 'terms'] as const
const FIELD_LABELS: Record<string, string> = { name: 'name', slug: 'slug', description: 'description', title: 'title', about: 'document', terms: 'document' }
const KINDS: ResourceKind[] = ['api', 'schema', 'ruleset']
const ALL = { offset: 0, limit: Number.MAX_SAFE_INTEGER }
const BUILD_BATCH = 64
const NO_TERMS: SearchTerms = { title: '', description: '', terms: [] }

/** Words, and the words inside camelCase and snake_case names (`listOrders` is also `list` and `orders`). */
export function tokenize(text: string): string[] {
  const words = text.split(/[^\p{L}\p{N}]+/u).filter(Boolean)
  const parts = words.flatMap((word) => {
    const inner = word.split(/(?<=\p{Ll})(?=\p{Lu})|(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})/u)
    return inner.length > 1 ? [word, ...inner] : [word]
  })
  return parts
}

interface OrganizationSearch {
  engine: MiniSearch<Entry>
  /** The last change of the organization's history applied. */
  seq: number
  /** Searches and catch-ups of one organization run one after the other. */
  queue: Promise<unknown>
}

export class Search {
  readonly #organizations = new Map<string, Promise<OrganizationSearch>>()

  constructor(
    private readonly storage: Storage,
    private readonly blobs: BlobStore,
    private readonly documents: DocumentProcessor,
  ) {}

  /** Ranked hits, best first; `total` counts every hit. */
  async search(organizationId: string, query: SearchQuery, page: PageRequest, tenant?: Tenant): Promise<Page<SearchHit>> {
    const organization = await this.organization(organizationId, tenant)
    const run = organization.queue.then(async () => {
      await this.catchUp(organizationId, organization, tenant)
      return organization.engine.search(query.q, {
        filter: (result) => (!query.kind || result.kind === query.kind) && (!query.publicOnly || result.visibility === 'public'),
      })
    })
    organization.queue = run.catch(() => undefined)
    const results = await run
    const items = (await Promise.all(results.slice(page.offset, page.offset + page.limit).map((result) => this.hit(result)))).flat()
    return { items, total: results.length }
  }

  private async hit(result: SearchResult): Promise<SearchHit[]> {
    const resource = await this.storage.read.resources.get(result.id as string)
    if (!resource) return []
    const matched = new Set(Object.values(result.match).flat().map((field) => FIELD_LABELS[field] ?? field))
    return [{ resource, score: result.score, matched: [...matched] }]
  }

  /** The organization's search index, built at its first search (as the work of the tenant searching). */
  private organization(organizationId: string, tenant: Tenant | undefined): Promise<OrganizationSearch> {
    let found = this.#organizations.get(organizationId)
    if (!found) {
      found = this.build(organizationId, tenant)
      found.catch(() => this.#organizations.delete(organizationId))
      this.#organizations.set(organizationId, found)
    }
    return found
  }

  private async build(organizationId: string, tenant: Tenant | undefined): Promise<OrganizationSearch> {
    // Changes after this point are applied by catchUp, so none is lost while the build reads.
    const seq = await this.storage.read.mirror.lastSeq(organizationId)
    const engine = new MiniSearch<Entry>({
      fields: [...FIELDS],
      storeFields: ['kind', 'visibility'],
      tokenize,
      searchOptions: {
        boost: { name: 4, slug: 3, title: 2, description: 1.5 },
        prefix: true,
        fuzzy: (term) => (term.length > 3 ? 0.2 : false),
        combineWith: 'AND',
        tokenize,
      },
    })
    for (const kind of KINDS) {
      const resources = (await this.storage.read.resources.list(organizationId, kind, ALL)).items
      // Documents not read before go to the workers a batch at a time, not one after the other.
      for (let start = 0; start < resources.length; start += BUILD_BATCH) {
        engine.addAll(await this.entries(resources.slice(start, start + BUILD_BATCH), tenant))
      }
    }
    return { engine, seq, queue: Promise.resolve() }
  }

  /** Applies the organization's changes since the last search: resources as they are now. */
  private async catchUp(organizationId: string, organization: OrganizationSearch, tenant: Tenant | undefined): Promise<void> {
    const touched = new Set<string>()
    for (const change of await this.storage.read.mirror.history(organizationId, organization.seq)) {
      touched.add(change.change === 'version' ? change.resource_id : change.resource.id)
      organization.seq = change.seq
    }
    const present: ResourceRecord[] = []
    for (const id of touched) {
      const resource = await this.storage.read.resources.get(id)
      if (organization.engine.has(id)) organization.engine.discard(id)
      if (resource) present.push(resource)
    }
    if (present.length > 0) organization.engine.addAll(await this.entries(present, tenant))
  }

  /** The resources' entries; the terms of documents not read before are kept, in one transaction. */
  private async entries(resources: ResourceRecord[], tenant: Tenant | undefined): Promise<Entry[]> {
    const fresh = new Map<string, SearchTerms>()
    const entries = await Promise.all(resources.map((resource) => this.entry(resource, fresh, tenant)))
    if (fresh.size > 0) {
      await this.storage.transaction(async (tx) => {
        for (const [checksum, terms] of fresh) await tx.search.putTerms(checksum, terms)
      })
    }
    return entries
  }

  private async entry(resource: ResourceRecord, fresh: Map<string, SearchTerms>, tenant: Tenant | undefined): Promise<Entry> {
    const document = await this.termsOf(resource, fresh, tenant)
    return {
      id: resource.id,
      kind: resource.kind,
      visibility: resource.visibility,
      name: resource.name,
      slug: resource.slug,
      description: resource.description ?? '',
      title: document.title,
      about: document.description,
      terms: document.terms.join('\n'),
    }
  }

  /** What the resource's current document holds: kept by checksum, read in a worker the first time (and added to `fresh`). */
  private async termsOf(resource: ResourceRecord, fresh: Map<string, SearchTerms>, tenant: Tenant | undefined): Promise<SearchTerms> {
    const version = await this.storage.read.versions.current(resource.id)
    if (!version) return NO_TERMS
    const kept = await this.storage.read.search.getTerms(version.checksum)
    if (kept) return kept
    const text = (await this.blobs.get(version)).toString('utf8')
    const terms = await this.documents.terms({ text }, tenant)
    fresh.set(version.checksum, terms)
    return terms
  }
}
