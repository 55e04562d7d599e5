/**
 * The sync workers' bounds: a download over the byte bound and a fetch past its deadline fail cleanly,
 * as 'unreachable' to the key holder, with the reason for the operator's log.
 */
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { stringify } from 'yaml'
import { registryErrorAsync } from '../documents/helpers.js'
import { DEFAULT_SYNC_LIMITS, SnapshotWorkers } from '../../src/sync/pool.js'
import { OUTBOUND_LOOPBACK, petstore, tempDir, workerExecArgv } from '../helpers.js'
import { startGitHttpServer } from '../support/git-http-server.js'
import { createRepository } from '../support/git-repos.js'

t.test('a repository larger than the byte bound is refused', async (t) => {
  const root = tempDir('registry-git-')
  const server = await startGitHttpServer(root)
  const repo = await createRepository(server, 'big')
  t.teardown(async () => {
    await server.close()
    repo.cleanup()
    rmSync(root, { recursive: true, force: true })
  })
  await repo.commit({ 'openapi.yaml': stringify(petstore()), 'noise.bin': randomBytes(200_000).toString('base64') })
  const small = new SnapshotWorkers({ ...DEFAULT_SYNC_LIMITS, maxBytes: 50_000 }, { threads: 1, outboundHosts: OUTBOUND_LOOPBACK, execArgv: workerExecArgv() })
  t.teardown(() => small.close())
  const request = { provider: 'github' as const, url: repo.url, branch: 'main', path: 'openapi.yaml', token: null }
  const error = await registryErrorAsync(small.fetch(request))
  t.match(error, { code: 'repository_unavailable', message: /could not be fetched: unreachable/, reason: /larger than 50000 bytes/ })

  const enough = new SnapshotWorkers(DEFAULT_SYNC_LIMITS, { threads: 1, outboundHosts: OUTBOUND_LOOPBACK, execArgv: workerExecArgv() })
  t.teardown(() => enough.close())
  const document = await enough.fetch(request)
  t.equal(document.text, stringify(petstore()))
  t.match(document.commit, /^[0-9a-f]{40}$/)
})

t.test('a repository that never answers fails at the deadline', async (t) => {
  const silent = createServer(() => { /* never answers */ })
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    silent.closeAllConnections()
    silent.close(() => resolve())
  }))
  const port = (silent.address() as AddressInfo).port
  const workers = new SnapshotWorkers({ ...DEFAULT_SYNC_LIMITS, timeoutMs: 500 }, { threads: 1, outboundHosts: OUTBOUND_LOOPBACK, execArgv: workerExecArgv() })
  t.teardown(() => workers.close())
  const error = await registryErrorAsync(workers.fetch({ provider: 'gitlab', url: `http://127.0.0.1:${port}/x.git`, branch: 'main', path: 'a.yaml', token: 't' }))
  t.match(error, { code: 'repository_unavailable', message: /could not be fetched: unreachable/, reason: /took longer than 500 ms/ })
})
