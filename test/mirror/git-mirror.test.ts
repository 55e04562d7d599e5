import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { stringify } from 'yaml'
import { json, petstore, tempDir } from '../helpers.js'
import { git, gitStatus, startMirrorServer } from './helpers.js'

t.test('every change is a commit: clone, fsck, the log of a document, each version checked out', async (t) => {
  const s = await startMirrorServer()
  const work = tempDir('mirror-clone-')
  t.teardown(async () => { await s.close(); rmSync(work, { recursive: true, force: true }) })

  const api = await s.createApi('Petstore')
  const versions = [
    await s.upload(api.id, petstore('1.0.0')),
    await s.upload(api.id, `# a comment kept as uploaded\n${stringify(petstore('1.1.0'))}`),
    await s.upload(api.id, petstore('2.0.0')),
  ]
  const restored = json(await s.call({ method: 'POST', url: `/v1/apis/${api.id}/versions/${versions[0].id}/restore` })).data
  versions.push(restored)
  const schema = json(await s.call({ method: 'POST', url: '/v1/schemas', payload: { name: 'Pet', document: { type: 'object' } } })).data
  await s.call({ method: 'PATCH', url: `/v1/apis/${api.id}`, payload: { description: 'All the pets', slug: 'pets' } })
  await s.call({ method: 'DELETE', url: `/v1/schemas/${schema.id}` })
  await s.settle()

  const clone = join(work, 'basic')
  await git(['clone', '--quiet', `http://anyone:${s.key}@${s.host}/git/acme.git`, clone])
  await git(['fsck', '--strict', '--no-dangling'], { cwd: clone })

  const subjects = (await git(['log', '--format=%s'], { cwd: clone })).trim().split('\n').reverse()
  t.same(subjects, [
    'apis/petstore: created',
    'apis/petstore: version 1 (upload)',
    'apis/petstore: version 2 (upload)',
    'apis/petstore: version 3 (upload)',
    'apis/petstore: version 4 (restore)',
    'schemas/pet: created',
    'schemas/pet: version 1 (upload)',
    'apis/pets: renamed from apis/petstore',
    'schemas/pet: deleted',
  ], 'one commit per change, in order')

  // The log of the document (following the rename) lists every version, newest first.
  const log = (await git(['log', '--follow', '--format=%H %(trailers:key=Version-Id,valueonly,separator=)', '--', 'apis/pets/openapi.json'], { cwd: clone }))
    .trim().split('\n').map((line) => line.split(' '))
  const yamlLog = (await git(['log', '--format=%H %(trailers:key=Version-Id,valueonly,separator=)', '--', 'apis/petstore/openapi.yaml'], { cwd: clone }))
    .trim().split('\n').map((line) => line.split(' '))
  const byVersion = new Map([...log, ...yamlLog].map(([commit, versionId]) => [versionId, commit]))
  for (const version of versions) t.ok(byVersion.has(version.id), `version ${version.number} has a commit in the document's log`)

  // Checking out the commit of version N gives exactly version N's stored bytes.
  for (const version of versions) {
    const record = (await s.registry.storage.read.versions.byId(version.id))!
    const stored = await s.registry.blobs.get({ checksum: record.checksum, digest: record.digest, format: record.format })
    await git(['checkout', '--quiet', byVersion.get(version.id)!], { cwd: clone })
    const path = join(clone, 'apis', 'petstore', `openapi.${record.format}`)
    t.ok(readFileSync(path).equals(stored), `version ${version.number}: the checked-out file is the stored bytes (${record.format})`)
  }
  const message = await git(['log', '-1', '--format=%B', byVersion.get(versions[1].id)!], { cwd: clone })
  t.match(message, `Checksum: ${versions[1].checksum}`)
  t.match(message, `Version-Id: ${versions[1].id}`)
  const date = (await git(['log', '-1', '--format=%cI', byVersion.get(versions[1].id)!], { cwd: clone })).trim()
  t.equal(Date.parse(date), Math.floor(Date.parse(versions[1].created_at) / 1000) * 1000, 'the commit date is the version time')

  await git(['checkout', '--quiet', 'main'], { cwd: clone })
  const metadata = JSON.parse(readFileSync(join(clone, 'apis', 'pets', 'api.json'), 'utf8'))
  t.match(metadata, { id: api.id, slug: 'pets', description: 'All the pets', visibility: 'private' })
  t.notOk(readFileSync(join(clone, 'apis', 'pets', 'api.json'), 'utf8').includes('sk_'), 'no secrets in metadata')

  // A Bearer header (http.extraHeader) works as well as basic credentials.
  const bearer = join(work, 'bearer')
  await git(['-c', `http.extraHeader=Authorization: Bearer ${s.key}`, 'clone', '--quiet', `http://${s.host}/git/acme.git`, bearer])
  t.equal((await git(['rev-parse', 'HEAD'], { cwd: bearer })).trim(), (await git(['rev-parse', 'HEAD'], { cwd: clone })).trim())
})

t.test('no key, a foreign key or another organization: 401 that says nothing more', async (t) => {
  const s = await startMirrorServer()
  const work = tempDir('mirror-clone-')
  t.teardown(async () => { await s.close(); rmSync(work, { recursive: true, force: true }) })
  const other = await s.registry.organizations.create('globex')
  await s.createApi('Petstore')
  await s.settle()

  const refs = (key: string | null, org: string) => s.call({ method: 'GET', url: `/git/${org}.git/info/refs?service=git-upload-pack`, key })
  const missing = await refs(null, 'acme')
  t.equal(missing.statusCode, 401)
  t.match(missing.headers['www-authenticate'], /^Basic /, 'the git client is asked for credentials')
  const foreign = await refs(other.secret, 'acme')
  const unknownOrg = await refs(s.key, 'nobody')
  const badKey = await refs('sk_not-a-key-of-anyone-0000000000000000', 'acme')
  for (const response of [foreign, unknownOrg, badKey]) {
    t.equal(response.statusCode, 401)
    t.equal(response.body, missing.body, 'the same answer whether the organization exists or not')
  }
  t.equal((await refs(s.key, 'acme')).statusCode, 200)

  const none = await gitStatus(['clone', '--quiet', `http://${s.host}/git/acme.git`, join(work, 'none')])
  t.not(none.code, 0, 'git clone without a key fails')
  t.match(none.stderr, /Authentication failed|could not read Username/)
  const wrong = await gitStatus(['clone', '--quiet', `http://x:${other.secret}@${s.host}/git/acme.git`, join(work, 'wrong')])
  t.not(wrong.code, 0, 'git clone with another organization\'s key fails')
  t.equal((await s.call({ method: 'POST', url: '/git/acme.git/git-receive-pack', key: null })).statusCode, 401)
})

t.test('pull after new versions fetches only the new objects', async (t) => {
  const s = await startMirrorServer()
  const work = tempDir('mirror-clone-')
  t.teardown(async () => { await s.close(); rmSync(work, { recursive: true, force: true }) })
  const api = await s.createApi('Petstore')
  for (let i = 0; i < 30; i++) await s.upload(api.id, petstore(`1.0.${i}`))
  await s.settle()
  const clone = join(work, 'c')
  const remote = `http://x:${s.key}@${s.host}/git/acme.git`
  await git(['clone', '--quiet', remote, clone])
  const cloneRequests = s.requests.filter((r) => r.url.startsWith('/git/')).length
  t.ok(cloneRequests <= 4, `a clone of 31 commits takes a few requests, not one per object (${cloneRequests})`)

  await s.upload(api.id, petstore('9.9.9'))
  await s.settle()
  const before = Number(/count: (\d+)/.exec(await git(['count-objects', '-v'], { cwd: clone }))![1])
  // Received objects are kept loose (not as a pack), so they can be counted.
  await git(['-c', 'fetch.unpackLimit=100000', 'pull', '--quiet', '--ff-only'], { cwd: clone })
  const after = Number(/count: (\d+)/.exec(await git(['count-objects', '-v'], { cwd: clone }))![1])
  t.equal(after - before, 5, 'the new commit, three trees and one blob: nothing else')
  t.equal(JSON.parse(readFileSync(join(clone, 'apis', 'petstore', 'openapi.json'), 'utf8')).info.version, '9.9.9')
  await git(['fsck', '--strict', '--no-dangling'], { cwd: clone })
})
