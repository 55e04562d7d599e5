import { LRUCache } from 'lru-cache'
import { RegistryError } from '../../errors.js'
import { parseDocumentText } from '../../documents/parse.js'
import { bufferOf, textOf } from '../../documents/text-bytes.js'
import type { CheckResult, ConvertedFrom, DigestAnswer, Digested, DocumentFormat, Finding, LocatedFinding, RulesetInput, TextBytes } from '../../documents/types.js'
import type { BlobStore } from '../../storage/records.js'
import type { ReadStores, Storage, Stores } from '../../storage/port.js'
import type { BlockingSeverity, ResourceKind, ResourceRecord, VersionRecord, VersionSource } from '../../storage/registry-records.js'
import { diffSummaryView, isDiffable, type Changes, type DiffSide } from '../changes/changes.js'
import { StaleGate, withGateRetries, type CompatibilityGate } from '../changes/compatibility.js'
import { companionOf, DOCUMENT_KIND, type DocumentInput, type DocumentProcessor, type Tenant } from '../documents.js'
import { locateFindings, sentTextOf, type SentText } from './finding-positions.js'
import { newId, now } from './ids.js'
import { blockingFindings, countFindings } from './lint-gate.js'
import { NO_METRICS, type DomainMetrics } from '../operations/metrics.js'
import { RegistryReferences } from './registry-refs.js'
import { severityOf } from './views.js'
import { appendVersion } from './versions.js'
import { reportEvent, resourceSummary } from '../events/outbox.js'

/** The refusals reported as `upload.blocked`: the lint gate and the compatibility gate. */
const BLOCKED = new Set(['lint_blocked', 'incompatible'])
/** Findings or breaking changes an `upload.blocked` event lists, at most (it counts them all). */
const BLOCKED_ERRORS_LISTED = 20

/** A document that passed digest, validation and (for APIs with a ruleset) lint, not yet stored. */
export interface PreparedDocument {
  checksum: string
  digest: string
  format: DocumentFormat
  /** The bytes to store (UTF-8). */
  text: TextBytes
  /** `text` was serialized from a JSON object (see DigestAnswer). */
  serialized?: true
  /** The document sent was this, and `text` is its OpenAPI 3 conversion (see DigestAnswer). */
  convertedFrom?: ConvertedFrom
  summary?: { openapi: string; title: string; version: string }
  lint?: { ruleset: ResourceRecord; rulesetVersion: VersionRecord; findings: Finding[] }
}

/** The ruleset an API is linted with: the ruleset and its current version. */
interface LintContext {
  ruleset: ResourceRecord
  version: VersionRecord
}

export type UploadOutcome = { version: VersionRecord; created: boolean }
export interface DryRunOutcome {
  checksum: string
  unchanged: boolean
  /** Each with its line and column in the text sent (see finding-positions.ts). */
  findings: LocatedFinding[]
  /** APIs and schemas with a current version the document differs from: the diff against it. */
  diff?: Record<string, unknown>
  /** APIs: what the document sent was converted from (the findings are then the conversion's, unplaced); else null. */
  converted_from?: ConvertedFrom | null
}

/** A digested upload as one side of a diff: its canonical JSON is the document. */
function candidateSide(digest: Digested<TextBytes>): DiffSide {
  return { checksum: digest.checksum, text: async () => textOf(digest.canonical) }
}

/**
 * The one upload path: canonical checksum first (an unchanged upload ends there), then validation and
 * lint in the worker pool, then the blob, then one index transaction that is the commit point.
 */
export class Uploads {
  /** Parsed ruleset documents by checksum: small, read on every linted upload. */
  private readonly rulesetDocuments = new LRUCache<string, { document: unknown }>({ max: 256 })
  /**
   * Per resource, the `raw` key of the last body that digested to a checksum (see DigestTask's
   * `currentRaw`). Used only while that checksum is still the current version's.
   */
  private readonly rawDigests = new LRUCache<string, { raw: string; checksum: string }>({ max: 10_000 })
  private readonly references: RegistryReferences

  constructor(
    private readonly storage: Storage,
    private readonly blobs: BlobStore,
    private readonly documents: DocumentProcessor,
    private readonly changes: Changes,
    private readonly compatibility: CompatibilityGate,
    private readonly metrics: DomainMetrics = NO_METRICS,
  ) {
    this.references = new RegistryReferences(storage, blobs)
  }

  /**
   * Uploads a document to an existing resource. The lint gate and the compatibility gate are decided
   * before the commit and checked again inside it: when the API's ruleset, its current version, the
   * threshold, the compatibility policy or the resource's current version changed meanwhile, the
   * document is checked again against the gates as they are now (a few times at most, then 409).
   * `guard`, when given, runs inside the commit's transaction first and may refuse it (a repository
   * sync's: only while it still holds its lease). The document work is `tenant`'s (see Tenant).
   */
  async upload(
    resource: ResourceRecord, input: DocumentInput, source: VersionSource = 'upload', guard?: (tx: Stores) => Promise<void>, tenant?: Tenant,
  ): Promise<UploadOutcome> {
    try {
      return await this.publish(resource, input, source, guard, tenant)
    } catch (error) {
      if (error instanceof RegistryError && BLOCKED.has(error.code)) await this.reportBlocked(resource, source, error)
      throw error
    }
  }

  /**
   * `upload.blocked` in a transaction of its own: a refused upload stores nothing else. Reported before
   * the 422 is answered, so a client that sees the refusal can count on the event.
   */
  private async reportBlocked(resource: ResourceRecord, source: VersionSource, error: RegistryError): Promise<void> {
    const errors = error.errors ?? []
    await reportEvent(this.storage, resource.organization_id, 'upload.blocked', {
      resource: resourceSummary(resource), source, code: error.code, detail: error.message,
      errors: errors.slice(0, BLOCKED_ERRORS_LISTED), total_errors: errors.length,
    })
  }

  private async publish(
    resource: ResourceRecord, input: DocumentInput, source: VersionSource, guard: ((tx: Stores) => Promise<void>) | undefined, tenant: Tenant | undefined,
  ): Promise<UploadOutcome> {
    const current = await this.storage.read.versions.current(resource.id)
    const known = this.rawDigests.get(resource.id)
    const digest = await this.documents.digest({
      ...input, kind: DOCUMENT_KIND[resource.kind],
      currentChecksum: current?.checksum ?? null, currentRaw: known && known.checksum === current?.checksum ? known.raw : null,
    }, tenant)
    if (digest.raw) this.rawDigests.set(resource.id, { raw: digest.raw, checksum: digest.checksum })
    if (digest.unchanged) return { version: current!, created: false }
    let validated = false
    const candidate = candidateSide(digest)
    return withGateRetries(async () => {
      const { read } = this.storage
      const latest = (await read.resources.get(resource.id)) ?? resource
      // The compatibility gate's diff runs beside validation and lint, on a worker the organization's cap
      // leaves free while nobody else waits (a companion task); its refusal counts only once the document
      // passed them. Its result is kept by checksum either way.
      const compatibilityDecision = this.compatibility.check(latest, candidate, companionOf(tenant))
      compatibilityDecision.catch(() => undefined)
      const prepared = await this.check(latest, digest, await this.lintContext(read, latest), validated, tenant)
      validated = true
      // A repository sync's text is the registry's own bundle: its findings are not placed in it.
      const gate = await this.refuseBlocked(read, latest, prepared, source === 'upload' ? sentTextOf(prepared) : undefined, tenant)
      const compatibility = await compatibilityDecision
      // The blob first: the transaction below is the commit point that refers to it.
      await this.storeBlob(prepared, resource.organization_id)
      // The decisions, on the state the commit is checked against: the unchanged-upload no-op, the lint
      // gate, the compatibility gate and the next number.
      return appendVersion(this.storage, resource, async (now, nowCurrent, tx) => {
        await guard?.(tx)
        if (nowCurrent?.checksum === prepared.checksum) return { unchanged: nowCurrent }
        if (!(await this.sameGate(tx, now, prepared, gate)) || !this.compatibility.holds(now, nowCurrent, compatibility)) throw new StaleGate()
        return { version: this.versionRecord(now, now.last_number + 1, prepared, source) }
      })
    }, `the ${resource.kind === 'api' ? "API's lint gate, compatibility or current version" : `${resource.kind}'s compatibility or current version`} kept changing during the upload; retry it`)
  }

  /** True when the lint gate that applies now is the one `prepared` passed. */
  private async sameGate(stores: ReadStores, api: ResourceRecord, prepared: PreparedDocument, gate: BlockingSeverity): Promise<boolean> {
    const lint = await this.lintContext(stores, api)
    if (!lint && !prepared.lint) return true
    return lint?.version.id === prepared.lint?.rulesetVersion.id && (await thresholdOf(stores, api)) === gate
  }

  /**
   * Validates, lints and checks compatibility without storing anything (`?dry_run=true`): the same
   * 422 as the upload would answer, else the findings and the diff against the current version.
   */
  async dryRun(resource: ResourceRecord, input: DocumentInput, tenant?: Tenant): Promise<DryRunOutcome> {
    const { read } = this.storage
    const current = await read.versions.current(resource.id)
    const digest = await this.digestNew(input, resource.kind, tenant)
    const prepared = await this.check(resource, digest, await this.lintContext(read, resource), false, tenant)
    const sent = sentTextOf(prepared)
    await this.refuseBlocked(read, resource, prepared, sent, tenant)
    const candidate = candidateSide(digest)
    await this.compatibility.check(resource, candidate, tenant)
    const outcome: DryRunOutcome = {
      checksum: prepared.checksum,
      unchanged: current?.checksum === prepared.checksum,
      findings: await locateFindings(this.documents, sent, prepared.lint?.findings ?? [], tenant),
    }
    if (current && !outcome.unchanged && isDiffable(resource.kind)) {
      outcome.diff = diffSummaryView(current, await this.changes.diff(resource.kind, this.changes.side(current), candidate, tenant))
    }
    if (resource.kind === 'api') outcome.converted_from = prepared.convertedFrom ?? null
    return outcome
  }

  /** Digest and check a document for a resource that does not exist yet (create with `document`). */
  async prepareNew(kind: ResourceKind, input: DocumentInput, tenant?: Tenant): Promise<PreparedDocument> {
    return this.check({ kind }, await this.digestNew(input, kind, tenant), undefined, false, tenant)
  }

  /**
   * Digests a document without comparing it to a current version (so it is never `unchanged`); as an
   * upload to `kind` (an API's converts Swagger 2.0 and Postman), or as it is (the lint route).
   */
  private async digestNew(input: DocumentInput, kind: ResourceKind | undefined, tenant: Tenant | undefined): Promise<Digested<TextBytes>> {
    const digest = await this.documents.digest({ ...input, ...(kind && { kind: DOCUMENT_KIND[kind] }), currentChecksum: null }, tenant)
    if (digest.unchanged) throw new Error('digest without currentChecksum answered unchanged')
    return digest
  }

  /**
   * Stores a prepared document's blob (tallied when new); the caller's transaction follows. The tally
   * commits in the lane of the organization uploading, so that another organization's upload never
   * waits behind one organization's burst of them (storage lanes).
   */
  async storeBlob(prepared: PreparedDocument, lane: string): Promise<void> {
    const { created, size } = await this.blobs.put(prepared, bufferOf(prepared.text))
    if (created) await this.storage.transaction((tx) => tx.tallies.addBlobs(1, size), lane)
  }

  versionRecord(resource: ResourceRecord, number: number, prepared: PreparedDocument, source: VersionSource): VersionRecord {
    const version: VersionRecord = {
      id: newId(),
      kind: resource.kind,
      resource_id: resource.id,
      organization_id: resource.organization_id,
      number,
      checksum: prepared.checksum,
      digest: prepared.digest,
      source,
      restored_from: null,
      size: prepared.text.byteLength,
      format: prepared.format,
      created_at: now(),
    }
    if (resource.kind === 'api') {
      version.openapi = prepared.summary?.openapi
      version.title = prepared.summary?.title
      version.version = prepared.summary?.version
      version.lint = prepared.lint
        ? {
            ruleset_id: prepared.lint.ruleset.id,
            ruleset_version_id: prepared.lint.rulesetVersion.id,
            ruleset_checksum: prepared.lint.rulesetVersion.checksum,
            counts: countFindings(prepared.lint.findings),
          }
        : null
      if (prepared.convertedFrom) version.converted_from = prepared.convertedFrom
    }
    return version
  }

  /**
   * Lints any document with a ruleset's current version (the ruleset lint route); cached like uploads,
   * and placed in the text sent.
   */
  async lintWith(ruleset: ResourceRecord, input: DocumentInput, tenant?: Tenant): Promise<LocatedFinding[]> {
    const version = await this.storage.read.versions.current(ruleset.id)
    if (!version) throw new RegistryError('invalid_reference', 'the ruleset has no current version')
    const digest = await this.digestNew(input, undefined, tenant)
    return locateFindings(this.documents, sentTextOf(digest), await this.lintResult(version, digest, tenant), tenant)
  }

  private async lintResult(version: VersionRecord, digest: Digested<TextBytes>, tenant: Tenant | undefined): Promise<Finding[]> {
    const cached = await this.storage.read.results.lint(version.checksum, digest.checksum)
    this.metrics.lintCache(cached !== undefined)
    if (cached) return cached
    const { findings } = await this.documents.lint({ canonical: digest.canonical, ruleset: await this.rulesetInput(version) }, tenant)
    await this.keepLintResult(version.checksum, digest.checksum, findings, tenant?.organization)
    return findings
  }

  /** The findings of a document under a ruleset version, kept: the next upload of either reads them. */
  private keepLintResult(rulesetChecksum: string, documentChecksum: string, findings: Finding[], lane: string | undefined): Promise<void> {
    return this.storage.transaction((tx) => tx.results.putLint(rulesetChecksum, documentChecksum, findings), lane)
  }

    private async lintContext(stores: ReadStores, resource: ResourceRecord): Promise<LintContext | undefined> {
    if (resource.kind !== 'api' || !resource.ruleset_id) return undefined
    const ruleset = await stores.resources.get(resource.ruleset_id)
    const version = ruleset && await stores.versions.current(ruleset.id)
    return ruleset && version ? { ruleset, version } : undefined
  }

  /**
   * Validates and lints a digested document for a resource (or, before it exists, a resource kind).
   * An API whose document refers to registry schemas is checked as bundled with them: its validity
   * and findings depend on those schemas (`latest` moves), so neither is taken from a cache.
   */
  private async check(
    resource: Pick<ResourceRecord, 'kind'> & Partial<Pick<ResourceRecord, 'id' | 'organization_id'>>,
    digest: Digested<TextBytes>,
    lint: LintContext | undefined,
    validated: boolean,
    tenant: Tenant | undefined,
  ): Promise<PreparedDocument> {
    const { kind } = resource
    const documentKind = DOCUMENT_KIND[kind]
    const registryDocuments = kind === 'api' && digest.registryRefs && resource.organization_id
      ? await this.references.resolve(digest.registryRefs, { organizationId: resource.organization_id })
      : undefined
    // Validity is recorded per resource kind when a version is committed (versions.append).
    const knownValid = validated || (!registryDocuments && await this.storage.read.versions.isKnownValid(kind, digest.checksum))
    const cachedFindings = lint && !registryDocuments ? await this.storage.read.results.lint(lint.version.checksum, digest.checksum) : undefined
    const needsLint = lint !== undefined && cachedFindings === undefined
    if (lint) this.metrics.lintCache(!needsLint)
    const result: CheckResult = !knownValid || needsLint
      ? await this.documents.check({
          kind: documentKind,
          canonical: digest.canonical,
          checksum: digest.checksum,
          skipValidation: knownValid,
          ruleset: needsLint ? await this.rulesetInput(lint.version) : undefined,
          registryDocuments,
          ...(digest.convertedFrom && { convertedFrom: digest.convertedFrom }),
          ...(resource.id !== undefined && { lineage: resource.id }),
        }, tenant)
      : { summary: digest.summary }
    if (needsLint) await this.keepLintResult(lint.version.checksum, digest.checksum, result.findings ?? [], resource.organization_id ?? tenant?.organization)
    const prepared: PreparedDocument = {
      checksum: digest.checksum, digest: digest.digest, format: digest.format, text: digest.text,
      summary: result.summary ?? digest.summary, ...(digest.serialized && { serialized: true }),
      ...(digest.convertedFrom && { convertedFrom: digest.convertedFrom }),
    }
    if (lint) prepared.lint = { ruleset: lint.ruleset, rulesetVersion: lint.version, findings: cachedFindings ?? result.findings ?? [] }
    return prepared
  }

  /**
   * Throws lint_blocked when findings meet the API's threshold, each placed in `sent` when given;
   * answers the threshold applied.
   */
  private async refuseBlocked(
    stores: ReadStores, api: ResourceRecord, prepared: PreparedDocument, sent: SentText | undefined, tenant: Tenant | undefined,
  ): Promise<BlockingSeverity> {
    const threshold = await thresholdOf(stores, api)
    if (!prepared.lint) return threshold
    const blocking = blockingFindings(prepared.lint.findings, threshold)
    if (blocking.length === 0) return threshold
    const n = blocking.length
    throw new RegistryError('lint_blocked', `${n} finding${n === 1 ? '' : 's'} at or above '${threshold}' block this publish`,
      (await locateFindings(this.documents, sent, blocking, tenant)).map((f) => ({ ...f })))
  }

  private async rulesetInput(version: VersionRecord): Promise<RulesetInput> {
    let parsed = this.rulesetDocuments.get(version.checksum)
    if (!parsed) {
      const bytes = await this.blobs.get(version)
      parsed = { document: parseDocumentText(bytes.toString('utf8')).document }
      this.rulesetDocuments.set(version.checksum, parsed)
    }
    return { checksum: version.checksum, document: parsed.document }
  }
}

/** The threshold that applies to an API (see severityOf), its ruleset read through `stores`. */
async function thresholdOf(stores: ReadStores, api: ResourceRecord): Promise<BlockingSeverity> {
  return severityOf(api, api.ruleset_id ? await stores.resources.get(api.ruleset_id) : undefined)
}
