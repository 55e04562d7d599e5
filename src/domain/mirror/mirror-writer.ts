/**
 * The single writer of the git mirror: applies journal entries to each organization's repository
 * after the index has committed them, in order, one commit per change. It runs off the request path
 * (nudged after a journaled commit, and polling for entries other processes wrote), yields to the
 * event loop between commits, and commits its progress (entries applied, new head) in one storage
 * transaction per batch. A failure leaves the entries pending; they are retried on the next round.
 */
import { GitRepository, MirrorTree, repositoryPath } from '../../git/git-repository.js'
import type { Election, ReadStores, Storage } from '../../storage/port.js'
import type { BlobStore, HistoryEntry, JournalEntry, ResourceKind, ResourceRecord } from '../../storage/records.js'
import { STDERR_LOG, type ServerLog } from '../operations/server-log.js'
import {
  KIND_DIR, METADATA_NAME, commitMessage, documentName, documentNames, historyOrder, metadataFile, type MirrorChange,
} from './mirror-commits.js'

export type MirrorLog = ServerLog

export interface MirrorWriterOptions {
  storage: string
  /** How often to look for entries other processes wrote, and to retry after a failure (ms). */
  pollMs?: number
  /** Entries applied per storage transaction. */
  batch?: number
  /**
   * While changes keep being journaled (uploads under way), the writer waits until none came for this
   * long, so that it never competes with a burst of writes (default 100 ms)…
   */
  quietMs?: number
  /** …unless the oldest pending change is older than this: under sustained load, commits lag by about this much (default 10 s). */
  maxLagMs?: number
  log?: MirrorLog
  /** Called after an organization's head moved (the pusher listens). */
  onHead?: (organizationId: string) => void
  /** Called after each round of the writer (this process is the writer then): the pusher catches up. */
  onRound?: () => void
}

const KINDS: ResourceKind[] = ['api', 'schema', 'ruleset']
/** Journal entries read at a time when counting what the journal describes (describedResources). */
const JOURNAL_PAGE = 2000

/** An organization's repository as the writer last left it. */
interface OrgState {
  repo: GitRepository
  tree: MirrorTree
  head: string | undefined
  /** The root tree of `head`. */
  root?: string
  /**
   * The head the storage recorded when this state was last in step with it: a batch is recorded only
   * if it is still the recorded head (else another writer moved it, and this state is stale).
   */
  recorded: string | undefined
  /** Following (a replica that is not the writer): how many of the organization's changes are applied. */
  followed?: number
}

export class MirrorWriter {
  private readonly states = new Map<string, OrgState>()
  private readonly election: Election
  /** Organizations being followed (`follow`), so that two fetches replay once. */
  private readonly following = new Map<string, Promise<void>>()
  private readonly followers = new Map<string, OrgState>()
  private running: Promise<void> | undefined
  private again = false
  private timer: NodeJS.Timeout | undefined
  private stopped = false
  private checked = false
  /** Consecutive failed rounds: the retry waits longer each time (up to a minute). */
  private failures = 0
  private readonly pollMs: number
  private readonly batch: number
  private readonly quietMs: number
  private readonly maxLagMs: number
  private lastJournalAt = 0
  /** When the first change not yet applied was journaled by this process (an index read per upload cost too much). */
  private pendingSince: number | undefined
  /** Waiting for a quiet moment (`idle` keeps waiting then). */
  private deferred = false
  private readonly log: MirrorLog
  /** Told of each commit a rebuild writes in this process (`registry mirror rebuild` draws it). */
  rebuildProgress: ((organizationId: string, done: number, total: number) => void) | undefined

  constructor(
    private readonly storage: Storage,
    private readonly blobs: BlobStore,
    private readonly options: MirrorWriterOptions,
  ) {
    this.pollMs = options.pollMs ?? 1000
    this.batch = options.batch ?? 200
    this.quietMs = options.quietMs ?? 100
    this.maxLagMs = options.maxLagMs ?? 10_000
    this.log = options.log ?? STDERR_LOG
    this.election = storage.writerElection()
  }

  /** Starts applying: pending entries first (replay), then whatever is journaled later. */
  start(): void {
    this.stopped = false
    this.nudge()
  }

  /** After every journaled commit: notes the activity and asks for a round (never waits for it). */
  journaled(): void {
    this.lastJournalAt = Date.now()
    this.pendingSince ??= this.lastJournalAt
    this.nudge()
  }

  /** Asks for a round soon; never waits for it. */
  nudge(): void {
    if (this.stopped) return
    if (this.running) {
      this.again = true
      return
    }
    this.running = this.rounds().finally(() => {
      this.running = undefined
      if (this.again) this.nudge() // a nudge that came as the last round ended
    })
  }

  /** Waits until everything journaled so far is applied (or a round failed). For tests and close. */
  async idle(): Promise<void> {
    for (;;) {
      if (this.running) await this.running
      else if (this.deferred && !this.stopped) await new Promise((resolve) => setTimeout(resolve, this.quietMs))
      else return
    }
  }

  /** Changes are being journaled right now, and the oldest pending one is not yet too old. */
  private shouldWait(entryAt?: string): boolean {
    if (Date.now() - this.lastJournalAt >= this.quietMs) return false
    const since = entryAt === undefined ? this.pendingSince : Date.parse(entryAt)
    return since !== undefined && Date.now() - since < this.maxLagMs
  }

  /** Applies what is pending, then stops: no more rounds, no timer, the lock released. */
  async close(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    this.timer = undefined
    await this.idle()
    // One more batch for what was journaled last; anything beyond is replayed at the next start.
    if (this.election.held) await this.round().catch(() => 'failed')
    await this.election.release()
  }

  /** Is this process the elected writer (another process, or replica, may be)? */
  get isWriter(): boolean {
    return this.election.held
  }

  private async rounds(): Promise<void> {
    clearTimeout(this.timer)
    let more = true
    this.deferred = false
    while (more && !this.stopped) {
      if (this.shouldWait()) {
        this.deferred = true
        this.again = false // the timer below is the next round
        this.timer = setTimeout(() => this.nudge(), this.quietMs).unref()
        return
      }
      this.again = false
      const outcome = await this.round().catch((error) => {
        this.log.warn({ err: String(error) }, 'git mirror: a round failed; its entries stay pending')
        return 'failed' as const
      })
      this.failures = outcome === 'failed' ? this.failures + 1 : 0
      more = outcome === 'more' || (outcome !== 'failed' && this.again)
      if (outcome === 'done' && !this.again) this.pendingSince = undefined
    }
    if (this.election.held) this.options.onRound?.()
    const delay = Math.min(this.pollMs * 2 ** this.failures, Math.max(this.pollMs, 60_000))
    if (!this.stopped) this.timer = setTimeout(() => this.nudge(), delay).unref()
  }

  /** Applies one batch; answers whether more may be pending, or that an organization failed. */
  private async round(): Promise<'done' | 'more' | 'failed'> {
    const wasWriter = this.election.held
    if (!await this.election.acquire()) return 'done'
    if (!wasWriter) {
      // Elected now (at start, or taking over from a writer that died): what this process knew is stale.
      this.states.clear()
      this.checked = false
    }
    if (!this.checked) {
      await this.checkRepositories()
      this.checked = true
    }
    const entries = await this.storage.read.mirror.pending(this.batch)
    if (entries.length === 0) return 'done'
    const byOrg = new Map<string, JournalEntry[]>()
    for (const entry of entries) {
      const list = byOrg.get(entry.organization_id) ?? []
      list.push(entry)
      byOrg.set(entry.organization_id, list)
    }
    let failed = false
    let stoppedEarly = false
    for (const [org, list] of byOrg) {
      try {
        if (!await this.applyOrganization(org, list)) stoppedEarly = true
      } catch (error) {
        failed = true
        this.states.delete(org) // its tree may be half changed: read it again from the last head
        this.log.warn({ organization_id: org, err: String(error) }, 'git mirror: could not apply changes; they stay pending and are retried')
      }
    }
    if (failed) return 'failed'
    return entries.length === this.batch || stoppedEarly ? 'more' : 'done'
  }

  /** Answers false when it stopped before the last entry (a burst of writes began). */
  private async applyOrganization(org: string, entries: JournalEntry[]): Promise<boolean> {
    const state = await this.load(org)
    if (!state) return true // rebuilt from the index: these entries were superseded and dropped
    const applied: number[] = []
    for (const entry of entries) {
      // A burst of writes began: stop here (what is applied commits below) and continue when quiet.
      if (applied.length > 0 && this.shouldWait(entry.at)) {
        await this.commitProgress(org, state, applied)
        return false
      }
      if (entry.change === 'rebuild') {
        await this.rebuild(org)
        return true
      }
      state.head = await this.apply(state, entry)
      applied.push(entry.seq)
      await new Promise((resolve) => setImmediate(resolve)) // let requests run between commits
    }
    await this.commitProgress(org, state, applied)
    return true
  }

  private async commitProgress(org: string, state: OrgState, applied: number[]): Promise<void> {
    if (state.head) {
      const head = { commit: state.head, updated_at: new Date().toISOString() }
      await this.storage.transaction(async (tx) => {
        // A writer that lost its election without knowing yet (another took over) records nothing.
        if ((await tx.mirror.head(org))?.commit !== state.recorded) {
          throw new Error('the recorded head moved: another process is the writer now')
        }
        await tx.mirror.markApplied(org, applied, head)
      })
      state.recorded = state.head
      await state.repo.setHead(state.head)
      this.options.onHead?.(org)
    } else {
      await this.storage.transaction((tx) => tx.mirror.discard(applied))
    }
  }

  /**
   * The organization's repository state. The first time, it is read from the head the index recorded;
   * when that commit is missing (a backup without the repository, or objects lost with the machine) or
   * the organization holds resources the journal never described (storage older than the mirror),
   * the repository is rebuilt from the index instead, and `undefined` answered.
   */
  private async load(org: string, undescribed?: boolean): Promise<OrgState | undefined> {
    const known = this.states.get(org)
    if (known) return known
    const repo = new GitRepository(repositoryPath(this.options.storage, org))
    await repo.ensure()
    const head = (await this.storage.read.mirror.head(org))?.commit
    if (head && await repo.hasCommit(head)) {
      const state = { repo, tree: await MirrorTree.read(repo.gitdir, head), head, recorded: head }
      await repo.setHead(head)
      this.states.set(org, state)
      return state
    }
    if (!head && !(undescribed ?? await this.hasUndescribedResources(org))) {
      const state = { repo, tree: new MirrorTree(), head: undefined, recorded: undefined }
      this.states.set(org, state)
      return state
    }
    await this.rebuild(org)
    return undefined
  }

  /**
   * Once, when this process becomes the writer: every organization's repository matches the head the
   * index recorded, or is rebuilt (see `load`), also when nothing is pending.
   */
  private async checkRepositories(): Promise<void> {
    let described: Map<string, number> | undefined
    for (const org of await this.storage.read.organizations.list()) {
      if (this.states.has(org.id)) continue
      if (await this.storage.read.mirror.head(org.id)) {
        await this.load(org.id)
        continue
      }
      // The journal is read once for every organization without a head, not once per organization.
      described ??= await this.describedResources()
      // load records an empty state when nothing is undescribed, so the first round does not ask again.
      await this.load(org.id, await this.hasUndescribedResources(org.id, described.get(org.id) ?? 0))
    }
  }

  /**
   * Without a recorded head nothing of the organization was ever applied, so its pending entries are
   * its whole history since the journal began: the resources they describe are their creates less their
   * deletes. More resources in the index than that means some predate the journal. Counting keeps this
   * cheap on a large index (no listing of every resource), and it yields now and then: it runs once at
   * start, while the server already answers.
   */
  private async hasUndescribedResources(org: string, described?: number): Promise<boolean> {
    described ??= (await this.describedResources()).get(org) ?? 0
    const past = { offset: Number.MAX_SAFE_INTEGER, limit: 1 } // answers only `total`
    let present = 0
    for (const kind of KINDS) present += (await this.storage.read.resources.list(org, kind, past)).total
    return present > described
  }

  /**
   * Per organization, the resources the pending journal describes: its creates less its deletes. Read a
   * page at a time with a turn of the event loop between pages: at start a large journal (an import,
   * 100,000 APIs) took over a second in one synchronous read, and the server answered nothing meanwhile.
   */
  private async describedResources(): Promise<Map<string, number>> {
    const described = new Map<string, number>()
    for (let after: number | undefined; ;) {
      const page = await this.storage.read.mirror.pending(JOURNAL_PAGE, after)
      for (const entry of page) {
        const change = entry.change === 'create' ? 1 : entry.change === 'delete' ? -1 : 0
        if (change !== 0) described.set(entry.organization_id, (described.get(entry.organization_id) ?? 0) + change)
      }
      if (page.length < JOURNAL_PAGE) return described
      after = page[page.length - 1].seq
      await new Promise((resolve) => setImmediate(resolve))
    }
  }

  /**
   * Rebuilds an organization's repository from the index: the mirror's history replayed in the order
   * it was journaled (renames, metadata changes and deletions included), so the commits are those a
   * continuously running mirror wrote. Journal entries of the organization up to the snapshot are
   * dropped with the new head, in one transaction. The snapshot is read in one transaction (it only
   * reads): the history and the pending entries it supersedes are of one committed state.
   */
  async rebuild(org: string): Promise<string | undefined> {
    const snapshot = await this.storage.transaction(async (tx) => ({
      history: await this.history(tx, org),
      seqs: (await tx.mirror.pendingOf(org)).map((entry) => entry.seq),
      recorded: (await tx.mirror.head(org))?.commit,
    }))
    const repo = new GitRepository(repositoryPath(this.options.storage, org))
    await repo.ensure()
    const state: OrgState = { repo, tree: new MirrorTree(), head: undefined, recorded: snapshot.recorded }
    for (const [i, entry] of snapshot.history.entries()) {
      state.head = await this.apply(state, entry)
      this.rebuildProgress?.(org, i + 1, snapshot.history.length)
      await new Promise((resolve) => setImmediate(resolve))
    }
    this.states.set(org, state)
    await this.commitProgress(org, state, snapshot.seqs)
    return state.head
  }

  /**
   * On a replica that is not the writer: brings this replica's repository of the organization to the
   * head the writer recorded, so that every replica answers a clone or fetch with the same refs. Its
   * commits are written here from the shared history (the same history gives the same commits), up to
   * the recorded head and no further. The writer's own repository is the one it writes: nothing to do.
   */
  async follow(org: string): Promise<void> {
    if (this.isWriter) return
    const target = (await this.storage.read.mirror.head(org))?.commit
    if (!target) return
    const running = this.following.get(org)
    if (running) return running
    const follow = this.followTo(org, target).finally(() => this.following.delete(org))
    this.following.set(org, follow)
    return follow
  }

  private async followTo(org: string, target: string): Promise<void> {
    const repo = new GitRepository(repositoryPath(this.options.storage, org))
    if (await repo.head() === target) return
    await repo.ensure()
    if (!await repo.hasCommit(target)) {
      // Replayed from where this replica stopped last time, else from the start (also when that misses the target).
      const changes = await this.history(this.storage.read, org)
      let state = this.followers.get(org)
      for (const from of state ? [state.followed ?? 0, 0] : [0]) {
        if (from === 0) state = { repo, tree: new MirrorTree(), head: undefined, recorded: undefined, followed: 0 }
        for (let i = from; i < changes.length && state!.head !== target; i++) {
          state!.head = await this.apply(state!, changes[i])
          state!.followed = i + 1
          await new Promise((resolve) => setImmediate(resolve))
        }
        if (state!.head === target) break
      }
      this.followers.set(org, state!)
      if (state!.head !== target) {
        // Only a history rewritten under it (a rebuild of storage older than the history): serve what is here.
        this.log.warn({ organization_id: org, head: target }, 'git mirror: this replica could not replay the recorded head from the history')
        return
      }
    }
    // Became the writer meanwhile: its own rounds move the ref.
    if (!this.isWriter) await repo.setHead(target)
  }

  /**
   * The organization's changes in commit order: its history, and before it what only the index knows
   * (resources and versions from before the history began: each resource created with the metadata it
   * had before its first recorded update, or its current metadata, and its versions, ordered by time).
   */
  private async history(read: ReadStores, org: string): Promise<MirrorChange[]> {
    const logged = await read.mirror.history(org)
    const described = new Set<string>()
    const loggedVersions = new Set<string>()
    /** Each resource as it was last known: a deleted one's last record, else its record in the index. */
    const lastKnown = new Map<string, ResourceRecord>()
    const firstBefore = new Map<string, ResourceRecord>()
    for (const entry of logged) {
      if (entry.change === 'create') described.add(entry.resource.id)
      else if (entry.change === 'version') loggedVersions.add(entry.version.id)
      else if (entry.change === 'update' && !firstBefore.has(entry.resource.id)) firstBefore.set(entry.resource.id, entry.before)
      if (entry.change === 'delete') lastKnown.set(entry.resource.id, entry.resource)
    }
    const older: MirrorChange[] = []
    const all = { offset: 0, limit: Number.MAX_SAFE_INTEGER }
    for (const kind of KINDS) {
      for (const resource of (await read.resources.list(org, kind, all)).items) {
        lastKnown.set(resource.id, resource)
        if (!described.has(resource.id)) {
          older.push({ change: 'create', resource: firstBefore.get(resource.id) ?? resource, at: resource.created_at })
        }
        for (const version of (await read.versions.list(resource.id, all)).items) {
          if (!loggedVersions.has(version.id)) older.push({ change: 'version', resource, version, at: version.created_at })
        }
      }
    }
    older.sort(historyOrder)
    return replay([...older, ...logged], lastKnown)
  }

  /** One change, one commit (none when the tree does not change); answers the head after it. */
  private async apply(state: OrgState, entry: JournalEntry | MirrorChange): Promise<string | undefined> {
    if (entry.change === 'rebuild') return state.head
    const { tree, repo } = state
    const { resource } = entry
    const dir = KIND_DIR[resource.kind]
    if (!dir) return state.head // a kind the mirror does not hold (none today): no commit
    switch (entry.change) {
      case 'create':
        tree.files(dir, resource.slug).set(METADATA_NAME[resource.kind], await repo.writeBlob(Buffer.from(metadataFile(resource))))
        break
      case 'update': {
        const files = tree.kinds.get(dir)?.get(entry.before.slug)
        if (entry.before.slug !== resource.slug) {
          tree.removeDir(dir, entry.before.slug)
          if (files) for (const [name, oid] of files) tree.files(dir, resource.slug).set(name, oid)
        }
        tree.files(dir, resource.slug).set(METADATA_NAME[resource.kind], await repo.writeBlob(Buffer.from(metadataFile(resource))))
        break
      }
      case 'delete':
        tree.removeDir(dir, resource.slug)
        break
      case 'version': {
        const { version } = entry
        let bytes: Buffer
        try {
          bytes = await this.blobs.get({ checksum: version.checksum, digest: version.digest, format: version.format })
        } catch (error) {
          // Only when the resource was deleted and its blobs collected before the mirror caught up.
          if (await this.storage.read.versions.byId(version.id)) throw error
          this.log.warn({ version_id: version.id }, 'git mirror: the document of a deleted resource is gone; its version commit is skipped')
          return state.head
        }
        const files = tree.files(dir, resource.slug)
        for (const name of documentNames(resource.kind)) files.delete(name)
        files.set(documentName(resource.kind, version.format), await repo.writeBlob(bytes))
        if (!files.has(METADATA_NAME[resource.kind])) {
          files.set(METADATA_NAME[resource.kind], await repo.writeBlob(Buffer.from(metadataFile(resource))))
        }
        break
      }
    }
    const root = await tree.write(repo.gitdir)
    if (state.head) state.root ??= await repo.treeOf(state.head)
    if (state.head && state.root === root) return state.head
    state.root = root
    return repo.writeCommit(root, state.head, commitMessage(entry), entry.at)
  }
}


/**
 * The changes to commit, each with the resource as it was then: the record its create or last update
 * left (a version's commit path and message use its slug then), else the one last known.
 */
function replay(entries: (MirrorChange | HistoryEntry)[], lastKnown: Map<string, ResourceRecord>): MirrorChange[] {
  const current = new Map<string, ResourceRecord>()
  return entries.map((entry) => {
    if (entry.change !== 'version') {
      current.set(entry.resource.id, entry.resource)
      return entry
    }
    if ('resource' in entry) {
      current.set(entry.resource.id, current.get(entry.resource.id) ?? entry.resource)
      return { ...entry, resource: current.get(entry.resource.id)! }
    }
    const resource = current.get(entry.resource_id) ?? lastKnown.get(entry.resource_id)
    return resource ? { change: 'version', resource, version: entry.version, at: entry.at } : undefined
  }).filter((entry): entry is MirrorChange => entry !== undefined)
}
