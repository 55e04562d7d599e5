/**
 * The LMDB adapter's sdks section reads and writes the databases and keys the old SDK store used
 * (`SDK_DATABASES`, `sdkKeys`): a storage written before the move is read as it is, and what the adapter
 * writes is where that store looked for it. And the output repositories' tokens through the port's secrets section.
 */
import { rmSync } from 'node:fs'
import t from 'tap'
import { openEnvironment } from '../../../src/storage/lmdb/databases.js'
import { LmdbStorage } from '../../../src/storage/lmdb/storage.js'
import { sdkKeys } from '../../../src/storage/lmdb/layout.js'
import type { SecretRef } from '../../../src/storage/secret-slots.js'
import { tempDir } from '../../temp.js'
import { organization, resource } from '../contract/contract.js'
import { sdk } from '../contract/sdks.js'

t.test("SDKs, repositories, builds, the queue, logs and artifacts written as the old store wrote them are the adapter's, and back", async (t) => {
  const directory = tempDir()
  t.teardown(() => rmSync(directory, { recursive: true, force: true }))
  const org = organization('acme')
  const api = resource(org.id, 'Shop')
  const setup = new LmdbStorage(directory)
  await setup.transaction(async (tx) => {
    await tx.organizations.put(org)
    await tx.resources.create(api)
  })
  await setup.close()

  // What SdkStore.putSdk, putRepository, addBuild, putBuild, putLog and putArtifact wrote.
  const old = { ...sdk(org.id, 'pets', [{ api_id: api.id, version_id: null }]), last_build_number: 2 }
  const at = old.created_at
  const build = (number: number, status: 'queued' | 'succeeded') => ({
    id: `${old.id.slice(0, 25)}${number}`, organization_id: org.id, sdk_id: old.id, number, target: 'php' as const, status, attempts: 0,
    inputs: { apis: [], config_checksum: 'sha256:0', generator: { name: 'g', version: '1' } }, sdk: { name: old.name, slug: old.slug },
    config: {}, repository: null, output: null, error: null, created_at: at, updated_at: at, started_at: null, finished_at: null,
  })
  const [done, queued] = [build(1, 'succeeded'), build(2, 'queued')]
  const repository = { sdk_id: old.id, target: 'php', provider: 'git', url: 'https://git.example.com/p.git', base_branch: 'main', api_url: null, token: null, created_at: at, updated_at: at }
  const raw = openEnvironment(directory)
  await raw.root.transaction(() => {
    const db = raw.sdks
    db.sdks.put(old.id, old)
    db.sdkOrder.put(sdkKeys.sdkOrder(org.id, old.id), null)
    db.sdkSlugs.put(sdkKeys.sdkSlug(org.id, old.slug), old.id)
    db.sdkApis.put(sdkKeys.sdkApi(api.id, old.id), null)
    db.sdkRepositories.put(sdkKeys.sdkRepository(old.id, 'php'), repository)
    for (const b of [done, queued]) {
      db.builds.put(b.id, b)
      db.buildOrder.put(sdkKeys.buildOrder(org.id, b.id), null)
      db.sdkBuilds.put(sdkKeys.sdkBuild(old.id, b.id), null)
    }
    db.buildQueue.put(queued.id, null)
    db.buildLogs.put(done.id, 'log of 1\n')
    db.buildArtifacts.put(done.id, Buffer.from([0, 1, 2, 255]))
  })
  await raw.root.close()

  const storage = new LmdbStorage(directory)
  const read = storage.read.sdks
  t.same(await read.bySlug(org.id, 'pets'), old)
  t.same(await read.list(org.id, { offset: 0, limit: 10 }), { items: [old], total: 1 })
  t.same(await read.sdksUsingApi(api.id), [old.id])
  t.same(await read.repositories(old.id), [repository])
  t.same((await read.builds({ sdkId: old.id }, { offset: 0, limit: 10 })).items.map((b) => b.number), [2, 1])
  t.same((await read.queue()).map((b) => b.id), [queued.id])
  t.equal(await read.log(done.id), 'log of 1\n')
  t.same([...(await read.artifact(done.id))!], [0, 1, 2, 255])

  const third = { ...build(3, 'queued'), id: `${old.id.slice(0, 25)}3` }
  await storage.transaction(async (tx) => {
    await tx.sdks.addBuild(third)
    await tx.sdks.putBuild({ ...queued, status: 'succeeded' })
    await tx.sdks.update({ ...old, slug: 'animals', last_build_number: 3 })
  })
  await storage.close()

  const after = openEnvironment(directory)
  t.teardown(() => after.root.close())
  const db = after.sdks
  t.equal(db.sdks.get(old.id).last_build_number, 3)
  t.equal(db.sdkSlugs.get(sdkKeys.sdkSlug(org.id, 'animals')), old.id)
  t.equal(db.sdkSlugs.get(sdkKeys.sdkSlug(org.id, 'pets')), undefined)
  t.same([...db.buildQueue.getKeys()], [third.id], 'the queue as the old store kept it')
  t.equal(db.sdkBuilds.get(sdkKeys.sdkBuild(old.id, third.id)), null)
  t.equal(db.buildOrder.get(sdkKeys.buildOrder(org.id, third.id)), null)
  t.same([...db.sdkApis.getKeys({ ...sdkKeys.sdkApiRange(api.id) })].map((key) => (key as string[])[1]), [old.id], 'the API → SDK index as the old store kept it')
})

t.test("the output repositories' tokens as the secrets section reads them: listed with their organization, replaced in place only while still the one expected", async (t) => {
  const directory = tempDir()
  t.teardown(() => rmSync(directory, { recursive: true, force: true }))
  const storage = new LmdbStorage(directory)
  const org = organization('acme')
  const pets = sdk(org.id, 'pets')
  const at = pets.created_at
  const repository = (target: 'php' | 'typescript', token: string | null) => ({
    sdk_id: pets.id, target, provider: 'github' as const, url: 'https://git.example.com/p.git', base_branch: 'main', api_url: null, token, created_at: at, updated_at: at,
  })
  await storage.transaction(async (tx) => {
    await tx.organizations.put(org)
    await tx.sdks.create(pets)
    await tx.sdks.putRepository(repository('php', 'sealed-1'))
    await tx.sdks.putRepository(repository('typescript', null))
  })
  const replace = (ref: SecretRef, expected: string, next: string) => storage.transaction((tx) => tx.secrets.replace(ref, expected, next))
  const ref = { holder: 'sdk-output-repository' as const, sdk_id: pets.id, target: 'php', field: 'token' as const }
  t.same(await storage.read.secrets.slots(), [{ ref, organization_id: org.id, value: 'sealed-1' }], 'tokens only, with their organization')
  t.equal(await replace(ref, 'sealed-0', 'sealed-2'), false, 'not the value expected: left alone')
  t.equal(await replace({ ...ref, target: 'typescript' }, 'sealed-1', 'sealed-2'), false, 'no token there')
  t.equal(await replace({ holder: 'webhook-endpoint', endpoint_id: 'x', field: 'secret' }, 'sealed-1', 'sealed-2'), false, 'no such record')
  t.equal(await replace(ref, 'sealed-1', 'sealed-2'), true)
  await storage.close()
  const environment = openEnvironment(directory)
  t.teardown(() => environment.root.close())
  t.equal(environment.sdks.sdkRepositories.get(sdkKeys.sdkRepository(pets.id, 'php'))?.token, 'sealed-2', 'where the old store kept it')
})
