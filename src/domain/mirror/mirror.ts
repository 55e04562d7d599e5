/**
 * The git mirror of each organization (issue 5): the writer that turns journaled changes into commits,
 * the pusher that keeps a remote current, the push-mirror settings, and the repositories clients clone.
 */
import { GitRepository, repositoryPath } from '../../git/git-repository.js'
import type { Storage } from '../../storage/port.js'
import { mirrorSecretRef, type BlobStore, type MirrorRemote, type OrganizationRecord } from '../../storage/records.js'
import { now } from '../resources/ids.js'
import { MirrorPusher } from './mirror-pusher.js'
import { MirrorWriter, type MirrorLog } from './mirror-writer.js'
import { OutboundPolicy } from '../outbound/outbound.js'
import { NO_PROGRESS, type ProgressListener } from '../operations/progress.js'
import { ForwardingLog } from '../operations/server-log.js'
import { checkHttpUrl } from '../outbound/stored-urls.js'
import type { SecretStatus, Secrets } from '../accounts/secrets.js'

export interface MirrorOptions {
  storage: string
  pollMs?: number
  batch?: number
  pushBaseDelayMs?: number
  pushMaxDelayMs?: number
  log?: MirrorLog
  /** REGISTRY_OUTBOUND_HOSTS: checked when a remote is set and on every request of a push (default: any public host, no internal one). */
  outbound?: OutboundPolicy
  /** Seals the remote's token when it is set; the pusher opens it. */
  secrets: Secrets
}

/** What `GET /v1/mirror` shows: never the token. */
export interface MirrorStatus {
  head: string | null
  url: string | null
  token_set: boolean
  /** `needs_reentry`: the token is stored under a secret key this server does not hold; set the remote again. */
  token_status: SecretStatus
  last_pushed_commit: string | null
  last_pushed_at: string | null
  last_error: string | null
  last_error_at: string | null
}

export class Mirror {
  readonly writer: MirrorWriter
  readonly pusher: MirrorPusher
  private readonly log: ForwardingLog
  /** Started (`start`) and not closed: journaled commits nudge the writer. */
  private started = false

  constructor(private readonly storage: Storage, blobs: BlobStore, private readonly options: MirrorOptions) {
    const log = this.log = new ForwardingLog(options.log)
    this.pusher = new MirrorPusher(storage, {
      storage: options.storage, baseDelayMs: options.pushBaseDelayMs, maxDelayMs: options.pushMaxDelayMs, log, outbound: options.outbound,
      canPush: () => this.writer.isWriter, secrets: options.secrets,
    })
    this.writer = new MirrorWriter(storage, blobs, {
      storage: options.storage, pollMs: options.pollMs, batch: options.batch, log,
      onHead: (org) => this.pusher.schedule(org),
      onRound: () => this.pusher.scheduleBehind(),
    })
    storage.onCommit(({ journal }) => { if (journal) this.journaled() })
  }

  /** Starts the writer (replaying pending entries); from then on journaled commits nudge it. */
  start(log?: MirrorLog): void {
    if (log) this.log.use(log)
    this.started = true
    this.writer.start()
  }

  /**
   * After a commit that journaled (heard from the storage port in the constructor). Nothing before `start`.
   */
  journaled(): void {
    if (this.started) this.writer.journaled()
  }

  /** Everything journaled so far is in git (and pushes under way have finished). */
  async idle(): Promise<void> {
    await this.writer.idle()
    await this.pusher.idle()
  }

  /** Drains the writer and stops both; part of `Registry.close()`. */
  async close(): Promise<void> {
    this.started = false
    await this.writer.close()
    await this.pusher.close()
  }

  /** The repository clients clone, if it has been written. */
  repository(org: OrganizationRecord): GitRepository {
    return new GitRepository(repositoryPath(this.options.storage, org.id))
  }

  /**
   * Before answering a clone or fetch: on a replica that is not the writer, the repository is brought to
   * the head the writer recorded (MirrorWriter.follow), so every replica serves the same refs.
   */
  follow(org: OrganizationRecord): Promise<void> {
    return this.writer.follow(org.id)
  }

  async status(org: OrganizationRecord): Promise<MirrorStatus> {
    const [remote, head] = await Promise.all([this.storage.read.mirror.remote(org.id), this.storage.read.mirror.head(org.id)])
    return {
      head: head?.commit ?? null,
      url: remote?.url ?? null,
      token_set: Boolean(remote?.token),
      token_status: this.options.secrets.status(mirrorSecretRef(org.id), remote?.token ?? null),
      last_pushed_commit: remote?.last_pushed_commit ?? null,
      last_pushed_at: remote?.last_pushed_at ?? null,
      last_error: remote?.last_error ?? null,
      last_error_at: remote?.last_error_at ?? null,
    }
  }

  async setRemote(org: OrganizationRecord, url: string, token: string | null): Promise<MirrorStatus> {
    checkRemoteUrl(url)
    const outbound = this.options.outbound ?? OutboundPolicy.DEFAULT
    outbound.check(url, 'url')
    const remote: MirrorRemote = {
      url, token: this.options.secrets.seal(mirrorSecretRef(org.id), token), created_at: now(),
      last_pushed_commit: null, last_pushed_at: null, last_error: null, last_error_at: null,
    }
    await this.storage.transaction((tx) => tx.mirror.putRemote(org.id, remote))
    this.pusher.reset(org.id)
    return this.status(org)
  }

  async removeRemote(org: OrganizationRecord): Promise<void> {
    await this.storage.transaction((tx) => tx.mirror.removeRemote(org.id))
  }

  /**
   * Rebuilds organizations' repositories from the index. This process does it at once when it is the
   * writer (or can become it); otherwise the running server's writer does it on its next round.
   */
  async rebuild(orgs: OrganizationRecord[], progress: ProgressListener = NO_PROGRESS): Promise<{ queued: boolean }> {
    for (const org of orgs) {
      const at = new Date().toISOString()
      await this.storage.transaction((tx) => tx.mirror.append(org.id, at, { change: 'rebuild' }))
    }
    const slugs = new Map(orgs.map((org) => [org.id, org.slug]))
    this.writer.rebuildProgress = (id, done, total) => progress(`rebuilding ${slugs.get(id) ?? id}`, done, total)
    try {
      this.writer.nudge()
      await this.writer.idle()
    } finally {
      this.writer.rebuildProgress = undefined
    }
    return { queued: !this.writer.isWriter }
  }
}

/** Remotes are http(s) URLs without credentials in them: the token is given on its own, write-only. */
export function checkRemoteUrl(url: string): void {
  checkHttpUrl(url, 'send the token as `token`')
}

export type { MirrorRemote }
