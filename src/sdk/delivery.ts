/**
 * Delivery of generated files with isomorphic-git: fetch the base branch (objects only, no checkout),
 * write the files as a tree, and when it differs from the base branch's tree, commit it on the build's branch with a fixed author and the build's time, push, and open a pull
 * request (GitHub) or merge request (GitLab). A plain git remote gets the branch only.
 *
 * The commit is a pure function of the files, the base commit and the build: a build retried after a
 * crash that had already pushed makes the same commit, and the push is then a no-op.
 *
 * A step that fails on the remote's side throws an OutboundFailure: the key holder is told which step
 * (delivering to the repository, opening the pull request) and "refused by the outbound policy" or
 * "unreachable", never what the remote answered; that (`reason`) is for the operator's log.
 */
import * as fs from 'node:fs'
import { rm } from 'node:fs/promises'
import git from 'isomorphic-git'
import type { BuildOutput, Provider } from '../storage/records.js'
import { gitHttp, type Fetch } from '../git/git-http.js'
import { OutboundFailure, UNREACHABLE, outboundFailure } from '../domain/outbound/outbound.js'
import { openPullRequest } from './providers.js'
import type { GeneratedFile } from './types.js'
import { makeWorkDir } from './workdirs.js'

export const COMMIT_AUTHOR = { name: 'API Registry', email: 'registry@localhost' }

export interface DeliveryInput {
  repository: { provider: Provider; url: string; base_branch: string; api_url: string | null; token: string | null }
  files: GeneratedFile[]
  branch: string
  /** The build's time: the commit's author and committer time. */
  at: Date
  message: string
  title: string
  body: string
  signal: AbortSignal
  log: (line: string) => void
  /** Every HTTP request of the delivery (git and the provider's API) goes through it; default fetch. */
  fetch?: Fetch
}

/** User names the providers expect with a token as the password. */
const TOKEN_USER: Record<Provider, string> = { github: 'x-access-token', gitlab: 'oauth2', git: 'registry' }

export async function deliver(input: DeliveryInput): Promise<BuildOutput> {
  const { repository, signal } = input
  const http = gitHttp({ signal, fetch: input.fetch })
  const token = repository.token
  const onAuth = token ? () => ({ username: TOKEN_USER[repository.provider], password: token }) : undefined
  // isomorphic-git then throws UserCanceledError: the reason for the log is that the token was refused.
  let credentialsRefused = false
  const onAuthFailure = () => {
    credentialsRefused = true
    return { cancel: true as const }
  }
  const files = input.files.map((f) => f.path)
  const dir = await makeWorkDir('delivery')
  const delivering = `could not deliver to ${repository.url}`
  const remoteFailure = (reason: string) => new OutboundFailure(`${delivering}: ${UNREACHABLE}`, reason)
  /** Runs a network step; what it threw becomes an OutboundFailure (an abort stays one). */
  const step = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work()
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error
      if (credentialsRefused) throw remoteFailure(`the repository refused the ${token ? 'token' : 'request without a token'} (HTTP 401 or 403)`)
      throw outboundFailure(delivering, error)
    }
  }
  try {
    const refs = await step(() =>
      git.listServerRefs({ http, url: repository.url, prefix: 'refs/heads/', onAuth, onAuthFailure }))
    const hasBase = refs.some((ref) => ref.ref === `refs/heads/${repository.base_branch}`)
    if (!hasBase && refs.length > 0) throw remoteFailure(`the repository has no branch '${repository.base_branch}'`)
    await git.init({ fs, dir, defaultBranch: repository.base_branch })
    await git.addRemote({ fs, dir, remote: 'origin', url: repository.url })
    let baseCommit: string | undefined
    if (hasBase) {
      // Only the base branch, one commit deep, no checkout: the tree is built from objects.
      input.log(`fetching ${repository.base_branch} of ${repository.url}`)
      const fetched = await step(() => git.fetch({
        fs, http, dir, remote: 'origin', ref: repository.base_branch, singleBranch: true, depth: 1, tags: false, onAuth, onAuthFailure,
      }))
      baseCommit = fetched.fetchHead ?? undefined
      if (!baseCommit) throw remoteFailure(`could not fetch ${repository.base_branch} from ${repository.url}`)
    } else {
      input.log(`${repository.url} is empty: the branch gets the first commit`)
    }
    signal.throwIfAborted()
    const tree = await writeFiles(dir, input.files)
    if (baseCommit) {
      const { commit } = await git.readCommit({ fs, dir, oid: baseCommit })
      if (commit.tree === tree) {
        input.log(`the generated files equal ${repository.base_branch} (${baseCommit.slice(0, 12)}): nothing to deliver`)
        return { branch: null, commit: null, files, pull_request: null, reason: 'unchanged' }
      }
    }
    const person = { ...COMMIT_AUTHOR, timestamp: Math.floor(input.at.getTime() / 1000), timezoneOffset: 0 }
    const commit = await git.commit({
      fs, dir, message: input.message, author: person, committer: person, tree,
      parent: baseCommit ? [baseCommit] : [], ref: `refs/heads/${input.branch}`,
    })
    input.log(`committed ${commit} on ${input.branch}; pushing`)
    signal.throwIfAborted()
    const pushed = await step(() => git.push({
      fs, http, dir, remote: 'origin', ref: input.branch, remoteRef: input.branch, onAuth, onAuthFailure,
    }))
    if (!pushed.ok) throw remoteFailure(`the push of ${input.branch} was refused: ${pushed.error ?? JSON.stringify(pushed.refs)}`)
    input.log(`pushed ${input.branch}`)
    if (repository.provider === 'git') return { branch: input.branch, commit, files, pull_request: null, reason: 'git_provider' }
    signal.throwIfAborted()
    const pullRequest = await openPullRequest({
      provider: repository.provider, url: repository.url, api_url: repository.api_url, token,
      branch: input.branch, base: repository.base_branch, title: input.title, body: input.body, signal, fetch: input.fetch,
    })
    input.log(`opened ${repository.provider === 'github' ? 'pull request' : 'merge request'} #${pullRequest.number}: ${pullRequest.url}`)
    return { branch: input.branch, commit, files, pull_request: pullRequest, reason: null }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

interface TreeNode { blobs: Map<string, string>; trees: Map<string, TreeNode> }

/** Writes the files as blobs and trees; answers the root tree's id. */
async function writeFiles(dir: string, files: GeneratedFile[]): Promise<string> {
  const root: TreeNode = { blobs: new Map(), trees: new Map() }
  for (const file of files) {
    const parts = file.path.split('/')
    let node = root
    for (const part of parts.slice(0, -1)) {
      let next = node.trees.get(part)
      if (!next) node.trees.set(part, next = { blobs: new Map(), trees: new Map() })
      node = next
    }
    node.blobs.set(parts[parts.length - 1], await git.writeBlob({ fs, dir, blob: Buffer.from(file.content, 'utf8') }))
  }
  return writeTree(dir, root)
}

async function writeTree(dir: string, node: TreeNode): Promise<string> {
  const entries: { mode: string; path: string; oid: string; type: 'blob' | 'tree' }[] = []
  for (const [path, oid] of node.blobs) entries.push({ mode: '100644', path, oid, type: 'blob' })
  for (const [path, child] of node.trees) entries.push({ mode: '040000', path, oid: await writeTree(dir, child), type: 'tree' })
  // Git's order: by name, a directory compared as if its name ended with '/'.
  const sortKey = (e: { path: string; type: string }) => (e.type === 'tree' ? `${e.path}/` : e.path)
  entries.sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0))
  return git.writeTree({ fs, dir, tree: entries })
}
