/**
 * One organization's bare git repository (`<storage>/git/<org-id>.git`), written and read with
 * isomorphic-git. The mirror keeps the tree of `main` in memory (`MirrorTree`) and writes only the
 * trees a change touches; objects are content-addressed, so the same history gives the same ids.
 */
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { buffer } from 'node:stream/consumers'
import { pipeline } from 'node:stream/promises'
import { createDeflate } from 'node:zlib'
import git, { type TreeEntry } from 'isomorphic-git'
import { UploadWalk, type UploadRequest, type UploadSelection } from './git-upload.js'
// Objects and refs written whole or not at all: a kill -9 mid-write must not leave an empty object.
import { wholeFileFs as fs } from './whole-file-fs.js'

/**
 * `parts` as one zlib stream, without joining them first: a copy of a document of megabytes into a new
 * buffer costs milliseconds a megabyte here (the pages are new).
 */
async function deflated(parts: Uint8Array[]): Promise<Buffer> {
  const deflate = createDeflate({ chunkSize: 256 * 1024 })
  const [out] = await Promise.all([buffer(deflate), pipeline(Readable.from(parts), deflate)])
  return out
}

export const MAIN = 'refs/heads/main'
const FILE_MODE = '100644'
const DIR_MODE = '040000'

/** The author and committer of every mirror commit; its date is the change's time. */
const IDENTITY = { name: 'API Registry', email: 'registry@localhost' }

export function repositoryPath(storage: string, organizationId: string): string {
  return join(storage, 'git', `${organizationId}.git`)
}

/** `apis` → slug → file name → blob id: the tree of `main`, with the ids of the trees last written. */
export class MirrorTree {
  readonly kinds = new Map<string, Map<string, Map<string, string>>>()
  private readonly written = new Map<string, string>()

  files(kind: string, slug: string): Map<string, string> {
    let dirs = this.kinds.get(kind)
    if (!dirs) this.kinds.set(kind, dirs = new Map())
    let files = dirs.get(slug)
    if (!files) dirs.set(slug, files = new Map())
    this.touch(kind, slug)
    return files
  }

  removeDir(kind: string, slug: string): void {
    const dirs = this.kinds.get(kind)
    if (!dirs?.delete(slug)) return
    this.touch(kind, slug)
    if (dirs.size === 0) this.kinds.delete(kind)
  }

  private touch(kind: string, slug: string): void {
    this.written.delete(`${kind}/${slug}`)
    this.written.delete(kind)
    this.written.delete('')
  }

  /** Writes the trees changed since the last call; answers the root tree's id. */
  async write(gitdir: string): Promise<string> {
    const cached = this.written.get('')
    if (cached) return cached
    const root: TreeEntry[] = []
    for (const [kind, dirs] of this.kinds) {
      let kindOid = this.written.get(kind)
      if (!kindOid) {
        const kindEntries: TreeEntry[] = []
        for (const [slug, files] of dirs) {
          const path = `${kind}/${slug}`
          let dirOid = this.written.get(path)
          if (!dirOid) {
            const tree = [...files].map(([name, oid]) => ({ mode: FILE_MODE, path: name, oid, type: 'blob' as const }))
            dirOid = await git.writeTree({ fs, gitdir, tree })
            this.written.set(path, dirOid)
          }
          kindEntries.push({ mode: DIR_MODE, path: slug, oid: dirOid, type: 'tree' })
        }
        kindOid = await git.writeTree({ fs, gitdir, tree: kindEntries })
        this.written.set(kind, kindOid)
      }
      root.push({ mode: DIR_MODE, path: kind, oid: kindOid, type: 'tree' })
    }
    const rootOid = await git.writeTree({ fs, gitdir, tree: root })
    this.written.set('', rootOid)
    return rootOid
  }

  /** Reads the tree of a commit (two levels of directories, then files). */
  static async read(gitdir: string, commit: string): Promise<MirrorTree> {
    const tree = new MirrorTree()
    const cache = {}
    const { tree: root } = await git.readTree({ fs, gitdir, oid: commit, cache })
    for (const kind of root.filter((entry) => entry.type === 'tree')) {
      const { tree: dirs } = await git.readTree({ fs, gitdir, oid: kind.oid, cache })
      for (const dir of dirs.filter((entry) => entry.type === 'tree')) {
        const { tree: files } = await git.readTree({ fs, gitdir, oid: dir.oid, cache })
        const map = tree.files(kind.path, dir.path)
        for (const file of files) if (file.type === 'blob') map.set(file.path, file.oid)
      }
    }
    return tree
  }
}

export class GitRepository {
  constructor(readonly gitdir: string) {}

  exists(): boolean {
    return existsSync(join(this.gitdir, 'HEAD'))
  }

  async ensure(): Promise<void> {
    if (!this.exists()) await git.init({ fs, gitdir: this.gitdir, bare: true, defaultBranch: 'main' })
  }

  /**
   * A blob object, deflated by zlib in libuv's thread pool. isomorphic-git's own writeBlob deflates
   * through web streams on this thread (a CompressionStream over a Blob) and hashes with WebCrypto: a
   * 5 MB document took about 65 ms of the event loop. The object id is the SHA-1 of the uncompressed
   * object, as git defines it; any zlib stream of it is the same object.
   */
  async writeBlob(bytes: Uint8Array): Promise<string> {
    const header = Buffer.from(`blob ${bytes.byteLength}\0`)
    const oid = createHash('sha1').update(header).update(bytes).digest('hex')
    await git.writeObject({ fs, gitdir: this.gitdir, type: 'blob', format: 'deflated', oid, object: await deflated([header, bytes]) })
    return oid
  }

  writeCommit(tree: string, parent: string | undefined, message: string, at: string): Promise<string> {
    const signature = { ...IDENTITY, timestamp: Math.floor(Date.parse(at) / 1000), timezoneOffset: 0 }
    return git.writeCommit({
      fs, gitdir: this.gitdir,
      commit: { tree, parent: parent ? [parent] : [], author: signature, committer: signature, message },
    })
  }

  /** The tree id of a commit. */
  async treeOf(commit: string): Promise<string> {
    return (await git.readCommit({ fs, gitdir: this.gitdir, oid: commit })).commit.tree
  }

  async hasCommit(oid: string): Promise<boolean> {
    try {
      await git.readCommit({ fs, gitdir: this.gitdir, oid })
      return true
    } catch {
      return false
    }
  }

  /** The commit `main` points at, if any. */
  async head(): Promise<string | undefined> {
    try {
      return await git.resolveRef({ fs, gitdir: this.gitdir, ref: MAIN })
    } catch {
      return undefined
    }
  }

  async setHead(commit: string): Promise<void> {
    await git.writeRef({ fs, gitdir: this.gitdir, ref: MAIN, value: commit, force: true })
  }

  /** What a fetch sends: see UploadWalk. */
  selectUpload(request: UploadRequest): Promise<UploadSelection> {
    return new UploadWalk(this.gitdir).select(request)
  }

  /** A packfile (version 2, undeltified) holding exactly `oids`. */
  async pack(oids: string[]): Promise<Uint8Array> {
    const { packfile } = await git.packObjects({ fs, gitdir: this.gitdir, oids, cache: {} })
    return packfile!
  }
}
