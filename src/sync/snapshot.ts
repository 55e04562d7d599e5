/**
 * One branch of a repository, fetched shallow (depth 1, that branch only, no tags, no checkout) with
 * isomorphic-git into a scratch directory, and its files read straight from the git objects: no
 * working tree is written, so no symlink on disk is ever followed. Symlinks in the tree are resolved
 * by hand and refused when they point outside the snapshot. Runs in a sync worker (see pool.ts).
 */
import fs from 'node:fs'
import { posix } from 'node:path'
import git, { type TreeEntry } from 'isomorphic-git'
import { RegistryError } from '../errors.js'
import { bundleDocument, SnapshotFileError } from '../documents/bundle.js'
import type { DocumentFormat } from '../documents/types.js'
import { DownloadTooLarge, gitHttp, type Fetch } from '../git/git-http.js'
import { outboundFailure } from '../domain/outbound/outbound.js'
import { Redactor } from '../domain/outbound/redaction.js'

export interface SnapshotTask {
  provider: 'github' | 'gitlab'
  url: string
  branch: string
  /** Normalized path of the document inside the repository. */
  path: string
  token: string | null
  /** An empty scratch directory, created and removed by the caller. */
  dir: string
  /** Deadline of the fetch (every HTTP request of it). */
  timeoutMs: number
  /** Bytes the fetch may download in all. */
  maxBytes: number
  /** Bytes of files read and of the bundled document. */
  maxDocumentBytes: number
  /** Files the document may refer to. */
  maxFiles: number
  /** REGISTRY_OUTBOUND_HOSTS (normalized; empty: the default policy): the worker checks each request against it. */
  outboundHosts?: string[]
}

export interface SnapshotDocument {
  commit: string
  text: string
  format: DocumentFormat
  files: string[]
}

/** A failure after the commit was known carries it, so that the last sync can show it. */
export interface SnapshotFailure {
  commit: string | null
  error: { code: RegistryError['code']; detail: string; errors?: RegistryError['errors'] }
  /** Why the repository could not be fetched, for the operator's log only (never with a credential). */
  reason?: string
}

/** Symlinks followed while resolving one path, at most. */
const MAX_LINK_HOPS = 8

/** The user name providers expect with a token over HTTP basic auth. */
const TOKEN_USER = { github: 'x-access-token', gitlab: 'oauth2' } as const

/** What a key holder is told of a fetch that failed before the commit was known (and the outbound policy's words). */
export const FETCH_STEP = 'the repository could not be fetched'

/**
 * What a fetch threw, before the commit was known: the key holder learns that the repository could
 * not be fetched, refused by the outbound policy or unreachable, and nothing more (a status, a closed
 * port or "not a git repository" would make syncs a port scanner of the server's network). `reason`
 * says what happened, for the operator's log, never with a credential.
 */
export function fetchFailure(error: unknown, task: Pick<SnapshotTask, 'branch' | 'timeoutMs'>, secrets = Redactor.NONE): { problem: RegistryError; reason: string } {
  const failure = outboundFailure(FETCH_STEP, error)
  // Messages of lower layers may quote a header, and a remote may echo one: a credential never reaches the log.
  const reason = secrets.redact(fetchReason(error, task) ?? failure.reason)
  return { problem: new RegistryError('repository_unavailable', failure.message), reason }
}

function fetchReason(error: unknown, task: Pick<SnapshotTask, 'branch' | 'timeoutMs'>): string | undefined {
  if (error instanceof DownloadTooLarge) return error.message
  const e = error as { code?: string; name?: string; data?: { statusCode?: number } }
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `fetching the repository took longer than ${task.timeoutMs} ms`
  if (e?.code === 'HttpError') {
    const status = e.data?.statusCode ?? 0
    if (status === 401 || status === 403) return `the repository refused access (HTTP ${status}): check the connection's token`
    if (status === 404) return 'the repository was not found (HTTP 404): check its url, and the token for a private repository'
    return `the repository answered HTTP ${status}`
  }
  if (e?.code === 'NotFoundError') return `branch '${task.branch}' was not found in the repository`
  if (e?.code === 'SmartHttpError' || e?.code === 'EmptyServerResponseError') return 'the url does not answer as a git repository over HTTP'
  return undefined
}

/** Reads files of one commit from the object store, resolving symlinks inside the snapshot only. */
class CommitFiles {
  private readonly trees = new Map<string, TreeEntry[]>()

  constructor(
    private readonly dir: string,
    private readonly rootTree: string,
    private readonly maxBytes: number,
    /** isomorphic-git's object cache: the packfile is parsed once, not once per object read. */
    private readonly cache: object,
  ) {}

  private async tree(oid: string): Promise<TreeEntry[]> {
    let entries = this.trees.get(oid)
    if (!entries) {
      entries = (await git.readTree({ fs, dir: this.dir, oid, cache: this.cache })).tree
      this.trees.set(oid, entries)
    }
    return entries
  }

  private async blob(oid: string): Promise<Uint8Array> {
    return (await git.readBlob({ fs, dir: this.dir, oid, cache: this.cache })).blob
  }

  /** The blob a path names, following symlinks that stay inside the snapshot. */
  private async resolve(path: string): Promise<string> {
    let segments = path.split('/')
    for (let hops = 0; ; hops++) {
      if (hops > MAX_LINK_HOPS) throw new SnapshotFileError(`more than ${MAX_LINK_HOPS} symlinks are followed`)
      const found = await this.walk(segments)
      if ('blob' in found) return found.blob
      const target = Buffer.from(await this.blob(found.link)).toString('utf8')
      if (target.startsWith('/')) throw new SnapshotFileError('is a symlink to an absolute path, outside the repository snapshot')
      const joined = posix.normalize(posix.join(segments.slice(0, found.at).join('/'), target, ...segments.slice(found.at + 1)))
      if (joined === '..' || joined.startsWith('../')) throw new SnapshotFileError('is a symlink that points outside the repository snapshot')
      segments = joined.split('/')
    }
  }

  private async walk(segments: string[]): Promise<{ blob: string } | { link: string; at: number }> {
    let tree = this.rootTree
    for (let i = 0; i < segments.length; i++) {
      const entry = (await this.tree(tree)).find((e) => e.path === segments[i])
      if (!entry) throw new SnapshotFileError('no such file in the branch')
      if (entry.mode === '120000') return { link: entry.oid, at: i }
      if (entry.type === 'commit') throw new SnapshotFileError('is in a git submodule, which is not part of the snapshot')
      const last = i === segments.length - 1
      if (last) {
        if (entry.type !== 'blob') throw new SnapshotFileError('is a directory, not a file')
        return { blob: entry.oid }
      }
      if (entry.type !== 'tree') throw new SnapshotFileError('no such file in the branch')
      tree = entry.oid
    }
    throw new SnapshotFileError('no such file in the branch')
  }

  async read(path: string): Promise<string> {
    const bytes = await this.blob(await this.resolve(path))
    if (bytes.byteLength > this.maxBytes) throw new SnapshotFileError(`is larger than ${this.maxBytes} bytes`)
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    } catch {
      throw new SnapshotFileError('is not UTF-8 text')
    }
  }
}

/**
 * Fetches the branch and answers the document at `path`, bundled with the files it refers to. Every
 * HTTP request goes through `fetcher` (the worker passes one that enforces REGISTRY_OUTBOUND_HOSTS).
 */
export async function readSnapshotDocument(task: SnapshotTask, fetcher?: Fetch): Promise<SnapshotDocument | SnapshotFailure> {
  const signal = AbortSignal.timeout(task.timeoutMs)
  const headers: Record<string, string> = { 'user-agent': 'api-registry-sync' }
  // Sent up front: some providers answer 404, not 401, to an anonymous request for a private repository.
  const basic = task.token ? Buffer.from(`${TOKEN_USER[task.provider]}:${task.token}`).toString('base64') : undefined
  if (basic) headers.authorization = `Basic ${basic}`
  let commit: string
  const cache = {}
  try {
    await git.clone({
      fs, http: gitHttp({ maxBytes: task.maxBytes, signal, fetch: fetcher }), dir: task.dir, url: task.url, ref: task.branch,
      singleBranch: true, depth: 1, noCheckout: true, noTags: true, headers, cache,
    })
    commit = await git.resolveRef({ fs, dir: task.dir, ref: `refs/remotes/origin/${task.branch}` })
  } catch (error) {
    const { problem, reason } = fetchFailure(error, task, new Redactor([task.token, basic]))
    return { ...failure(null, problem), reason }
  }
  try {
    const { commit: object } = await git.readCommit({ fs, dir: task.dir, oid: commit, cache })
    const files = new CommitFiles(task.dir, object.tree, task.maxDocumentBytes, cache)
    const bundled = await bundleDocument(task.path, (path) => files.read(path), {
      maxFiles: task.maxFiles, maxBytes: task.maxDocumentBytes,
    })
    return { commit, ...bundled }
  } catch (error) {
    if (error instanceof RegistryError) return failure(commit, error)
    throw error
  }
}

function failure(commit: string | null, error: RegistryError): SnapshotFailure {
  const detail: SnapshotFailure['error'] = { code: error.code, detail: error.message }
  if (error.errors) detail.errors = error.errors
  return { commit, error: detail }
}
