/**
 * A registry and a real git server on loopback for one test file (repository sync, webhooks), the
 * registry opted in to loopback (OUTBOUND_LOOPBACK), which the outbound policy refuses by default: both
 * closed, and every repository made through `repository` removed, when the file's tests end.
 */
import { rmSync } from 'node:fs'
import type { Test } from 'tap'
import { OUTBOUND_LOOPBACK, startTestServer, tempDir, type TestServer } from '../helpers.js'
import { startGitHttpServer, type GitHttpServer } from './git-http-server.js'
import { createRepository, type TestRepository } from './git-repos.js'

export interface GitFixture {
  server: GitHttpServer
  s: TestServer
  /** A repository on `on` (default: the fixture's server), removed at the end; see createRepository. */
  repository(name: string, options?: { on?: GitHttpServer; remoteUrl?: string }): Promise<TestRepository>
}

export async function startGitFixture(t: Test): Promise<GitFixture> {
  const gitRoot = tempDir('registry-git-')
  const server = await startGitHttpServer(gitRoot)
  const s = await startTestServer({ outboundHosts: OUTBOUND_LOOPBACK })
  const repos: TestRepository[] = []
  t.teardown(async () => {
    await s.close()
    await server.close()
    for (const repo of repos) repo.cleanup()
    rmSync(gitRoot, { recursive: true, force: true })
  })
  return {
    server, s,
    async repository(name, options = {}) {
      const repo = await createRepository(options.on ?? server, name, options.remoteUrl)
      repos.push(repo)
      return repo
    },
  }
}
