import { spawnSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { json, startTestServer } from '../helpers.js'
import { tempDir } from '../temp.js'
import { createApi, createSdk, waitForBuild } from './support.js'

t.test('an archive-only build needs no output repository and delivers nothing', async (t) => {
  const s = await startTestServer()
  t.teardown(() => s.close())
  const sdk = await createSdk(s, [await createApi(s)])
  const url = `/v1/sdks/${sdk.id}/builds`

  const delivered = await s.call({ method: 'POST', url })
  t.equal(delivered.statusCode, 422, 'a delivered build still needs an output repository')
  t.match(json(delivered).detail, /archive_only/, 'and the answer says how to build without one')

  const queued = await s.call({ method: 'POST', url, payload: { targets: ['php'], archive_only: true } })
  t.equal(queued.statusCode, 202, queued.body)
  const [build] = json(queued).data
  t.equal(json(queued).data.length, 1, 'only the target asked for')
  t.match(build, { target: 'php', status: 'queued', repository: null })

  const done = await waitForBuild(s, build.id)
  t.equal(done.status, 'succeeded', done.error ?? '')
  t.match(done.output, { branch: null, commit: null, pull_request: null, reason: 'archive_only' })
  t.ok(done.output.files.includes('composer.json'), 'the files generated are listed')
  const log = await s.call({ method: 'GET', url: `/v1/builds/${build.id}/logs` })
  t.match(log.body, /archive only, nothing delivered/)

  const artifact = await s.call({ method: 'GET', url: `/v1/builds/${build.id}/artifact` })
  t.equal(artifact.statusCode, 200)
  const dir = tempDir()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'sdk.tar.gz'), artifact.rawPayload)
  const listed = spawnSync('tar', ['-tzf', join(dir, 'sdk.tar.gz')], { encoding: 'utf8' })
  t.equal(listed.status, 0, listed.stderr)
  t.same(listed.stdout.trim().split('\n'), done.output.files, 'the artifact holds exactly the files listed')

  const all = await s.call({ method: 'POST', url, payload: { archive_only: true } })
  t.same(json(all).data.map((b: { target: string }) => b.target).sort(), ['php', 'typescript'], 'default: every target of the SDK')
  for (const b of json(all).data) await waitForBuild(s, b.id)
})

t.test('a build request is checked', async (t) => {
  const s = await startTestServer()
  t.teardown(() => s.close())
  const sdk = await createSdk(s, [await createApi(s)], ['typescript'])
  const url = `/v1/sdks/${sdk.id}/builds`
  const other = await s.call({ method: 'POST', url, payload: { targets: ['php'], archive_only: true } })
  t.equal(other.statusCode, 400)
  t.match(json(other).detail, /does not generate php/)
  t.equal((await s.call({ method: 'POST', url, payload: { archive_only: 'yes' } })).statusCode, 400)
  t.equal((await s.call({ method: 'POST', url, payload: { deliver: false } })).statusCode, 400, 'unknown fields')
  t.equal((await s.call({ method: 'POST', url, payload: { targets: ['cobol'] } })).statusCode, 400)
  t.equal(json(await s.call({ method: 'GET', url: '/v1/builds' })).total, 0, 'nothing queued')
})
