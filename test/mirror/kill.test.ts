import { rmSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { petstore, tempDir } from '../helpers.js'
import { api, startServer } from '../process/spawn.js'
import { git } from './helpers.js'

const KEY = 'sk_mirror-kill-test-0000000000000000000000'

t.test('kill -9 during a burst of uploads: after a restart the mirror has every acknowledged version', async (t) => {
  const storage = tempDir()
  const work = tempDir('mirror-clone-')
  t.teardown(() => {
    rmSync(storage, { recursive: true, force: true })
    rmSync(work, { recursive: true, force: true })
  })
  let server = await startServer(storage, { REGISTRY_BOOTSTRAP_KEY: KEY })
  const created = (await api(server.url, KEY, 'POST', '/v1/apis', { name: 'Petstore' })).json().data
  const acknowledged: string[] = []
  const uploads = Array.from({ length: 40 }, async (_, i) => {
    try {
      const response = await api(server.url, KEY, 'POST', `/v1/apis/${created.id}/spec`, { document: petstore(`1.0.${i}`) })
      if (response.status === 201) acknowledged.push(response.json().data.id)
    } catch {
      // cut off by the kill
    }
  })
  for (let i = 0; i < 200 && acknowledged.length < 5; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  await server.stop('SIGKILL')
  await Promise.all(uploads)

  server = await startServer(storage)
  t.teardown(() => server.stop())
  t.ok(acknowledged.length >= 5, `${acknowledged.length} uploads acknowledged before the kill`)
  const versions = (await api(server.url, KEY, 'GET', `/v1/apis/${created.id}/versions?limit=100`)).json()
  for (const id of acknowledged) t.ok(versions.data.some((v: { id: string }) => v.id === id), 'acknowledged version kept')

  // The mirror catches up after the restart: one commit per version, in order, fsck clean.
  const url = `http://x:${KEY}@${server.url.slice('http://'.length)}/git/default.git`
  let log: string[] = []
  for (let attempt = 0; attempt < 60; attempt++) {
    rmSync(join(work, 'c'), { recursive: true, force: true })
    const head = (await api(server.url, KEY, 'GET', '/v1/mirror')).json().data.head
    if (head) {
      await git(['clone', '--quiet', url, join(work, 'c')])
      log = (await git(['log', '--format=%(trailers:key=Version-Id,valueonly,separator=)'], { cwd: join(work, 'c') })).trim().split('\n').filter(Boolean)
      if (log.length === versions.total) break
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  t.equal(log.length, versions.total, 'every version in the index has its commit')
  t.same(new Set(log), new Set(versions.data.map((v: { id: string }) => v.id)))
  await git(['fsck', '--strict', '--no-dangling'], { cwd: join(work, 'c') })
})
