/**
 * Repositories for repository-sync tests: a working copy made with the real git CLI (driven
 * asynchronously: the git server answers on this process's event loop), pushed to a bare repository
 * of a `startGitHttpServer` server.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { tempDir } from '../temp.js'
import type { GitHttpServer } from './git-http-server.js'

const run = promisify(execFile)

export async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd })
  return stdout.trim()
}

/** A file's content, or `{ symlink }` for a symbolic link to that target. */
export type FileContent = string | { symlink: string }

export interface TestRepository {
  /** Clone url on the test server. */
  url: string
  work: string
  /** Writes (or, with null, deletes) files, commits and pushes to `branch`; answers the commit id. */
  commit(files: Record<string, FileContent | null>, branch?: string): Promise<string>
  cleanup(): void
}

export async function createRepository(server: GitHttpServer, name: string, remoteUrl?: string): Promise<TestRepository> {
  server.createBare(name)
  const url = `${server.url}/${name}.git`
  const work = tempDir('registry-sync-work-')
  await git(work, 'init', '--quiet', '--initial-branch=main')
  await git(work, 'remote', 'add', 'origin', remoteUrl ?? url)
  return {
    url,
    work,
    async commit(files, branch = 'main') {
      const current = await git(work, 'branch', '--show-current')
      if (current !== branch) {
        const exists = (await git(work, 'branch', '--list', branch)) !== ''
        await git(work, 'checkout', '--quiet', ...(exists ? [branch] : ['-b', branch]))
      }
      for (const [path, content] of Object.entries(files)) {
        const target = join(work, path)
        rmSync(target, { force: true })
        if (content === null) continue
        mkdirSync(dirname(target), { recursive: true })
        if (typeof content === 'string') writeFileSync(target, content)
        else symlinkSync(content.symlink, target)
      }
      await git(work, 'add', '-A')
      await git(work, 'commit', '--quiet', '--allow-empty', '-m', `change ${Object.keys(files).join(', ')}`)
      await git(work, 'push', '--quiet', 'origin', branch)
      return git(work, 'rev-parse', 'HEAD')
    },
    cleanup: () => rmSync(work, { recursive: true, force: true }),
  }
}

/** Polls `check` until it answers a value (not undefined), for at most `ms`. */
export async function eventually<T>(check: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
