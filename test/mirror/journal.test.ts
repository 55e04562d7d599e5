import { spawnSync } from 'node:child_process'
import { renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { json, petstore, startTestServer, tempDir } from '../helpers.js'
import { repositoryPath } from '../../src/git/git-repository.js'
import { git, startMirrorServer } from './helpers.js'
import { ROOT, userEnv } from '../process/spawn.js'


/** `git log` subjects of an organization's bare repository, oldest first. */
async function subjects(storage: string, orgId: string): Promise<string[]> {
  const out = await git(['--git-dir', repositoryPath(storage, orgId), 'log', '--format=%s', 'main'])
  return out.trim().split('\n').reverse()
}

/** Creates an API with `count` versions and a schema with a document through the HTTP routes. */
async function writeHistory(s: { call: Awaited<ReturnType<typeof startTestServer>>['call'] }, count: number) {
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Petstore' } })).data
  for (let i = 0; i < count; i++) {
    const response = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore(`1.0.${i}`) } })
    if (response.statusCode !== 201) throw new Error(response.body)
  }
  await s.call({ method: 'POST', url: '/v1/schemas', payload: { name: 'Pet', document: { type: 'object' } } })
  return api
}

/**
 * A storage of its own (removed after the test) written by a registry whose mirror writer never starts:
 * the index journals `count` versions of an API and a schema, nothing reaches git. The server is open.
 */
async function offlineHistory(t: Test, count: number) {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const offline = await startTestServer({ storage })
  await writeHistory(offline, count)
  return { storage, offline, orgId: offline.orgId, journal: offline.registry.storage.read.mirror }
}

/** Starts the mirror server on `storage` and waits until the journal it found is applied. */
async function startAndApply(t: Test, storage: string) {
  const s = await startMirrorServer({ storage })
  t.teardown(() => s.close())
  await s.settle()
  t.equal((await s.registry.storage.read.mirror.pending(100)).length, 0, 'all applied')
  return s
}

t.test('entries journaled while no writer runs are applied at the next start (replay)', async (t) => {
  const { storage, offline, orgId, journal } = await offlineHistory(t, 3)
  t.equal((await journal.pending(100)).length, 6, 'create, three versions, schema create and version are pending')
  t.equal(await journal.head(orgId), undefined)
  await offline.close()

  const s = await startAndApply(t, storage)
  t.same(await subjects(storage, orgId), [
    'apis/petstore: created', 'apis/petstore: version 1 (upload)', 'apis/petstore: version 2 (upload)',
    'apis/petstore: version 3 (upload)', 'schemas/pet: created', 'schemas/pet: version 1 (upload)',
  ])
  const head = json(await s.call({ method: 'GET', url: '/v1/mirror' })).data.head
  t.equal(head, (await git(['--git-dir', repositoryPath(storage, orgId), 'rev-parse', 'main'])).trim(), 'GET /v1/mirror shows the head')
})

t.test('resources the journal never described (storage older than the mirror) are rebuilt from the index at start', async (t) => {
  const { storage, offline, orgId, journal } = await offlineHistory(t, 2)
  const pending = await journal.pending(100)
  // Another organization's entries count for it alone: its creates must not hide the missing one.
  const other = await offline.registry.organizations.create('other', 'Other')
  const otherKey = `Bearer ${other.secret}`
  const elsewhere = await offline.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Elsewhere' }, headers: { authorization: otherKey } })
  t.equal(elsewhere.statusCode, 201, elsewhere.body)
  // The API's create is not in the journal, as for an API stored before the mirror existed.
  const created = pending.find((entry) => entry.change === 'create' && entry.organization_id === orgId)!
  await offline.registry.storage.transaction((tx) => tx.mirror.discard([created.seq]))
  await offline.close()

  const s = await startAndApply(t, storage)
  t.same(await subjects(storage, orgId), [
    'apis/petstore: created', 'apis/petstore: version 1 (upload)', 'apis/petstore: version 2 (upload)',
    'schemas/pet: created', 'schemas/pet: version 1 (upload)',
  ], "rebuilt from the index: the API's creation is there")
})

t.test('rebuild gives the same history; a lost repository is rebuilt at start; a git error never fails a write', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  let s = await startMirrorServer({ storage })
  const api = await writeHistory(s, 4)
  await s.settle()
  const orgId = s.orgId
  const live = (await git(['--git-dir', repositoryPath(storage, orgId), 'rev-parse', 'main'])).trim()

  const organization = await s.registry.organizations.requireBySlug('acme')
  await s.registry.mirror!.rebuild([organization])
  t.equal(json(await s.call({ method: 'GET', url: '/v1/mirror' })).data.head, live, 'rebuild: the same commit ids')

  // A git error (the repository's object store is not a directory): the upload still succeeds.
  const objects = join(repositoryPath(storage, orgId), 'objects')
  renameSync(objects, `${objects}.away`)
  writeFileSync(objects, 'not a directory')
  const upload = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('5.0.0') } })
  t.equal(upload.statusCode, 201, 'the registry write succeeds')
  await s.settle()
  t.equal((await s.registry.storage.read.mirror.pending(100)).length, 1, 'the entry stays pending')
  rmSync(objects)
  renameSync(`${objects}.away`, objects)
  s.registry.mirror!.writer.nudge()
  await s.settle()
  t.equal((await s.registry.storage.read.mirror.pending(100)).length, 0, 'retried and applied once git works again')
  const withFifth = (await subjects(storage, orgId)).at(-1)
  t.equal(withFifth, 'apis/petstore: version 5 (upload)')
  const head = json(await s.call({ method: 'GET', url: '/v1/mirror' })).data.head
  await s.close()

  // The repository is lost (a backup without it, say): the next start rebuilds it from the index.
  rmSync(join(storage, 'git'), { recursive: true, force: true })
  s = await startMirrorServer({ storage })
  t.teardown(() => s.close())
  await s.settle()
  t.equal((await git(['--git-dir', repositoryPath(storage, orgId), 'rev-parse', 'main'])).trim(), head, 'rebuilt at start: the same head')
  await git(['--git-dir', repositoryPath(storage, orgId), 'fsck', '--strict', '--no-dangling'])
})

t.test('registry mirror rebuild (CLI) on a stopped storage gives the same history', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const s = await startMirrorServer({ storage })
  await writeHistory(s, 2)
  await s.settle()
  const head = json(await s.call({ method: 'GET', url: '/v1/mirror' })).data.head
  const orgId = s.orgId
  await s.close()
  rmSync(repositoryPath(storage, orgId), { recursive: true, force: true })

  const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', '--storage', storage, '--json', 'mirror', 'rebuild', '--org', 'acme'],
    { cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: userEnv() })
  t.equal(result.status, 0, result.stderr)
  t.same(JSON.parse(result.stdout), { queued: false, heads: { acme: head } })
  t.equal((await git(['--git-dir', repositoryPath(storage, orgId), 'rev-parse', 'main'])).trim(), head)

  // The push remote from the CLI: the token from the environment, never printed.
  const cli = (args: string[], env: Record<string, string> = {}) => spawnSync(process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', '--storage', storage, '--json', 'mirror', ...args],
    { cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: userEnv(env) })
  const set = cli(['set-remote', 'https://git.example.com/acme/registry.git', '--org', 'acme'], { REGISTRY_MIRROR_TOKEN: 'cli-secret-token' })
  t.equal(set.status, 0, set.stderr)
  t.notMatch(set.stdout + set.stderr, 'cli-secret-token')
  const shown = cli(['show', '--org', 'acme'])
  t.match(JSON.parse(shown.stdout), { url: 'https://git.example.com/acme/registry.git', token_set: true, head, last_pushed_commit: null })
  t.notMatch(shown.stdout, 'cli-secret-token')
  t.equal(cli(['set-remote', 'https://user:pw@example.com/x.git', '--org', 'acme']).status, 1, 'credentials in the URL are refused')
  t.equal(cli(['remove-remote', '--org', 'acme']).status, 0)
  t.match(JSON.parse(cli(['show', '--org', 'acme']).stdout), { url: null, token_set: false })

  // While a server is the writer, the CLI queues the rebuild and the server does it.
  const server = await startMirrorServer({ storage })
  t.teardown(() => server.close())
  await server.settle()
  const queued = cli(['rebuild'])
  t.equal(queued.status, 0, queued.stderr)
  t.match(JSON.parse(queued.stdout), { queued: true })
  const journal = server.registry.storage.read.mirror
  for (let i = 0; i < 100 && (await journal.pending(10)).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50))
  await server.settle()
  t.same(await journal.pending(10), [], 'the server applied the queued rebuild')
  t.equal(json(await server.call({ method: 'GET', url: '/v1/mirror' })).data.head, head, 'the same history')
})
