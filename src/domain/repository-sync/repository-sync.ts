/**
 * Repository sync (issue 5, items 6–8): an API connected to a file on a branch of a GitHub or GitLab
 * repository, published from there by a manual sync or by the repository's push webhooks. A sync
 * fetches the branch shallow in a sync worker, bundles the file's relative `$ref`s, and publishes the
 * result through the one upload path (`Uploads.upload`, lint gate included) with `source` set to the
 * provider. One sync per API runs at a time across every replica, under a lease claimed in the
 * storage (sync-leases.ts); every connection keeps its last sync's outcome. Connections and delivery ids are on the storage port (`repositories`): every change
 * is one `storage.transaction`, decided on what it read through `tx`.
 */
import { posix } from 'node:path'
import { RegistryError, invalidRequest, type ProblemItem } from '../../errors.js'
import type { SnapshotFetcher } from '../../sync/pool.js'
import { FETCH_STEP } from '../../sync/snapshot.js'
import type { Storage } from '../../storage/port.js'
import type { LastSyncRecord, RepositoryConnectionRecord, RepositoryProvider, SyncRequest, SyncStatus } from '../../storage/records.js'
import { connectionSecretRef } from '../../storage/secret-slots.js'
import { newId, now } from '../resources/ids.js'
import { OutboundPolicy } from '../outbound/outbound.js'
import { Redactor } from '../outbound/redaction.js'
import { STDERR_LOG, type ServerLog } from '../operations/server-log.js'
import type { Actor } from '../accounts/organizations.js'
import type { Resources } from '../resources/resources.js'
import { refuseControlCharacters } from '../outbound/stored-urls.js'
import type { Secrets } from '../accounts/secrets.js'
import { SyncQueue } from './sync-queue.js'
import { SyncLeases, isLeaseLost, type LeaseGuard, type SyncLeaseOptions } from './sync-leases.js'
import type { UploadOutcome, Uploads } from '../resources/uploads.js'
import { REPORT_NOTHING, resourceSummary, type ReportEvent } from '../events/outbox.js'
import {
  githubSignatureMatches, gitlabTokenMatches, normalizeRepositoryUrl, readGithubDelivery, readGitlabDelivery,
  type WebhookDelivery, type WebhookRequest,
} from './webhooks.js'

export interface ConnectInput {
  provider: RepositoryProvider
  url: string
  branch: string
  path: string
  token?: string | null
  webhook_secret?: string | null
}

/** A sync a webhook queued that failed (it runs after the delivery was answered). */
export interface WebhookSyncFailure {
  apiId: string
  delivery: string | null
  error: unknown
}

/** What a webhook delivery led to: syncs queued (202), or nothing to do (200). */
export interface WebhookOutcome {
  status: 'queued' | 'ignored' | 'duplicate' | 'pong'
  syncs: number
  detail: string
}

/** Findings or problems kept with a failed sync, at most. */
const MAX_KEPT_PROBLEMS = 100

/** Longest normalized repository url (an index key together with a branch of at most 200 characters). */
const MAX_NORMALIZED_URL_BYTES = 1024

const BAD_REF_CHARACTERS = /[\x00-\x20\x7f~^:?*[\\]/

/** The branch name, checked against git's rules for ref names (`refs/heads/` may be given). */
function checkBranch(branch: string): string {
  const name = branch.startsWith('refs/heads/') ? branch.slice('refs/heads/'.length) : branch
  const bad = name === '' || name === '@' || BAD_REF_CHARACTERS.test(name) || name.includes('..') || name.includes('@{')
    || name.includes('//') || name.startsWith('/') || name.endsWith('/') || name.startsWith('-') || name.endsWith('.')
    || name.split('/').some((part) => part.startsWith('.') || part.endsWith('.lock'))
  if (bad) throw invalidRequest(`'${name.slice(0, 100)}' is not a valid branch name`, [{ path: ['branch'], message: 'not a valid git branch name' }])
  return name
}

/** The file's path inside the repository, normalized; never absolute, never out of the repository. */
function checkPath(path: string): string {
  const refuse = (message: string) => invalidRequest(`path: ${message}`, [{ path: ['path'], message }])
  if (path.includes('\0') || path.includes('\\')) throw refuse('must be a path with / separators')
  if (path.startsWith('/')) throw refuse('must be relative to the repository root')
  const normalized = posix.normalize(path)
  if (normalized === '..' || normalized.startsWith('../')) throw refuse('must stay inside the repository')
  if (normalized === '.' || normalized.endsWith('/')) throw refuse('must name a file, not a directory')
  return normalized
}

/** The repository url: http or https, without credentials, query or fragment. */
function checkUrl(url: string): { url: string; normalized: string } {
  refuseControlCharacters(url, 'url')
  const refuse = (message: string) => invalidRequest(`url: ${message}`, [{ path: ['url'], message }])
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw refuse('is not a valid url')
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw refuse('must be an http or https url')
  if (parsed.username || parsed.password) throw refuse("must not hold credentials: give a token in 'token'")
  if (parsed.search || parsed.hash) throw refuse('must not have a query or a fragment')
  const normalized = normalizeRepositoryUrl(url)
  if (!normalized || parsed.pathname.replace(/\/+$/, '') === '') throw refuse('must name a repository')
  // It is part of an index key (with the branch): LMDB keys are at most 1978 bytes.
  if (Buffer.byteLength(normalized, 'utf8') > MAX_NORMALIZED_URL_BYTES) throw refuse(`is longer than ${MAX_NORMALIZED_URL_BYTES} bytes`)
  return { url: parsed.href, normalized }
}

/**
 * A connection as clients see it: never its token or webhook secret, only whether they are set and
 * usable (`needs_reentry`: stored under a secret key this server does not hold; PUT them again).
 */
export function connectionView(connection: RepositoryConnectionRecord, secrets: Secrets): Record<string, unknown> {
  return {
    id: connection.id,
    organization_id: connection.organization_id,
    api_id: connection.api_id,
    provider: connection.provider,
    url: connection.url,
    branch: connection.branch,
    path: connection.path,
    has_token: connection.token !== null,
    has_webhook_secret: connection.webhook_secret !== null,
    token_status: secrets.status(connectionSecretRef(connection, 'token'), connection.token),
    webhook_secret_status: secrets.status(connectionSecretRef(connection, 'webhook_secret'), connection.webhook_secret),
    webhook_path: `/webhooks/${connection.provider}`,
    last_sync: connection.last_sync,
    created_at: connection.created_at,
    updated_at: connection.updated_at,
  }
}

/** A gate refused the document (lint, compatibility): the sync worked, the registry said no. */
function syncStatus(error: RegistryError): SyncStatus {
  return error.code === 'lint_blocked' || error.code === 'incompatible' ? 'blocked' : 'failed'
}

/** What no text about a connection may show: its token, its webhook secret (as sealed, opened), the credentials its URL may hold. */
function connectionRedactor(connection: RepositoryConnectionRecord, secrets: Secrets): Redactor {
  return new Redactor([
    secrets.reveal(connectionSecretRef(connection, 'token'), connection.token),
    secrets.reveal(connectionSecretRef(connection, 'webhook_secret'), connection.webhook_secret),
    connection.url,
  ])
}

const notConnected = () => new RegistryError('not_found', 'the API is not connected to a repository')

function keptError(error: RegistryError): NonNullable<LastSyncRecord['error']> {
  const kept: NonNullable<LastSyncRecord['error']> = { code: error.code, detail: error.message }
  if (error.errors) kept.errors = error.errors.slice(0, MAX_KEPT_PROBLEMS) as ProblemItem[]
  return kept
}

export class RepositorySync {
  /** This process's manual syncs of one API, in arrival order (each then waits for the API's lease). */
  readonly #queue = new SyncQueue()
  readonly #leases: SyncLeases<UploadOutcome>

  constructor(
    private readonly storage: Storage,
    private readonly resources: Resources,
    private readonly uploads: Uploads,
    private readonly fetcher: SnapshotFetcher,
    /** Seals the token and webhook secret when stored, opens them where they are used. */
    private readonly secrets: Secrets,
    /** Checked when a connection is made and before each sync; the sync worker checks each request and address again. */
    private readonly outbound: OutboundPolicy = OutboundPolicy.DEFAULT,
    /** The operator's log: why a repository could not be fetched (the key holder is told less). */
    private readonly log: ServerLog = STDERR_LOG,
    /** Reports `sync.failed` (a failed or blocked sync). */
    private readonly events: ReportEvent = REPORT_NOTHING,
    leases: SyncLeaseOptions = {},
  ) {
    this.#leases = new SyncLeases(storage, (apiId, request, guard) => this.#run(apiId, request, guard), (apiId, request, error) => {
      // A sync asked for on another replica (or one whose caller is gone): its failure is kept as the
      // connection's last sync, and said here, where it ran.
      this.log.warn({ api_id: apiId, trigger: request.trigger, delivery: request.delivery, reason: String(error) },
        'repository sync: a sync asked for elsewhere failed (see the connection\'s last_sync)')
    }, leases)
  }

  /** Takes over syncs left by processes that stopped mid-sync (their leases ended): call once the registry serves. */
  start(): void {
    this.#leases.start()
  }

  /** This process's name on the sync leases it holds. */
  get holder(): string {
    return this.#leases.holder
  }

  /** The organization's connections whose last sync failed or was blocked by the lint gate. */
  async failedSyncs(actor: Actor): Promise<RepositoryConnectionRecord[]> {
    return (await this.storage.read.repositories.list(actor.organization.id))
      .filter((connection) => connection.last_sync?.status === 'failed' || connection.last_sync?.status === 'blocked')
      .sort((a, b) => (a.last_sync!.finished_at < b.last_sync!.finished_at ? 1 : -1))
  }

  /** Creates or replaces the API's connection (`created` tells which). */
  async connect(actor: Actor, apiId: string, input: ConnectInput): Promise<{ connection: RepositoryConnectionRecord; created: boolean }> {
    const api = await this.resources.require(actor, 'api', apiId)
    const { url, normalized } = checkUrl(input.url)
    this.outbound.check(url, 'url')
    const branch = checkBranch(input.branch)
    const path = checkPath(input.path)
    // Built inside the transaction from the connection as committed: what it keeps of the one it
    // replaces (id, creation time, last sync) is never an earlier copy. The adapter refuses an API
    // deleted meanwhile (404).
    return this.storage.transaction(async (tx) => {
      const before = await tx.repositories.get(api.id)
      const at = now()
      const sameSource = before !== undefined && before.provider === input.provider && before.normalized_url === normalized
        && before.branch === branch && before.path === path
      const identity = { api_id: api.id, id: before?.id ?? newId() }
      const connection: RepositoryConnectionRecord = {
        ...identity,
        organization_id: api.organization_id,
        provider: input.provider,
        url,
        normalized_url: normalized,
        branch,
        path,
        token: this.secrets.seal(connectionSecretRef(identity, 'token'), input.token),
        webhook_secret: this.secrets.seal(connectionSecretRef(identity, 'webhook_secret'), input.webhook_secret),
        created_at: before?.created_at ?? at,
        updated_at: at,
        // The last sync stays with the connection while it reads the same file.
        last_sync: sameSource ? before.last_sync : null,
      }
      const created = await tx.repositories.put(connection, before?.updated_at ?? null)
      return { connection, created }
    })
  }

  /** The API's connection; 404 when it has none. */
  async connection(actor: Actor, apiId: string): Promise<RepositoryConnectionRecord> {
    const api = await this.resources.require(actor, 'api', apiId)
    const connection = await this.storage.read.repositories.get(api.id)
    if (!connection) throw notConnected()
    return connection
  }

  async disconnect(actor: Actor, apiId: string): Promise<void> {
    const api = await this.resources.require(actor, 'api', apiId)
    await this.storage.transaction(async (tx) => {
      if (!(await tx.repositories.remove(api.id))) throw notConnected()
    })
  }

  /** A manual sync: waits for the API's turn (on any replica), then answers the version (or the upload's problem). */
  async sync(actor: Actor, apiId: string): Promise<UploadOutcome> {
    const connection = await this.connection(actor, apiId)
    return this.#queue.run(connection.api_id, () => this.#leases.runNow(connection.api_id))
  }

  /**
   * A webhook delivery: verified against the secret of every connection to the repository it names
   * (401 when none matches; nothing runs), remembered by delivery id (a redelivery is not processed
   * again), then a push to a connected branch queues a sync of each API connected to it.
   */
  async receive(
    provider: RepositoryProvider, request: WebhookRequest, onFailure: (failure: WebhookSyncFailure) => void = () => undefined,
  ): Promise<WebhookOutcome> {
    const delivery = provider === 'github' ? readGithubDelivery(request) : readGitlabDelivery(request)
    const verified = await this.#verifiedConnections(delivery, request)
    if (verified.length === 0) {
      throw new RegistryError('unauthorized', provider === 'github'
        ? 'X-Hub-Signature-256 does not match the webhook secret of any connection to this repository'
        : 'X-Gitlab-Token does not match the webhook secret of any connection to this repository')
    }
    if (delivery.delivery !== null && !(await this.#claim(provider, delivery.delivery))) {
      return { status: 'duplicate', syncs: 0, detail: `delivery ${delivery.delivery} was already handled` }
    }
    if (delivery.kind === 'ping') return { status: 'pong', syncs: 0, detail: 'the webhook reaches the registry' }
    if (delivery.kind !== 'push') return { status: 'ignored', syncs: 0, detail: `'${delivery.event}' events are not handled` }
    if (!delivery.ref?.startsWith('refs/heads/')) return { status: 'ignored', syncs: 0, detail: 'not a push to a branch' }
    if (delivery.deleted) return { status: 'ignored', syncs: 0, detail: 'the push deleted the branch' }
    const branch = delivery.ref.slice('refs/heads/'.length)
    const targets = verified.filter((c) => c.branch === branch)
    for (const connection of targets) {
      // The outcome is kept as the connection's last sync; nobody waits for this one, so a failure is
      // reported too, as is one to ask for it (the connection removed meanwhile, a shutdown).
      const failed = (error: unknown) => onFailure({ apiId: connection.api_id, delivery: delivery.delivery, error })
      await this.#leases.request(connection.api_id, 'webhook', delivery.delivery, (outcome) => {
        if (outcome.status === 'rejected') failed(outcome.reason)
      }).catch(failed)
    }
    if (targets.length === 0) return { status: 'ignored', syncs: 0, detail: `no API is connected to branch '${branch}'` }
    return { status: 'queued', syncs: targets.length, detail: `${targets.length} sync${targets.length === 1 ? '' : 's'} queued` }
  }

  /** True the first time a delivery id is seen (the port remembers the newest `MAX_DELIVERIES`). */
  #claim(provider: RepositoryProvider, id: string): Promise<boolean> {
    const at = Date.now()
    return this.storage.transaction((tx) => tx.repositories.claimDelivery(provider, id, at))
  }

  /** Connections of this provider to the delivery's repository whose webhook secret the request proves. */
  async #verifiedConnections(delivery: WebhookDelivery, request: WebhookRequest): Promise<RepositoryConnectionRecord[]> {
    const byApi = new Map<string, RepositoryConnectionRecord>()
    for (const url of delivery.urls) {
      const normalized = normalizeRepositoryUrl(url)
      if (!normalized) continue
      for (const connection of await this.storage.read.repositories.byRepository(normalized)) byApi.set(connection.api_id, connection)
    }
    const matches = delivery.provider === 'github' ? githubSignatureMatches : gitlabTokenMatches
    return [...byApi.values()].filter((c) => {
      if (c.provider !== delivery.provider) return false
      const secret = this.#webhookSecret(c)
      return secret !== null && matches(request, secret)
    })
  }

  /** The webhook secret to check deliveries with; null when none is set or it must be entered again. */
  #webhookSecret(connection: RepositoryConnectionRecord): string | null {
    try {
      return this.secrets.open(connectionSecretRef(connection, 'webhook_secret'), connection.webhook_secret)
    } catch (error) {
      if (error instanceof RegistryError && error.code === 'secret_needs_reentry') return null
      throw error
    }
  }

  /**
   * One sync of one API, under its lease: fetch, bundle, publish, and keep the outcome; the publish and
   * the outcome are written only while the lease is still this run's (`guard`).
   */
  async #run(apiId: string, { trigger, delivery }: SyncRequest, guard: LeaseGuard): Promise<UploadOutcome> {
    const connection = await this.storage.read.repositories.get(apiId)
    const api = await this.storage.read.resources.get(apiId)
    if (!connection || !api) throw notConnected()
    const started = now()
    let commit: string | null = null
    // Kept only on the connection the sync started from (one replaced or removed meanwhile is left as it is).
    const keep = async (status: SyncStatus, fields: Partial<LastSyncRecord>) => {
      const lastSync: LastSyncRecord = {
        status, trigger, delivery, started_at: started, finished_at: now(), commit, version_id: null, version_number: null, error: null,
        ...fields,
      }
      await this.storage.transaction(async (tx) => {
        await guard(tx)
        return tx.repositories.recordSync(apiId, connection.updated_at, lastSync)
      })
    }
    try {
      // A connection made before the policy changed is refused before any request is made.
      const refused = this.outbound.storedRefusal(connection.url, 'url')
      if (refused) throw new RegistryError('repository_unavailable', `${FETCH_STEP}: ${refused}`)
      const token = this.secrets.open(connectionSecretRef(connection, 'token'), connection.token)
      const snapshot = await this.fetcher.fetch({
        provider: connection.provider, url: connection.url, branch: connection.branch, path: connection.path, token,
      })
      commit = snapshot.commit
      const outcome = await this.uploads.upload(api, { document: snapshot.text }, connection.provider, guard)
      await keep(outcome.created ? 'succeeded' : 'unchanged', { version_id: outcome.version.id, version_number: outcome.version.number })
      return outcome
    } catch (error) {
      // Another runner took the sync over: it keeps and reports the outcome, not this one.
      if (isLeaseLost(error)) throw error
      commit ??= (error as { commit?: string | null }).commit ?? null
      // What is kept, answered and logged passes through the connection's redactor: a remote may echo its secrets.
      const redactor = connectionRedactor(connection, this.secrets)
      const reason = (error as { reason?: string }).reason
      if (reason) redactor.log(this.log).warn({ api_id: apiId, url: connection.url, trigger, reason }, 'repository sync: the repository could not be fetched')
      const problem = redactor.redactProblem(error instanceof RegistryError ? error : new RegistryError('internal', 'the sync failed unexpectedly'))
      const status = syncStatus(problem)
      await keep(status, { error: keptError(problem) }).catch(() => undefined)
      await this.events(api.organization_id, 'sync.failed', {
        resource: resourceSummary(api), status, trigger, delivery, commit, error: keptError(problem),
        repository: { provider: connection.provider, url: connection.url, branch: connection.branch, path: connection.path },
      }).catch((failure: unknown) => this.log.warn({ api_id: apiId, reason: String(failure) }, 'repository sync: its event could not be written'))
      throw error instanceof RegistryError ? problem : error
    }
  }

  /** Refuses new syncs, waits for the queued and running ones (and those waiting after them), then ends the sync workers. */
  async close(): Promise<void> {
    await this.#queue.drain()
    await this.#leases.close()
    await this.fetcher.close()
  }
}
