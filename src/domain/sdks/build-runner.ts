/**
 * Runs queued builds, one at a time per process, oldest first. The queue is persistent (the port's
 * `sdks` section: `queue`, `nextQueued`): builds queued before a restart run after it.
 *
 * A claim is a lease (issue 16, item 8): the claiming transaction marks the build running under this
 * runner's holder until `leaseMs` from now, the runner renews it every third of that while it works, and
 * a build whose lease ended was interrupted (its process died or stalled): whichever runner claims it
 * next queues it again once, and fails it with a clear error the second time. Several replicas on one
 * PostgreSQL database therefore run each build once, and one that dies mid-build leaves its build to the
 * others after its lease. On LMDB one process serves the storage, so a build found running at start was
 * interrupted by the previous process: it is recovered at once, without waiting for its lease. A clean
 * shutdown aborts the running build and puts it back in the queue without counting the attempt.
 *
 * Generation runs in a worker thread (sdk/generate.ts); delivery is network I/O on this thread.
 * Canceling aborts either. A build's outcome is written only if it is still the same running attempt,
 * so a cancel (or an SDK deletion) that lands meanwhile is never overwritten.
 */
import type { Storage, Stores } from '../../storage/port.js'
import { outputRepositorySecretRef, type BuildRecord, type OutputRepositoryRecord } from '../../storage/records.js'
import { deliver } from '../../sdk/delivery.js'
import { generate } from '../../sdk/generate.js'
import { tarGz } from '../../sdk/tarball.js'
import type { GeneratorApi } from '../../sdk/types.js'
import { removeStaleWorkDirs } from '../../sdk/workdirs.js'
import { hostname } from 'node:os'
import { newId, now } from '../resources/ids.js'
import { OutboundFailure, OutboundPolicy, REFUSED } from '../outbound/outbound.js'
import { withOutboundFetch } from '../outbound/outbound-fetch.js'
import { Redactor } from '../outbound/redaction.js'
import { checkOutboundHosts, type Sdks } from './sdks.js'
import { STDERR_LOG, type ServerLog } from '../operations/server-log.js'
import type { Secrets } from '../accounts/secrets.js'
import type { Versions } from '../resources/versions.js'
import { REPORT_NOTHING, type ReportEvent } from '../events/outbox.js'

/** Runs of one build, a crash-interrupted one included. */
export const MAX_ATTEMPTS = 2
/** Bytes of log kept per build; beyond, the log says it was cut. */
export const LOG_LIMIT = 64 * 1024
/** How long a claim holds without renewal; renewed every third of it. */
export const LEASE_MS = 60_000
/** How often a runner on a shared storage looks at the queue unnudged (builds queued through other replicas, ended leases). */
export const POLL_MS = 5_000

export interface BuildRunnerOptions {
  /** Longest build (generation and delivery) before it fails. */
  timeoutMs?: number
  /** REGISTRY_OUTBOUND_HOSTS: checked before delivery and on every request of it (default: any public host, no internal one). */
  outbound?: OutboundPolicy
  /** The operator's log: why a delivery failed (the build says only that it was refused or unreachable). */
  log?: ServerLog
  /** Opens the output repository's token for delivery. */
  secrets: Secrets
  /** Reports `build.succeeded` and `build.failed` (default: nothing). */
  events?: ReportEvent
  /** A claim's lease (default LEASE_MS). */
  leaseMs?: number
  /** Unnudged look at the queue on PostgreSQL (default POLL_MS); LMDB's one process is nudged by its own queueing. */
  pollMs?: number
  /** The generator thread's node options (default: this thread's). */
  execArgv?: readonly string[]
}

class Shutdown extends Error {
  constructor() { super('the registry is shutting down'); this.name = 'Shutdown' }
}
class Canceled extends Error {
  constructor() { super('canceled'); this.name = 'Canceled' }
}
class LeaseLost extends Error {
  constructor() { super('the lease on this build ended and another runner took it'); this.name = 'LeaseLost' }
}

/** A build's log: timestamped lines, cut at LOG_LIMIT; no NUL character (the storage keeps text without it). */
class BuildLog {
  private text: string
  /** Takes out the output repository's secrets: no line of the log holds one, whatever a remote echoed. */
  redactor = Redactor.NONE
  constructor(initial = '') { this.text = initial }
  add(line: string): void {
    if (this.text.length >= LOG_LIMIT) return
    const next = this.text + `${now()} ${this.redactor.redact(line).replaceAll('\u0000', '\ufffd')}\n`
    this.text = next.length < LOG_LIMIT ? next : `${next.slice(0, LOG_LIMIT)}\n[log cut at ${LOG_LIMIT} bytes]\n`
  }
  toString(): string { return this.text }
}

export class BuildRunner {
  #running: { id: string; controller: AbortController } | null = null
  #loop: Promise<void> | null = null
  #stopping = false
  #wake: (() => void) | null = null
  /** A build was queued since the loop last looked at the queue (its claim is async: the nudge is kept). */
  #nudged = false
  readonly #timeoutMs: number
  readonly #outbound: OutboundPolicy
  readonly #log: ServerLog
  readonly #secrets: Secrets
  readonly #events: ReportEvent
  readonly #leaseMs: number
  readonly #pollMs: number
  readonly #execArgv: readonly string[] | undefined
  /** This runner's name on the builds it claims: the host and process, and a ULID (two registries may share a process). */
  readonly holder = `${hostname()}:${process.pid}:${newId()}`

  constructor(
    private readonly storage: Storage,
    sdks: Sdks,
    private readonly versions: Versions,
    options: BuildRunnerOptions,
  ) {
    this.#timeoutMs = options.timeoutMs ?? 15 * 60_000
    this.#outbound = options.outbound ?? OutboundPolicy.DEFAULT
    this.#log = options.log ?? STDERR_LOG
    this.#secrets = options.secrets
    this.#events = options.events ?? REPORT_NOTHING
    this.#leaseMs = options.leaseMs ?? LEASE_MS
    this.#pollMs = options.pollMs ?? POLL_MS
    this.#execArgv = options.execArgv
    sdks.signals = {
      queued: () => { this.#nudged = true; this.#wake?.() },
      canceled: (id) => { if (this.#running?.id === id) this.#running.controller.abort(new Canceled()) },
    }
  }

  /** Recovers builds interrupted by a crash (LMDB: at once; PostgreSQL: as their leases end), then runs the queue until `stop`. */
  start(): void {
    if (this.#loop) return
    this.#stopping = false
    // Work directories a killed registry left behind; failing to remove them must not stop builds.
    void removeStaleWorkDirs().catch(() => {})
    // On PostgreSQL a running build may be another replica's, alive: only its ended lease frees it.
    this.#loop = (this.storage.kind === 'lmdb' ? this.recover() : Promise.resolve()).then(() => this.loop())
  }

  /** Aborts the running build (it is queued again) and waits for the loop to end. */
  async stop(): Promise<void> {
    this.#stopping = true
    this.#running?.controller.abort(new Shutdown())
    this.#wake?.()
    await this.#loop
    this.#loop = null
  }

  /** LMDB at start: every running build was the previous process's. */
  private async recover(): Promise<void> {
    const failed = await this.storage.transaction(async (tx) => {
      const given: BuildRecord[] = []
      for (const build of await tx.sdks.queue()) {
        if (build.status !== 'running') continue
        const ended = await this.interrupted(tx, build)
        if (ended) given.push(ended)
      }
      return given
    })
    for (const build of failed) await this.report(build)
  }

  /**
   * A running build whose runner is gone: queued again (its next run counts one more attempt) or, after
   * MAX_ATTEMPTS, failed (answered, to be reported).
   */
  private async interrupted(tx: Stores, build: BuildRecord): Promise<BuildRecord | undefined> {
    const log = new BuildLog(await tx.sdks.log(build.id))
    const at = now()
    let ended: BuildRecord | undefined
    if (build.attempts >= MAX_ATTEMPTS) {
      const error = `the registry stopped while this build was running, ${build.attempts} times; it is not retried again`
      log.add(error)
      ended = { ...build, status: 'failed', error, updated_at: at, finished_at: at, lease: null }
      await tx.sdks.putBuild(ended)
    } else {
      log.add(`the registry stopped while this build was running (attempt ${build.attempts} of ${MAX_ATTEMPTS}); queued again`)
      await tx.sdks.putBuild({ ...build, status: 'queued', updated_at: at, lease: null })
    }
    await tx.sdks.putLog(build.id, log.toString())
    return ended
  }

  private async loop(): Promise<void> {
    while (!this.#stopping) {
      try {
        this.#nudged = false
        const claimed = await this.claim()
        if (claimed === 'interrupted') continue
        if (!claimed) {
          // Unless a build was queued (or a stop asked) while the claim looked: it is not missed.
          if (!this.#nudged && !this.#stopping) await this.idle()
          this.#wake = null
          continue
        }
        await this.run(claimed.build, claimed.log)
      } catch {
        // A failed write of the outcome (disk full, index closed): the build stays in the queue and
        // is recovered at the next start.
        if (this.#stopping) break
        await new Promise((resolve) => setTimeout(resolve, 1000))
      }
    }
  }

  /**
   * Waits for a nudge (a build queued by this process, a stop). On PostgreSQL also at most `pollMs`:
   * other replicas queue builds and leave ended leases without nudging this one.
   */
  private async idle(): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    await new Promise<void>((resolve) => {
      this.#wake = resolve
      if (this.storage.kind !== 'lmdb') timer = setTimeout(resolve, this.#pollMs)
    })
    clearTimeout(timer)
  }

  /**
   * Claims the oldest claimable build in one transaction: a queued one becomes running under this
   * runner's lease, with one more attempt; a running one whose lease ended is `interrupted` (queued
   * again or failed; 'interrupted' tells the loop to look again). Undefined when there is none.
   */
  private async claim(): Promise<{ build: BuildRecord; log: BuildLog } | 'interrupted' | undefined> {
    const claimed = await this.storage.transaction(async (tx) => {
      const at = now()
      const build = await tx.sdks.nextQueued(at)
      if (!build) return undefined
      if (build.status === 'running') return { failed: await this.interrupted(tx, build) }
      const log = new BuildLog(await tx.sdks.log(build.id))
      const running: BuildRecord = {
        ...build, status: 'running', attempts: build.attempts + 1, started_at: at, updated_at: at, lease: { holder: this.holder, until: this.leaseEnd() },
      }
      log.add(`build ${build.number} (${build.target}) started, attempt ${running.attempts} of ${MAX_ATTEMPTS}, by ${this.holder}`)
      await tx.sdks.putBuild(running)
      await tx.sdks.putLog(build.id, log.toString())
      return { build: running, log }
    })
    if (claimed && 'failed' in claimed) {
      if (claimed.failed) await this.report(claimed.failed)
      return 'interrupted'
    }
    return claimed
  }

  private leaseEnd(): string {
    return new Date(Date.now() + this.#leaseMs).toISOString()
  }

  /**
   * Every third of the lease, moves its end on while the build is still this runner's attempt; when it
   * is not (canceled, by a request to any replica; deleted; or taken by another runner after a stall
   * let the lease end), aborts the run, which then writes nothing of its outcome. A renewal that fails
   * to commit (the database briefly away) is tried again at the next tick.
   */
  private renewLease(build: BuildRecord, controller: AbortController): () => void {
    const timer = setInterval(() => {
      void this.storage.transaction(async (tx) => {
        const current = await tx.sdks.build(build.id)
        if (!current || current.status === 'canceled') return new Canceled()
        if (!this.holds(build, current)) return new LeaseLost()
        await tx.sdks.putBuild({ ...current, lease: { holder: this.holder, until: this.leaseEnd() } })
        return undefined
      }).then((lost) => { if (lost && !controller.signal.aborted) controller.abort(lost) }, () => {})
    }, Math.max(1, Math.floor(this.#leaseMs / 3)))
    return () => clearInterval(timer)
  }

  /** Whether `current` (as stored) is still the running attempt `build` this runner claimed. */
  private holds(build: BuildRecord, current: BuildRecord | undefined): boolean {
    return current?.status === 'running' && current.attempts === build.attempts && current.lease?.holder === this.holder
  }

  private async run(build: BuildRecord, log: BuildLog): Promise<void> {
    const { id } = build
    const read = this.storage.read.sdks
    log.redactor = repositoryRedactor(build.repository === null ? undefined : await read.repository(build.sdk_id, build.target), this.#secrets)
    const controller = new AbortController()
    this.#running = { id, controller }
    const signal = AbortSignal.any([controller.signal, AbortSignal.timeout(this.#timeoutMs)])
    const stopRenewing = this.renewLease(build, controller)
    try {
      const files = await generate({ target: build.target, sdk: build.sdk, config: build.config, apis: await this.documents(build) },
        { signal, timeoutMs: this.#timeoutMs, execArgv: this.#execArgv })
      log.add(`generated ${files.length} files with ${build.inputs.generator.name} ${build.inputs.generator.version}`)
      const artifact = await tarGz(files)
      await this.whileRunning(build, async (tx) => {
        await tx.sdks.putArtifact(id, artifact)
        await tx.sdks.putLog(id, log.toString())
      })
      if (build.repository === null) {
        log.add('succeeded: archive only, nothing delivered')
        const output = { branch: null, commit: null, files: files.map((f) => f.path), pull_request: null, reason: 'archive_only' as const }
        await this.conclude(build, log, { status: 'succeeded', output })
        return
      }
      const repository = await read.repository(build.sdk_id, build.target)
      if (!repository) throw new Error(`the ${build.target} output repository was removed`)
      const token = this.#secrets.open(outputRepositorySecretRef(repository), repository.token)
      log.redactor = log.redactor.with(token, repository.url, repository.api_url)
      const branch = `registry/${build.sdk.slug}-${build.target}-${build.number}`
      const title = `${build.sdk.name}: ${build.target} SDK, build ${build.number}`
      // The delivery's own lines say how far it got with the remote (whether it speaks git): they are
      // the build's log once it succeeded, and the operator's otherwise.
      const steps: string[] = []
      let output: Awaited<ReturnType<typeof deliver>>
      try {
        refuseStored(this.#outbound, repository)
        output = await withOutboundFetch(this.#outbound, (fetch) => deliver({
          repository: { ...repository, token }, files, branch, at: new Date(build.created_at), signal, log: (line) => steps.push(line), fetch,
          message: `${title}\n\n${describeInputs(build)}`, title, body: describeInputs(build),
        }))
      } catch (error) {
        if (error instanceof OutboundFailure) {
          log.redactor.log(this.#log).warn({ build_id: build.id, sdk_id: build.sdk_id, target: build.target, url: repository.url, reason: error.reason, steps },
            'SDK build: the delivery failed')
        }
        throw error
      }
      for (const line of steps) log.add(line)
      log.add(output.reason === 'unchanged' ? 'succeeded: unchanged' : `succeeded: ${output.branch}`)
      await this.conclude(build, log, { status: 'succeeded', output })
    } catch (error) {
      const reason = controller.signal.reason
      if (reason instanceof Shutdown) {
        log.add('interrupted by a shutdown; queued again')
        await this.whileRunning(build, (tx) => this.finish(tx, build, log, { status: 'queued', attempts: build.attempts - 1, started_at: null }))
      } else if (reason instanceof Canceled) {
        log.add('canceled')
        await this.storage.transaction(async (tx) => { if (await tx.sdks.build(id)) await tx.sdks.putLog(id, log.toString()) })
      } else if (reason instanceof LeaseLost) {
        // Another runner has the build (and its log) now: nothing of this run is written.
        this.#log.warn({ build_id: id, holder: this.holder }, 'SDK build: its lease ended while it ran; another runner took it over')
      } else {
        const message = log.redactor.redact(signal.aborted ? `the build ran longer than ${this.#timeoutMs} ms` : (error as Error).message)
        log.add(`failed: ${message}`)
        await this.conclude(build, log, { status: 'failed', error: message })
      }
    } finally {
      stopRenewing()
      this.#running = null
    }
  }

  /** Runs `work` in a transaction if the build is still this running attempt (not canceled, deleted or taken over). */
  private async whileRunning(build: BuildRecord, work: (tx: Stores) => Promise<void>): Promise<boolean> {
    return this.storage.transaction(async (tx) => {
      const current = await tx.sdks.build(build.id)
      if (!this.holds(build, current)) return false
      await work(tx)
      return true
    })
  }

  /** Finishes the running attempt as succeeded or failed, and reports it (`build.succeeded`, `build.failed`). */
  private async conclude(build: BuildRecord, log: BuildLog, change: Pick<BuildRecord, 'status'> & Partial<BuildRecord>): Promise<void> {
    if (!(await this.whileRunning(build, (tx) => this.finish(tx, build, log, change)))) return
    await this.report({ ...build, ...change })
  }

  private async report(build: BuildRecord): Promise<void> {
    const data = {
      build: { id: build.id, sdk_id: build.sdk_id, number: build.number, target: build.target, status: build.status, error: build.error, output: build.output },
      sdk: { id: build.sdk_id, slug: build.sdk.slug, name: build.sdk.name },
    }
    await this.#events(build.organization_id, build.status === 'succeeded' ? 'build.succeeded' : 'build.failed', data)
      .catch((error: unknown) => this.#log.warn({ build_id: build.id, reason: String(error) }, 'SDK build: its event could not be written'))
  }

  private async finish(tx: Stores, build: BuildRecord, log: BuildLog, change: Partial<BuildRecord>): Promise<void> {
    const at = now()
    const done = change.status !== 'queued'
    // Finished or queued again, a build holds no lease.
    await tx.sdks.putBuild({ ...build, ...change, updated_at: at, finished_at: done ? at : null, lease: null })
    await tx.sdks.putLog(build.id, log.toString())
  }

  /** The parsed documents of the build's API versions. */
  private async documents(build: BuildRecord): Promise<GeneratorApi[]> {
    const apis: GeneratorApi[] = []
    for (const api of build.inputs.apis) {
      const version = await this.storage.read.versions.byId(api.version_id)
      if (!version) throw new Error(`version ${api.version_id} of API ${api.slug} no longer exists`)
      const { bytes } = await this.versions.read(version, 'json')
      apis.push({ slug: api.slug, name: api.name, document: JSON.parse(bytes.toString('utf8')) as Record<string, unknown> })
    }
    return apis
  }
}

/** What an output repository holds that no text may show: its token (as sealed, opened), the credentials its URLs may hold. */
function repositoryRedactor(repository: OutputRepositoryRecord | undefined, secrets: Secrets): Redactor {
  if (!repository) return Redactor.NONE
  return new Redactor([secrets.reveal(outputRepositorySecretRef(repository), repository.token), repository.url, repository.api_url])
}

/** A repository connected before the policy changed is refused before anything is fetched or pushed. */
function refuseStored(outbound: OutboundPolicy, repository: OutputRepositoryRecord): void {
  try {
    checkOutboundHosts(outbound, repository)
  } catch (error) {
    const message = `${REFUSED} (${(error as Error).message})`
    throw new OutboundFailure(message, message)
  }
}

function describeInputs(build: BuildRecord): string {
  const lines = build.inputs.apis.map((a) => `- ${a.name} (${a.slug}): version ${a.version_id}, ${a.checksum}`)
  return [
    `Generated by the API registry, build ${build.number} (${build.id}) of ${build.sdk.name}.`,
    '',
    ...lines,
    `- config: ${build.inputs.config_checksum}`,
    `- generator: ${build.inputs.generator.name} ${build.inputs.generator.version}`,
  ].join('\n')
}
