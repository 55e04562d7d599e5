/**
 * Pushes an organization's `main` to its push mirror (a remote set with `PUT /v1/mirror` or the CLI)
 * whenever the head moved, with retry and exponential backoff. The mirror's history is the registry's:
 * the push is forced, so a rebuilt history replaces the remote's. Only the process that is the mirror
 * writer pushes.
 */
import * as fs from 'node:fs'
import git from 'isomorphic-git'
import { RegistryError } from '../../errors.js'
import { gitHttp } from '../../git/git-http.js'
import { GitRepository, MAIN, repositoryPath } from '../../git/git-repository.js'
import type { Storage } from '../../storage/port.js'
import { mirrorSecretRef, type MirrorRemote } from '../../storage/records.js'
import type { MirrorLog } from './mirror-writer.js'
import { OutboundFailure, OutboundPolicy, UNREACHABLE, outboundFailure } from '../outbound/outbound.js'
import { withOutboundFetch } from '../outbound/outbound-fetch.js'
import { Redactor } from '../outbound/redaction.js'
import type { Secrets } from '../accounts/secrets.js'

export interface PusherOptions {
  storage: string
  /** First retry delay (ms); doubles per failure up to `maxDelayMs`. */
  baseDelayMs?: number
  maxDelayMs?: number
  log: MirrorLog
  /** Only the mirror writer's process pushes (a CLI process that sets a remote leaves it to the server). */
  canPush: () => boolean
  /** REGISTRY_OUTBOUND_HOSTS: every request of a push is checked, redirects included (default: any public host, no internal one). */
  outbound?: OutboundPolicy
  /** Opens the remote's token for each push. */
  secrets: Secrets
}

interface PushState {
  running: boolean
  again: boolean
  failures: number
  timer?: NodeJS.Timeout
}

export class MirrorPusher {
  private readonly states = new Map<string, PushState>()
  private readonly inFlight = new Set<Promise<void>>()
  private stopped = false

  constructor(private readonly storage: Storage, private readonly options: PusherOptions) {}

  /** Pushes soon if the remote is behind the head (and no retry is already waiting). */
  schedule(org: string): void {
    if (this.stopped || !this.options.canPush()) return
    const state = this.state(org)
    if (state.running) {
      state.again = true
      return
    }
    if (state.timer) return // a retry is waiting: it pushes the newest head
    this.run(org, state)
  }

  /**
   * Every organization whose remote is behind: after a start, and on each poll of the writer. Never
   * waited for, but `idle` waits for it (and for the pushes it starts).
   */
  scheduleBehind(): void {
    if (this.stopped || !this.options.canPush()) return
    const scan = this.behind().catch((error) => {
      this.options.log.warn({ err: String(error) }, 'git mirror: could not read the push remotes; trying again on the next round')
    })
    this.inFlight.add(scan)
    void scan.finally(() => this.inFlight.delete(scan))
  }

  private async behind(): Promise<void> {
    const read = this.storage.read.mirror
    for (const org of await read.remoteOrganizations()) {
      const [remote, head] = await Promise.all([read.remote(org), read.head(org)])
      if (remote && head && remote.last_pushed_commit !== head.commit) this.schedule(org)
    }
  }

  /** A new remote: forget earlier failures and push now. */
  reset(org: string): void {
    const state = this.state(org)
    clearTimeout(state.timer)
    state.timer = undefined
    state.failures = 0
    this.schedule(org)
  }

  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight])
  }

  async close(): Promise<void> {
    this.stopped = true
    for (const state of this.states.values()) clearTimeout(state.timer)
    await this.idle()
  }

  private state(org: string): PushState {
    let state = this.states.get(org)
    if (!state) this.states.set(org, state = { running: false, again: false, failures: 0 })
    return state
  }

  private run(org: string, state: PushState): void {
    state.running = true
    state.again = false
    const attempt = this.pushOnce(org).then((pushed) => {
      state.running = false
      if (pushed) state.failures = 0
      else this.retryLater(org, state)
      if (state.again) this.schedule(org)
    })
    this.inFlight.add(attempt)
    void attempt.finally(() => this.inFlight.delete(attempt))
  }

  private retryLater(org: string, state: PushState): void {
    if (this.stopped) return
    state.failures += 1
    const base = this.options.baseDelayMs ?? 1000
    const delay = Math.min(base * 2 ** (state.failures - 1), this.options.maxDelayMs ?? 300_000)
    state.timer = setTimeout(() => {
      state.timer = undefined
      this.schedule(org)
    }, delay).unref()
  }

  /** One push of the current head; answers false on a failure (recorded on the remote). */
  private async pushOnce(org: string): Promise<boolean> {
    const [remote, head] = await Promise.all([
      this.storage.read.mirror.remote(org), this.storage.read.mirror.head(org).then((found) => found?.commit),
    ])
    if (!remote || !head || remote.last_pushed_commit === head) return true
    const repo = new GitRepository(repositoryPath(this.options.storage, org))
    const policy = this.options.outbound ?? OutboundPolicy.DEFAULT
    const step = `could not push to ${remote.url}`
    let token: string | null = null
    try {
      // A remote set before the policy changed is refused before anything is sent.
      const refused = policy.storedRefusal(remote.url, 'url')
      if (refused) throw new OutboundFailure(refused, refused)
      token = this.options.secrets.open(mirrorSecretRef(org), remote.token)
      const password = token
      // Through fetch under the outbound policy, not isomorphic-git's node client: that one (simple-get)
      // follows redirects itself, with no hook to check each hop against the policy.
      const result = await withOutboundFetch(policy, (fetch) => git.push({
        fs, http: gitHttp({ fetch }), gitdir: repo.gitdir, url: remote.url, ref: MAIN, remoteRef: MAIN, force: true,
        onAuth: () => (password ? { username: 'registry', password } : { cancel: true }),
      }))
      if (!result.ok) throw new OutboundFailure(`${step}: ${UNREACHABLE}`, `the remote refused the push: ${result.error ?? JSON.stringify(result.refs)}`)
      await this.recordPush(org, remote, { commit: head, at: new Date().toISOString() })
      return true
    } catch (error) {
      // The remote's answer (a status, a body) goes to the operator's log only; the token never does.
      // A token that must be entered again is the owner's to fix, and says so.
      const failure = error instanceof RegistryError ? new OutboundFailure(`${step}: ${error.message}`, error.message) : outboundFailure(step, error)
      const redactor = new Redactor([token, remote.url])
      redactor.log(this.options.log).warn({ organization_id: org, url: remote.url, reason: failure.reason }, 'git mirror: push failed; retrying later')
      await this.recordPush(org, remote, { error: redactor.redact(failure.message), at: new Date().toISOString() }).catch(() => undefined)
      return false
    }
  }

  /**
   * Records the outcome of a push made to `pushed` (the remote as read when the push started), unless
   * the remote was removed or set again meanwhile: by the CLI in another process too, and with the same
   * URL (a new token). A setting is known by its URL and `created_at`; the outcome changes only the
   * `last_*` fields of the record as committed, decided on what the transaction reads.
   */
  private recordPush(
    org: string, pushed: Pick<MirrorRemote, 'url' | 'created_at'>,
    outcome: { commit: string; at: string } | { error: string; at: string },
  ): Promise<void> {
    return this.storage.transaction(async (tx) => {
      const remote = await tx.mirror.remote(org)
      if (!remote || remote.url !== pushed.url || remote.created_at !== pushed.created_at) return
      const next: MirrorRemote = 'commit' in outcome
        ? { ...remote, last_pushed_commit: outcome.commit, last_pushed_at: outcome.at, last_error: null, last_error_at: null }
        : { ...remote, last_error: outcome.error, last_error_at: outcome.at }
      await tx.mirror.putRemote(org, next)
    })
  }
}
