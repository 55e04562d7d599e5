/**
 * What a fetch from the mirror sends: the objects the client lacks, cut to the history a shallow fetch
 * asks for (`--depth`, `--deepen`, `--shallow-since`), without blobs for a partial clone
 * (`--filter=blob:none`), and the shallow boundary the client must record.
 *
 * Commits are selected by a walk from the wants. Without a depth the walk stops at the commits the
 * client has; with one it goes as deep as asked, and what the client already has is found by walking
 * from its common commits down to its own shallow boundary, inside the selection only.
 */
import * as fs from 'node:fs'
import git from 'isomorphic-git'

/** How much history a shallow fetch asks for: `deepen N` (from the wants, or below the client's boundary), or `deepen-since`. */
export type Deepen = { depth: number; relative: boolean } | { since: number }

/** New boundary commits of the client, and its old ones that now get their parents. */
export interface ShallowUpdate {
  shallow: string[]
  unshallow: string[]
}

export interface UploadRequest {
  wants: string[]
  /** Commits both sides have. */
  common: string[]
  /** The client's shallow commits: it has them, not their parents. */
  shallows: string[]
  deepen: Deepen | undefined
  omitBlobs: boolean
}

export interface UploadSelection {
  oids: string[]
  /** Present when the request deepened (the response's `shallow-info`). */
  shallow: ShallowUpdate | undefined
}

interface Walked {
  parents: string[]
  tree: string
  time: number
  depth: number
}

export class UploadWalk {
  private readonly cache = {}

  constructor(private readonly gitdir: string) {}

  async select(request: UploadRequest): Promise<UploadSelection> {
    const commitWants: string[] = []
    const send: string[] = []
    const known = new Set<string>()
    for (const common of request.common) await this.collectTree((await this.commit(common)).tree, known, undefined, false)
    for (const oid of request.wants) {
      const type = await this.typeOf(oid)
      if (type === 'commit') commitWants.push(oid)
      // A partial clone fetches the blobs (or trees) it needs by id: sent whatever the filter says.
      else if (type === 'tree') await this.collectTree(oid, known, send, request.omitBlobs)
      else if (!known.has(oid)) { known.add(oid); send.push(oid) }
    }
    const deepen = request.deepen && await this.absolute(request.deepen, commitWants, request.shallows)
    const selected = await this.walk(commitWants, deepen, new Set(request.common))
    const has = this.clientHas(request.common, request.shallows, selected)
    for (const [oid, commit] of selected) {
      if (has.has(oid)) continue
      send.push(oid)
      await this.collectTree(commit.tree, known, send, request.omitBlobs)
    }
    return { oids: send, shallow: deepen ? this.boundary(selected, has, new Set(request.shallows)) : undefined }
  }

  /** Commits from the wants, newest first: all of them down to the common ones, or as deep as asked. */
  private async walk(wants: string[], deepen: Deepen | undefined, common: Set<string>): Promise<Map<string, Walked>> {
    const selected = new Map<string, Walked>()
    const queue: [string, number][] = wants.map((oid) => [oid, 0])
    while (queue.length > 0) {
      const [oid, depth] = queue.shift()!
      if (selected.has(oid) || (!deepen && common.has(oid))) continue
      const commit = await this.commit(oid)
      if (depth > 0 && deepen && !within(deepen, depth, commit.time)) continue
      selected.set(oid, { ...commit, depth })
      for (const parent of commit.parents) queue.push([parent, depth + 1])
    }
    return selected
  }

  /** `deepen-relative N`: N more commits below the client's deepest shallow commit. */
  private async absolute(deepen: Deepen, wants: string[], shallows: string[]): Promise<Deepen> {
    if (!('depth' in deepen) || !deepen.relative || shallows.length === 0) return deepen
    let deepest = 0
    const unseen = new Set(shallows)
    const seen = new Set<string>()
    const queue: [string, number][] = wants.map((oid) => [oid, 0])
    while (queue.length > 0 && unseen.size > 0) {
      const [oid, depth] = queue.shift()!
      if (seen.has(oid)) continue
      seen.add(oid)
      if (unseen.delete(oid)) deepest = Math.max(deepest, depth)
      else for (const parent of (await this.commit(oid)).parents) queue.push([parent, depth + 1])
    }
    return { depth: deepest + 1 + deepen.depth, relative: false }
  }

  /** Selected commits the client has: reachable from its common commits, down to its shallow boundary. */
  private clientHas(common: string[], shallows: string[], selected: Map<string, Walked>): Set<string> {
    const has = new Set<string>()
    const boundary = new Set(shallows)
    const stack = [...common]
    while (stack.length > 0) {
      const oid = stack.pop()!
      if (has.has(oid)) continue
      has.add(oid)
      const commit = selected.get(oid)
      if (commit && !boundary.has(oid)) stack.push(...commit.parents)
    }
    return has
  }

  /** The client's new shallow commits (selected, with a parent left out) and those it no longer needs. */
  private boundary(selected: Map<string, Walked>, has: Set<string>, shallows: Set<string>): ShallowUpdate {
    const update: ShallowUpdate = { shallow: [], unshallow: [] }
    for (const [oid, commit] of selected) {
      const cut = commit.parents.some((parent) => !selected.has(parent))
      if (cut && !(has.has(oid) && !shallows.has(oid))) update.shallow.push(oid)
      else if (!cut && shallows.has(oid) && commit.parents.length > 0) update.unshallow.push(oid)
    }
    return update
  }

  private async commit(oid: string): Promise<Omit<Walked, 'depth'>> {
    const { commit } = await git.readCommit({ fs, gitdir: this.gitdir, oid, cache: this.cache })
    return { parents: commit.parent, tree: commit.tree, time: commit.committer.timestamp }
  }

  private async typeOf(oid: string): Promise<string> {
    return (await git.readObject({ fs, gitdir: this.gitdir, oid, format: 'content', cache: this.cache })).type
  }

  /** Adds a tree's objects not in `known` to `known` (and to `out`), skipping subtrees already known. */
  private async collectTree(oid: string, known: Set<string>, out: string[] | undefined, omitBlobs: boolean): Promise<void> {
    if (known.has(oid)) return
    known.add(oid)
    out?.push(oid)
    const { tree } = await git.readTree({ fs, gitdir: this.gitdir, oid, cache: this.cache })
    for (const entry of tree) {
      if (entry.type === 'tree') await this.collectTree(entry.oid, known, out, omitBlobs)
      else if (entry.type === 'blob' && !omitBlobs && !known.has(entry.oid)) {
        known.add(entry.oid)
        out?.push(entry.oid)
      }
    }
  }
}

function within(deepen: Deepen, depth: number, time: number): boolean {
  return 'depth' in deepen ? depth < deepen.depth : time >= deepen.since
}
