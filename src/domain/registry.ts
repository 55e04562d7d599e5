import { mkdirSync } from 'node:fs'
import type { Config } from '../config.js'
import { DocumentWorkers, type WorkerObserver } from '../documents/pool.js'
import { WebhookDeliverer } from './events/deliverer.js'
import { WebhookEndpoints } from './events/endpoints.js'
import { eventReporter } from './events/outbox.js'
import { deliveredData } from './events/payloads.js'
import type { BlobStore } from '../storage/records.js'
import type { Storage } from '../storage/port.js'
import { LmdbStorage } from '../storage/lmdb/storage.js'
import { PostgresStorage } from '../storage/postgres/storage.js'
import type { DocumentProcessor } from './documents.js'
import { NO_METRICS, type DomainMetrics } from './operations/metrics.js'
import { Organizations } from './accounts/organizations.js'
import { PublicRegistry } from './public/public-registry.js'
import { Sites } from './sites/sites.js'
import { Resources } from './resources/resources.js'
import { Uploads } from './resources/uploads.js'
import { Changes } from './changes/changes.js'
import { Search } from './resources/search.js'
import { Changelog } from './changes/changelog.js'
import { CompatibilityGate } from './changes/compatibility.js'
import { Versions } from './resources/versions.js'
import { BuildRunner } from './sdks/build-runner.js'
import { Sdks, refuseAttachedApiDelete } from './sdks/sdks.js'
import { Mirror } from './mirror/mirror.js'
import { DEFAULT_SYNC_LIMITS, SnapshotWorkers } from '../sync/pool.js'
import { RepositorySync } from './repository-sync/repository-sync.js'
import { OutboundPolicy } from './outbound/outbound.js'
import { ForwardingLog } from './operations/server-log.js'
import { Sessions } from './accounts/sessions.js'
import { PublicIndex } from './public/public-index.js'
import { ReferenceWorkers } from '../documents/reference-pool.js'
import { DEFAULT_REFERENCE_PARTS, ReferenceParts } from './sites/reference-parts.js'
import { Secrets } from './accounts/secrets.js'
import { SecretKeyring } from '../storage/secret-keyring.js'
import { openSecretKeys, secretKeySetting } from '../secret-key-source.js'

export type RegistryOptions = Pick<Config, 'storage' | 'workers' | 'lintTimeoutMs' | 'lintMemoryMb' | 'documentCacheBytes'>
  & Partial<Pick<Config, 'workerMaxRuns' | 'workerMaxHeapMb' | 'outboundHosts' | 'referenceSplitBytes' | 'fairness' | 'webhookTimeoutMs' | 'databaseUrl' | 'leaseMs'>>
  & {
    /** The keys that seal the secrets the registry keeps; default: the ones the environment names (secret-key-source.ts). */
    secretKeys?: SecretKeyring
    /**
     * Compile the validators and load Spectral as each document worker starts (default true: the
     * first upload does not wait for it). The tests' in-process registries start cold: most never
     * validate a 3.1, 3.2 or JSON Schema document, and compiling all of them cost each one seconds.
     */
    warmWorkers?: boolean
    /**
     * The node options every worker thread starts with (documents, reference parts, sync, SDK
     * generation); default: the process's own, as node does. The tests start theirs without the test
     * runner's module hooks, which made each worker load its modules through them (test/helpers.ts).
     */
    workerExecArgv?: readonly string[]
  }

/** What a test puts between the registry and its blobs or document workers (faults, counts). */
export interface RegistryWrappers {
  blobs?: (blobs: BlobStore) => BlobStore
  documents?: (documents: DocumentProcessor) => DocumentProcessor
}

/** The whole domain, wired to its storage: LMDB in a storage directory, or PostgreSQL (docs/storage.md). */
export class Registry {
  readonly organizations: Organizations
  /** Console sign-in sessions, opened with a key (issue 17). */
  readonly sessions: Sessions
  readonly resources: Resources
  readonly uploads: Uploads
  readonly versions: Versions
  /** Diffs between versions, the compatibility gate and changelogs (issue 20). */
  readonly changes: Changes
  readonly changelog: Changelog
  readonly publicRegistry: PublicRegistry
  /** What `/` and `/@{org}` show a visitor: organizations' public resources and sites. */
  readonly publicIndex: PublicIndex
  /** Hosted documentation sites and their guides (issue 6). */
  readonly sites: Sites
  /** SDKs and their builds (issue 7); `builds` runs the queue once started (buildApp starts it). */
  readonly sdks: Sdks
  readonly builds: BuildRunner
  /** The git mirror (issue 5), on storage opened with `open`; `serve` starts its writer. */
  mirror: Mirror | undefined
  /** APIs kept current from a git repository: connections, syncs and webhooks (issue 5). */
  readonly repositorySync: RepositorySync
  /** Search over the organization's APIs, schemas and rulesets (issue 17). */
  readonly search: Search
  /** What only the operator may read (why a sync or a delivery failed); `buildApp` points it at the server's log. */
  readonly log = new ForwardingLog()
  /** Outbound events (issue 20): the organization's webhook endpoints, and the deliverer that sends their deliveries. */
  readonly webhooks: WebhookEndpoints
  readonly deliverer: WebhookDeliverer
  /** The reference pages of large documents, in parts (issue 15). */
  readonly referenceParts: ReferenceParts
  /** Tokens and webhook secrets: sealed at rest, migrated and rotated (issue 14). */
  readonly secrets: Secrets
  #closed = false

  constructor(
    /** The storage port (docs/storage.md): everything the registry stores. */
    readonly storage: Storage,
    readonly documents: DocumentProcessor,
    metrics: DomainMetrics = NO_METRICS,
    /** REGISTRY_OUTBOUND_HOSTS: where sync, SDK delivery and mirror pushes may connect (default: any public host, no internal one). */
    readonly outbound: OutboundPolicy = OutboundPolicy.DEFAULT,
    /**
     * The reference parts of large documents: above which size a document is split
     * (REGISTRY_REFERENCE_SPLIT) and the memory limit of the thread that splits (REGISTRY_LINT_MEMORY_MB).
     */
    reference: { splitAboveBytes?: number; memoryMb?: number } = {},
    /** Default: a random key kept in memory only, for registries that are not reopened (tests). */
    secretKeys: SecretKeyring = SecretKeyring.ephemeral(),
    /** Outbound events: the longest attempt to deliver one (REGISTRY_WEBHOOK_TIMEOUT_MS). */
    events: { timeoutMs?: number } = {},
    /** The documents' blobs; default: the storage's (a test may put a faulty one in between). */
    readonly blobs: BlobStore = storage.blobs,
    /** How long a build's or a sync's claim holds without renewal (REGISTRY_LEASE_SECONDS; default 60 s). */
    leaseMs?: number,
    /** The node options of the worker threads it starts (default: this thread's). */
    workerExecArgv?: readonly string[],
  ) {
    this.organizations = new Organizations(storage)
    this.sessions = new Sessions(storage, this.organizations)
    this.changes = new Changes(storage, blobs, documents)
    this.changelog = new Changelog(storage, this.changes)
    const compatibility = new CompatibilityGate(storage, this.changes)
    this.uploads = new Uploads(storage, blobs, documents, this.changes, compatibility, metrics)
    this.resources = new Resources(storage, this.uploads)
    this.versions = new Versions(storage, blobs, documents, compatibility)
    this.search = new Search(storage, blobs, documents)
    this.publicRegistry = new PublicRegistry(storage, this.search)
    this.sites = new Sites(storage)
    // An API's delete takes it off the sites that list it, in the delete's transaction.
    this.resources.deleteHooks.push(async (tx, resource, at) => { if (resource.kind === 'api') await tx.sites.dropApi(resource.id, at) })
    this.publicIndex = new PublicIndex(storage, this.sites, this.publicRegistry)
    this.secrets = new Secrets(storage, secretKeys)
    this.sdks = new Sdks(storage, this.secrets, outbound)
    const report = eventReporter(storage)
    this.deliverer = new WebhookDeliverer(storage, {
      outbound, secrets: this.secrets, log: this.log, timeoutMs: events.timeoutMs, payloadData: deliveredData(storage, this.changes),
    })
    this.webhooks = new WebhookEndpoints(storage, this.secrets, outbound)
    // Events are written by commits in this process and in others: each commit looks at the outbox.
    storage.onCommit(() => this.deliverer.nudge())
    this.builds = new BuildRunner(storage, this.sdks, this.versions, {
      outbound, log: this.log, secrets: this.secrets, events: report, leaseMs, execArgv: workerExecArgv,
    })
    // An API an SDK attaches is not deleted (409), decided in the delete's transaction.
    this.resources.deleteHooks.push(async (tx, resource) => {
      if (resource.kind === 'api') refuseAttachedApiDelete(resource, await tx.sdks.sdksUsingApi(resource.id))
    })
    this.repositorySync = new RepositorySync(storage, this.resources, this.uploads,
      new SnapshotWorkers(DEFAULT_SYNC_LIMITS, { outboundHosts: outbound.hosts, execArgv: workerExecArgv }), this.secrets, outbound, this.log, report, { leaseMs })
    // An API's delete removes its repository connection in the delete's transaction.
    this.resources.deleteHooks.push(async (tx, resource) => { if (resource.kind === 'api') await tx.repositories.remove(resource.id) })
    this.referenceParts = new ReferenceParts(blobs, new ReferenceWorkers({ memoryMb: reference.memoryMb ?? 4096, execArgv: workerExecArgv }), {
      ...DEFAULT_REFERENCE_PARTS, splitAboveBytes: reference.splitAboveBytes ?? DEFAULT_REFERENCE_PARTS.splitAboveBytes,
    })
  }

  /**
   * Opens the registry's storage: PostgreSQL when `databaseUrl` is set (migrated first), else the LMDB
   * environment and blob files of the storage directory. The storage directory also holds the git
   * mirror's repositories, which are derived from the stored records and rebuilt from them.
   * `metrics` (optional) hears about the domain's work and the workers'.
   */
  static async open(options: RegistryOptions, metrics?: DomainMetrics & WorkerObserver, wrap: RegistryWrappers = {}): Promise<Registry> {
    const outbound = OutboundPolicy.of(options.outboundHosts ?? []) // a bad entry throws before anything is opened
    const secretKeys = options.secretKeys ?? openSecretKeys(secretKeySetting(), options.storage).keyring // so does a bad key
    mkdirSync(options.storage, { recursive: true })
    const storage: Storage = options.databaseUrl
      ? await PostgresStorage.open(options.databaseUrl)
      : new LmdbStorage(options.storage, { documentCacheBytes: options.documentCacheBytes })
    const pool = new DocumentWorkers({
      threads: options.workers, timeoutMs: options.lintTimeoutMs, memoryMb: options.lintMemoryMb,
      maxRuns: options.workerMaxRuns, maxHeapMb: options.workerMaxHeapMb, observer: metrics, fairness: options.fairness,
      warm: options.warmWorkers, execArgv: options.workerExecArgv,
    })
    const documents = wrap.documents?.(pool) ?? pool
    const blobs = wrap.blobs?.(storage.blobs) ?? storage.blobs
    const registry = new Registry(storage, documents, metrics, outbound, {
      splitAboveBytes: options.referenceSplitBytes, memoryMb: options.lintMemoryMb,
    }, secretKeys, { timeoutMs: options.webhookTimeoutMs }, blobs, options.leaseMs, options.workerExecArgv)
    // The port's journaled commits nudge the writer (Mirror hears them).
    registry.mirror = new Mirror(storage, blobs, { storage: options.storage, outbound, secrets: registry.secrets })
    return registry
  }

  /** What `/readyz` reports: the storage answers a read (a database that is down does not), and a worker can take a task. */
  async readiness(): Promise<{ storage: boolean; workers: boolean }> {
    let storage = !this.#closed
    if (storage) {
      try {
        await this.storage.read.organizations.get('readyz')
      } catch {
        storage = false
      }
    }
    return { storage, workers: !this.#closed && this.documents.ready !== false }
  }

  async close(): Promise<void> {
    this.#closed = true
    await this.builds.stop()
    await this.deliverer.stop()
    // Queued and running syncs finish first: they publish through the document workers and the index.
    await this.repositorySync.close()
    await this.organizations.flushUse()
    await this.mirror?.close()
    await this.documents.close()
    await this.referenceParts.close()
    await this.storage.close()
  }
}
