import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from '../config.js'
import { DocumentWorkers, type WorkerObserver } from '../documents/pool.js'
import { currentTenant } from '../documents/fair-scheduler.js'
import { WebhookDeliverer } from './events/deliverer.js'
import { WebhookEndpoints } from './events/endpoints.js'
import { eventReporter } from './events/outbox.js'
import { deliveredData } from './events/payloads.js'
import { FsBlobStore } from '../store/fs-blob-store.js'
import type { BlobStore, RegistryIndex } from '../store/interfaces.js'
import { LmdbIndex } from '../store/lmdb-index.js'
import type { Storage } from '../storage/port.js'
import { LmdbStorage } from '../storage/lmdb/storage.js'
import type { DocumentProcessor } from './documents.js'
import { NO_METRICS, type DomainMetrics } from './metrics.js'
import { Organizations } from './organizations.js'
import { PublicRegistry } from './public-registry.js'
import { Sites } from './sites.js'
import { Resources } from './resources.js'
import { Uploads } from './uploads.js'
import { Changes } from './changes.js'
import { Search } from './search.js'
import { Changelog } from './changelog.js'
import { CompatibilityGate } from './compatibility.js'
import { Versions } from './versions.js'
import { BuildRunner } from './build-runner.js'
import { Sdks, refuseAttachedApiDelete } from './sdks.js'
import { Mirror } from './mirror.js'
import { DEFAULT_SYNC_LIMITS, SnapshotWorkers } from '../sync/pool.js'
import { RepositorySync } from './repository-sync.js'
import { OutboundPolicy } from './outbound.js'
import { ForwardingLog } from './server-log.js'
import { Sessions } from './sessions.js'
import { PublicIndex } from './public-index.js'
import { ReferenceWorkers } from '../documents/reference-pool.js'
import { DEFAULT_REFERENCE_PARTS, ReferenceParts } from './reference-parts.js'
import { Secrets } from './secrets.js'
import { SecretKeyring } from '../store/secret-keyring.js'
import { openSecretKeys, secretKeySetting } from '../secret-key-source.js'

export type RegistryOptions = Pick<Config, 'storage' | 'workers' | 'lintTimeoutMs' | 'lintMemoryMb' | 'documentCacheBytes'>
  & Partial<Pick<Config, 'workerMaxRuns' | 'workerMaxHeapMb' | 'outboundHosts' | 'referenceSplitBytes' | 'fairness' | 'webhookTimeoutMs'>>
  & {
    /** The keys that seal the secrets the registry keeps; default: the ones the environment names (secret-key-source.ts). */
    secretKeys?: SecretKeyring
  }

/** The whole domain, wired to a storage directory. */
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
    readonly index: RegistryIndex,
    readonly blobs: BlobStore,
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
    /**
     * The storage port (docs/storage.md), which features are moving onto; by default the LMDB adapter
     * on the index's own environment and on `blobs`, so both see one state.
     */
    readonly storage: Storage = new LmdbStorage({ root: LmdbIndex.require(index, 'the storage port').root, blobs }, {
      // One commit queue per organization: another organization's upload never waits behind a burst.
      laneOf: () => currentTenant()?.organization ?? '',
    }),
    /** Outbound events: the longest attempt to deliver one (REGISTRY_WEBHOOK_TIMEOUT_MS). */
    events: { timeoutMs?: number } = {},
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
    this.builds = new BuildRunner(storage, this.sdks, this.versions, { outbound, log: this.log, secrets: this.secrets, events: report })
    // An API an SDK attaches is not deleted (409), decided in the delete's transaction.
    this.resources.deleteHooks.push(async (tx, resource) => {
      if (resource.kind === 'api') refuseAttachedApiDelete(resource, await tx.sdks.sdksUsingApi(resource.id))
    })
    this.repositorySync = new RepositorySync(storage, this.resources, this.uploads,
      new SnapshotWorkers(DEFAULT_SYNC_LIMITS, { outboundHosts: outbound.hosts }), this.secrets, outbound, this.log, report)
    // An API's delete removes its repository connection in the delete's transaction.
    this.resources.deleteHooks.push(async (tx, resource) => { if (resource.kind === 'api') await tx.repositories.remove(resource.id) })
    this.referenceParts = new ReferenceParts(blobs, new ReferenceWorkers({ memoryMb: reference.memoryMb ?? 4096 }), {
      ...DEFAULT_REFERENCE_PARTS, splitAboveBytes: reference.splitAboveBytes ?? DEFAULT_REFERENCE_PARTS.splitAboveBytes,
    })
  }

  /** Opens a storage directory; `metrics` (optional) hears about the domain's work and the workers'. */
  static open(options: RegistryOptions, metrics?: DomainMetrics & WorkerObserver): Registry {
    const outbound = OutboundPolicy.of(options.outboundHosts ?? []) // a bad entry throws before anything is opened
    const secretKeys = options.secretKeys ?? openSecretKeys(secretKeySetting(), options.storage).keyring // so does a bad key
    mkdirSync(options.storage, { recursive: true })
    const index = new LmdbIndex(join(options.storage, 'index'))
    const blobs = new FsBlobStore(options.storage, { cacheBytes: options.documentCacheBytes })
    const documents = new DocumentWorkers({
      threads: options.workers, timeoutMs: options.lintTimeoutMs, memoryMb: options.lintMemoryMb,
      maxRuns: options.workerMaxRuns, maxHeapMb: options.workerMaxHeapMb, observer: metrics, fairness: options.fairness,
    })
    const registry = new Registry(index, blobs, documents, metrics, outbound, {
      splitAboveBytes: options.referenceSplitBytes, memoryMb: options.lintMemoryMb,
    }, secretKeys, undefined, { timeoutMs: options.webhookTimeoutMs })
    // The port's journaled commits nudge the writer (Mirror hears them).
    registry.mirror = new Mirror(registry.storage, blobs, { storage: options.storage, outbound, secrets: registry.secrets })
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
    await this.index.close()
  }
}
