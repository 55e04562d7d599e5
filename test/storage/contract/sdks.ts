/** The port's sdks section, run against every adapter by contract.ts. */
import type { Test } from 'tap'
import { newId, now } from '../../../src/domain/resources/ids.js'
import { RegistryError } from '../../../src/errors.js'
import type { Storage } from '../../../src/storage/port.js'
import type {
  BuildRecord, BuildStatus, OrganizationRecord, OutputRepositoryRecord, ResourceRecord, SdkRecord, SdkTarget, VersionRecord,
} from '../../../src/storage/records.js'
import { organization, resource, version, type OpenStorage } from './contract.js'

const conflict = { code: 'conflict' }
const notFound = { code: 'not_found' }
const FIRST_PAGE = { offset: 0, limit: 100 }

export function sdk(organizationId: string, slug: string, apis: SdkRecord['apis'] = []): SdkRecord {
  const at = now()
  return {
    id: newId(), organization_id: organizationId, name: slug.toUpperCase(), slug, targets: ['typescript', 'php'], apis,
    config: { package_name: slug }, last_build_number: 0, created_at: at, updated_at: at,
  }
}

function repository(sdkId: string, target: SdkTarget, url = `https://git.example.com/${target}.git`): OutputRepositoryRecord {
  const at = now()
  return {
    sdk_id: sdkId, target, provider: 'github', url, base_branch: 'main', api_url: null,
    token: 'v1.kid.sealed-token', created_at: at, updated_at: at,
  }
}

function build(of: SdkRecord, number: number, status: BuildStatus = 'queued', target: SdkTarget = 'typescript'): BuildRecord {
  const at = now()
  return {
    id: newId(), organization_id: of.organization_id, sdk_id: of.id, number, target, status, attempts: 0,
    inputs: { apis: [], config_checksum: `sha256:${'c'.repeat(64)}`, generator: { name: 'gen', version: '1' } },
    sdk: { name: of.name, slug: of.slug }, config: of.config,
    repository: { provider: 'github', url: 'https://git.example.com/x.git', base_branch: 'main' },
    output: null, error: null, created_at: at, updated_at: at, started_at: null, finished_at: null,
  }
}

interface World {
  storage: Storage
  acme: OrganizationRecord
  beta: OrganizationRecord
  /** acme's APIs, with a version each; beta's API; acme's schema. */
  shop: ResourceRecord
  pets: ResourceRecord
  betaApi: ResourceRecord
  schema: ResourceRecord
  shopV1: VersionRecord
  petsV1: VersionRecord
}

async function world(open: OpenStorage, t: Test): Promise<World> {
  const storage = await open(t)
  const acme = organization('acme')
  const beta = organization('beta')
  const shop = resource(acme.id, 'shop')
  const pets = resource(acme.id, 'pets')
  const betaApi = resource(beta.id, 'shop')
  const schema = resource(acme.id, 'money', { kind: 'schema' })
  const shopV1 = version(shop, 1)
  const petsV1 = version(pets, 1)
  await storage.transaction(async (tx) => {
    await tx.organizations.put(acme)
    await tx.organizations.put(beta)
    for (const record of [shop, pets, betaApi, schema]) await tx.resources.create(record)
    await tx.versions.append(shopV1)
    await tx.versions.append(petsV1)
  })
  return { storage, acme, beta, shop, pets, betaApi, schema, shopV1, petsV1 }
}

/** Creates SDKs, one transaction each (ids increase: ULIDs). */
async function created(storage: Storage, ...sdks: SdkRecord[]): Promise<SdkRecord[]> {
  for (const record of sdks) await storage.transaction((tx) => tx.sdks.create(record))
  return sdks
}

const T0 = '2030-01-01T00:00:00.000Z'
const LEASE_END = '2030-01-01T00:01:00.000Z'

/**
 * What a runner's claim does: the next claimable build at `at` marked running under `holder`'s lease
 * until a minute later, one more attempt; answers its id (undefined when none).
 */
function claimAt(storage: Storage, holder: string, at: string): Promise<string | undefined> {
  return storage.transaction(async (tx) => {
    const next = await tx.sdks.nextQueued(at)
    if (!next) return undefined
    const until = new Date(Date.parse(at) + 60_000).toISOString()
    await tx.sdks.putBuild({ ...next, status: 'running', attempts: next.attempts + 1, lease: { holder, until } })
    return next.id
  })
}

/** Adds builds as their SDK's next, answering them. */
async function added(storage: Storage, of: SdkRecord, statuses: BuildStatus[]): Promise<BuildRecord[]> {
  return storage.transaction(async (tx) => {
    let current = (await tx.sdks.get(of.id))!
    const builds: BuildRecord[] = []
    for (const status of statuses) {
      const next = build(current, current.last_build_number + 1, status)
      current = await tx.sdks.addBuild(next)
      builds.push(next)
    }
    return builds
  })
}

export function sdkContract(t: Test, open: OpenStorage): void {
  t.test('sdks: by id and slug, newest first with totals, one slug per organization, only of an organization and its APIs', async (t) => {
    const { storage, acme, beta, shop, pets, betaApi, schema, shopV1, petsV1 } = await world(open, t)
    const [first, second, third] = await created(storage,
      sdk(acme.id, 'one', [{ api_id: shop.id, version_id: null }]),
      sdk(acme.id, 'two', [{ api_id: shop.id, version_id: shopV1.id }, { api_id: pets.id, version_id: null }]),
      sdk(acme.id, 'three'))
    const [theirs] = await created(storage, sdk(beta.id, 'one', [{ api_id: betaApi.id, version_id: null }]))

    const read = storage.read.sdks
    t.same(await read.get(second.id), second, 'kept as written')
    t.same(await read.bySlug(acme.id, 'one'), first)
    t.same(await read.bySlug(beta.id, 'one'), theirs, 'a slug is per organization')
    t.equal(await read.bySlug(acme.id, 'four'), undefined)
    t.equal(await read.get(newId()), undefined)

    t.same(await read.list(acme.id, FIRST_PAGE), { items: [third, second, first], total: 3 }, 'newest first')
    t.same(await read.list(acme.id, { offset: 1, limit: 1 }), { items: [second], total: 3 })
    t.same(await read.list(acme.id, { offset: 5, limit: 10 }), { items: [], total: 3 }, 'past the end: only the total')
    t.same(await read.list(beta.id, FIRST_PAGE), { items: [theirs], total: 1 })
    t.same(await read.list(newId(), FIRST_PAGE), { items: [], total: 0 })

    t.same(await read.sdksUsingApi(shop.id), [first.id, second.id], 'the SDKs attaching an API, in id order')
    t.same(await read.sdksUsingApi(pets.id), [second.id])
    t.same(await read.sdksUsingApi(betaApi.id), [theirs.id])
    t.same(await read.sdksUsingApi(schema.id), [])

    const create = (record: SdkRecord) => storage.transaction((tx) => tx.sdks.create(record))
    await t.rejects(create(sdk(acme.id, 'one')), conflict, 'a taken slug')
    await t.rejects(create({ ...sdk(acme.id, 'other'), id: first.id }), conflict, 'an id again')
    await t.rejects(create(sdk(newId(), 'x')), notFound, 'no such organization')
    await t.rejects(create(sdk(acme.id, 'x', [{ api_id: newId(), version_id: null }])), notFound, 'no such API')
    await t.rejects(create(sdk(acme.id, 'x', [{ api_id: betaApi.id, version_id: null }])), notFound, "another organization's API")
    await t.rejects(create(sdk(acme.id, 'x', [{ api_id: schema.id, version_id: null }])), notFound, 'a schema is not an API')
    await t.rejects(create(sdk(acme.id, 'x', [{ api_id: shop.id, version_id: petsV1.id }])), notFound, "another API's version")
    await t.rejects(create(sdk(acme.id, 'x', [{ api_id: shop.id, version_id: newId() }])), notFound, 'no such version')
    t.equal((await read.list(acme.id, FIRST_PAGE)).total, 3, 'nothing refused was written')
    t.equal(await read.bySlug(acme.id, 'x'), undefined)
  })

  t.test('sdks: an update moves the slug and the attached APIs; a removal takes repositories, builds, logs and artifacts with it', async (t) => {
    const { storage, acme, shop, pets, betaApi } = await world(open, t)
    const [one, two] = await created(storage, sdk(acme.id, 'one', [{ api_id: shop.id, version_id: null }]), sdk(acme.id, 'two'))
    const update = (record: SdkRecord) => storage.transaction((tx) => tx.sdks.update(record))

    const moved: SdkRecord = { ...one, slug: 'uno', name: 'Uno', apis: [{ api_id: pets.id, version_id: null }], targets: ['php'], updated_at: now() }
    await update(moved)
    t.same(await storage.read.sdks.get(one.id), moved)
    t.equal(await storage.read.sdks.bySlug(acme.id, 'one'), undefined, 'the old slug is free')
    t.same(await storage.read.sdks.bySlug(acme.id, 'uno'), moved)
    t.same(await storage.read.sdks.sdksUsingApi(shop.id), [], 'detached')
    t.same(await storage.read.sdks.sdksUsingApi(pets.id), [one.id], 'attached')
    t.same(await storage.read.sdks.list(acme.id, FIRST_PAGE), { items: [two, moved], total: 2 }, 'its place in the listing kept')
    await created(storage, sdk(acme.id, 'one'))

    await t.rejects(update({ ...moved, slug: 'two' }), conflict, 'a taken slug')
    await t.rejects(update(sdk(acme.id, 'ghost')), notFound, 'no such SDK')
    await t.rejects(update({ ...moved, apis: [{ api_id: betaApi.id, version_id: null }] }), notFound, "another organization's API")
    await t.rejects(update({ ...moved, last_build_number: 7 }), /last_build_number/, 'numbers move only with builds')
    t.same(await storage.read.sdks.get(one.id), moved, 'nothing refused was written')

    await storage.transaction(async (tx) => {
      await tx.sdks.putRepository(repository(one.id, 'php'))
      await tx.sdks.putRepository(repository(two.id, 'php'))
    })
    const builds = await added(storage, moved, ['queued', 'running', 'succeeded'])
    const kept = await added(storage, two, ['queued'])
    await storage.transaction(async (tx) => {
      await tx.sdks.putLog(builds[2].id, 'done\n')
      await tx.sdks.putArtifact(builds[2].id, Buffer.from([1, 2, 3]))
    })

    const removed = await storage.transaction((tx) => tx.sdks.remove(one.id))
    t.same(removed, { ...moved, last_build_number: 3 }, 'answers what it removed')
    const read = storage.read.sdks
    t.equal(await read.get(one.id), undefined)
    t.equal(await read.bySlug(acme.id, 'uno'), undefined, 'its slug is free')
    t.same(await read.sdksUsingApi(pets.id), [], 'its attachments are gone')
    t.same(await read.repositories(one.id), [])
    for (const gone of builds) t.equal(await read.build(gone.id), undefined)
    t.equal(await read.log(builds[2].id), undefined)
    t.equal(await read.artifact(builds[2].id), undefined)
    t.same((await read.builds({ sdkId: one.id }, FIRST_PAGE)).total, 0)
    t.same(await read.builds({ organizationId: acme.id }, FIRST_PAGE), { items: kept, total: 1 }, "the other SDK's builds stay")
    t.same((await read.queue()).map((b) => b.id), [kept[0].id], 'its builds left the queue')
    t.same((await read.repositories(two.id)).map((r) => r.sdk_id), [two.id])
    t.equal((await read.list(acme.id, FIRST_PAGE)).total, 2)
    t.equal(await storage.transaction((tx) => tx.sdks.remove(one.id)), undefined, 'removing it again: nothing')
  })

  t.test("an API's deletion decides on sdksUsingApi in its own transaction; once detached, the API is removed", async (t) => {
    const { storage, acme, shop, pets, shopV1 } = await world(open, t)
    const [one] = await created(storage, sdk(acme.id, 'one', [{ api_id: shop.id, version_id: shopV1.id }, { api_id: pets.id, version_id: null }]))
    const remove = (apiId: string) => storage.transaction(async (tx) => {
      const users = await tx.sdks.sdksUsingApi(apiId)
      if (users.length > 0) throw new RegistryError('conflict', `the API is attached to ${users.length} SDK`)
      return tx.resources.remove(apiId)
    })
    await t.rejects(remove(shop.id), conflict, 'refused while attached')
    t.ok(await storage.read.resources.get(shop.id))
    await storage.transaction(async (tx) => tx.sdks.update({ ...(await tx.sdks.get(one.id))!, apis: [{ api_id: pets.id, version_id: null }] }))
    t.equal((await remove(shop.id))?.id, shop.id, 'detached (its pinned version with it): removed')
    t.equal(await storage.read.resources.get(shop.id), undefined)
    t.same((await storage.read.sdks.get(one.id))?.apis, [{ api_id: pets.id, version_id: null }], 'the SDK stays')
  })

  t.test('output repositories: one per SDK and target, listed by target, replaced in place, only of an SDK', async (t) => {
    const { storage, acme } = await world(open, t)
    const [one, two] = await created(storage, sdk(acme.id, 'one'), sdk(acme.id, 'two'))
    const typescript = repository(one.id, 'typescript')
    const php = repository(one.id, 'php')
    await storage.transaction(async (tx) => {
      await tx.sdks.putRepository(typescript)
      await tx.sdks.putRepository(php)
      await tx.sdks.putRepository(repository(two.id, 'php'))
    })
    const read = storage.read.sdks
    t.same(await read.repository(one.id, 'typescript'), typescript)
    t.same(await read.repositories(one.id), [php, typescript], 'by target')
    const replaced: OutputRepositoryRecord = { ...typescript, provider: 'git', url: 'https://git.example.com/other.git', token: null, updated_at: now() }
    await storage.transaction((tx) => tx.sdks.putRepository(replaced))
    t.same(await read.repository(one.id, 'typescript'), replaced)
    t.equal((await read.repositories(one.id)).length, 2)

    t.equal(await storage.transaction((tx) => tx.sdks.removeRepository(one.id, 'php')), true)
    t.equal(await storage.transaction((tx) => tx.sdks.removeRepository(one.id, 'php')), false, 'not there any more')
    t.equal(await read.repository(one.id, 'php'), undefined)
    t.same(await read.repositories(one.id), [replaced])
    t.equal((await read.repositories(two.id)).length, 1, "another SDK's repository stays")
    await t.rejects(storage.transaction((tx) => tx.sdks.putRepository(repository(newId(), 'php'))), notFound, 'no such SDK')
  })

  t.test('builds: numbered 1, 2, 3… per SDK with it, newest first per organization and per SDK', async (t) => {
    const { storage, acme, beta, betaApi } = await world(open, t)
    const [one, two] = await created(storage, sdk(acme.id, 'one'), sdk(acme.id, 'two'))
    const [theirs] = await created(storage, sdk(beta.id, 'theirs', [{ api_id: betaApi.id, version_id: null }]))

    const first = build(one, 1)
    const answered = await storage.transaction((tx) => tx.sdks.addBuild(first))
    t.same(answered, { ...one, last_build_number: 1 }, 'answers the SDK as updated, nothing else changed')
    t.same(await storage.read.sdks.get(one.id), answered)
    const more = await added(storage, one, ['queued', 'queued'])
    t.same(more.map((b) => b.number), [2, 3], 'several in one transaction read their own numbers')
    const others = await added(storage, two, ['succeeded'])
    const beta1 = (await added(storage, theirs, ['queued']))[0]

    const add = (record: BuildRecord) => storage.transaction((tx) => tx.sdks.addBuild(record))
    await t.rejects(add(build(one, 5)), conflict, 'a gap is refused')
    await t.rejects(add(build(one, 3)), conflict, 'a number again is refused')
    await t.rejects(add({ ...build(one, 4), id: first.id }), conflict, 'an id again is refused')
    await t.rejects(add(build(sdk(acme.id, 'ghost'), 1)), notFound, 'no such SDK')
    await t.rejects(add({ ...build(one, 4), organization_id: beta.id }), notFound, "not another organization's")
    t.equal((await storage.read.sdks.get(one.id))?.last_build_number, 3, 'nothing refused moved the number')

    const read = storage.read.sdks
    t.same(await read.build(first.id), first)
    t.equal(await read.build(newId()), undefined)
    t.same(await read.builds({ sdkId: one.id }, FIRST_PAGE), { items: [...more].reverse().concat(first), total: 3 }, "an SDK's, newest first")
    t.same(await read.builds({ sdkId: one.id }, { offset: 1, limit: 1 }), { items: [more[0]], total: 3 })
    t.same(await read.builds({ organizationId: acme.id }, FIRST_PAGE), { items: [others[0], more[1], more[0], first], total: 4 })
    t.same(await read.builds({ organizationId: acme.id }, { offset: 10, limit: 10 }), { items: [], total: 4 })
    t.same(await read.builds({ organizationId: beta.id }, FIRST_PAGE), { items: [beta1], total: 1 })

    const finished: BuildRecord = { ...first, status: 'failed', error: 'boom', attempts: 1, finished_at: now(), updated_at: now() }
    await storage.transaction((tx) => tx.sdks.putBuild(finished))
    t.same(await read.build(first.id), finished, 'replaced in place')
    await t.rejects(storage.transaction((tx) => tx.sdks.putBuild(build(one, 9))), notFound, 'no such build')
    await t.rejects(storage.transaction((tx) => tx.sdks.putBuild({ ...finished, number: 9 })), /do not change/, 'its number stays')

    const failing = build((await read.get(one.id))!, 4)
    await t.rejects(storage.transaction(async (tx) => {
      await tx.sdks.addBuild(failing)
      await tx.sdks.putLog(failing.id, 'started\n')
      throw new RegistryError('invalid_request', 'refused after writing')
    }), { code: 'invalid_request' })
    t.equal(await read.build(failing.id), undefined, 'all or nothing')
    t.equal(await read.log(failing.id), undefined)
    t.equal((await read.get(one.id))?.last_build_number, 3)
  })

  t.test('the queue: queued and running builds oldest first, the next queued one claimed once, finished ones leave it', async (t) => {
    const { storage, acme } = await world(open, t)
    const [one, two] = await created(storage, sdk(acme.id, 'one'), sdk(acme.id, 'two'))
    const [a, b] = await added(storage, one, ['queued', 'queued'])
    const [c] = await added(storage, two, ['queued'])
    const [done] = await added(storage, two, ['succeeded'])
    const read = storage.read.sdks
    const ids = async () => (await read.queue()).map((build) => build.id)
    t.same(await ids(), [a.id, b.id, c.id], 'oldest first; one added finished is not queued')
    t.same(await read.nextQueued(T0), a)

    const claim = () => claimAt(storage, 'runner-a', T0)
    t.equal(await claim(), a.id)
    t.same(await ids(), [a.id, b.id, c.id], 'a running build stays in the queue')
    t.equal((await read.nextQueued(T0))?.id, b.id, 'the next queued one is after it')

    const claims = await Promise.allSettled([claim(), claim(), claim()])
    const claimed = claims.flatMap((outcome) => (outcome.status === 'fulfilled' && outcome.value ? [outcome.value] : []))
    for (const outcome of claims) if (outcome.status === 'rejected') t.match(outcome.reason, conflict, 'a claim that lost too often is told conflict')
    t.ok(claimed.every((id) => id === b.id || id === c.id) && new Set(claimed).size === claimed.length, 'concurrent claims never take one build twice')
    while (claimed.length < 2) claimed.push((await claim())!)
    t.same([...claimed].sort(), [b.id, c.id].sort(), 'each queued build claimed once')
    t.equal(await read.nextQueued(T0), undefined, 'nothing queued')
    t.equal(await claim(), undefined)

    for (const [build, status] of [[a, 'succeeded'], [b, 'failed'], [c, 'canceled']] as const) {
      await storage.transaction(async (tx) => tx.sdks.putBuild({ ...(await tx.sdks.build(build.id))!, status }))
    }
    t.same(await ids(), [], 'finished builds leave the queue')
    await storage.transaction(async (tx) => tx.sdks.putBuild({ ...(await tx.sdks.build(b.id))!, status: 'queued' }))
    t.same(await ids(), [b.id], 'queued again: back in it')
    t.equal((await read.nextQueued(T0))?.id, b.id)
    t.equal((await read.build(done.id))?.status, 'succeeded')
  })

  t.test('leases: a live one is not claimed, an ended one (or none) is, by one of two concurrent claimers', async (t) => {
    const { storage, acme } = await world(open, t)
    const [one] = await created(storage, sdk(acme.id, 'one'))
    const [first, second] = await added(storage, one, ['queued', 'queued'])
    const read = storage.read.sdks

    // Two runners claim at once with one build queued: one takes it, the other nothing (or conflict, retried).
    await storage.transaction(async (tx) => tx.sdks.putBuild({ ...(await tx.sdks.build(second.id))!, status: 'succeeded' }))
    const race = await Promise.allSettled([claimAt(storage, 'runner-a', T0), claimAt(storage, 'runner-b', T0)])
    for (const outcome of race) if (outcome.status === 'rejected') t.match(outcome.reason, conflict, 'a claim that lost too often is told conflict')
    const winners = race.flatMap((outcome) => (outcome.status === 'fulfilled' && outcome.value ? [outcome.value] : []))
    t.same(winners, [first.id], 'the one queued build is claimed by exactly one of two concurrent runners')
    const claimed = (await read.build(first.id))!
    t.match(claimed, { status: 'running', attempts: 1 })
    t.ok(claimed.lease && ['runner-a', 'runner-b'].includes(claimed.lease.holder), 'the lease names the winner')
    t.equal(claimed.lease?.until, LEASE_END, 'and when it ends')

    // While the lease lasts, nobody claims the build, however often they look.
    for (const at of [T0, '2030-01-01T00:00:59.999Z']) t.equal(await read.nextQueued(at), undefined, `live lease at ${at}: not claimable`)
    t.equal(await claimAt(storage, 'runner-c', '2030-01-01T00:00:30.000Z'), undefined)
    t.equal((await read.build(first.id))?.lease?.holder, claimed.lease?.holder, 'the live lease is left as it was')

    // From its end on it is claimable again, by one of two concurrent runners, one more attempt counted.
    t.equal((await read.nextQueued(LEASE_END))?.id, first.id, 'claimable at the instant the lease ends')
    const LATER = '2030-01-01T00:05:00.000Z'
    const again = await Promise.allSettled([claimAt(storage, 'runner-c', LATER), claimAt(storage, 'runner-d', LATER)])
    const retakers = again.flatMap((outcome) => (outcome.status === 'fulfilled' && outcome.value ? [outcome.value] : []))
    t.same(retakers, [first.id], 'an ended lease is claimed again exactly once')
    const retaken = (await read.build(first.id))!
    t.match(retaken, { status: 'running', attempts: 2 })
    t.ok(retaken.lease && ['runner-c', 'runner-d'].includes(retaken.lease.holder), 'under the new claimer\'s lease')

    // A running build without a lease (claimed before leases existed) is claimable: its process is gone.
    await storage.transaction(async (tx) => tx.sdks.putBuild({ ...(await tx.sdks.build(first.id))!, lease: null }))
    t.equal((await read.nextQueued(T0))?.id, first.id, 'a running build without a lease is claimable')
    const { lease: _lease, ...withoutField } = (await read.build(first.id))!
    await storage.transaction(async (tx) => tx.sdks.putBuild(withoutField))
    t.equal((await read.nextQueued(T0))?.id, first.id, 'also when the record has no lease field at all (written before leases)')
  })

  t.test('logs and artifacts: replaced in place, kept exactly, only of a build, removed with it', async (t) => {
    const { storage, acme } = await world(open, t)
    const [one] = await created(storage, sdk(acme.id, 'one'))
    const [first, second] = await added(storage, one, ['running', 'queued'])
    const bytes = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 7) % 256))
    const log = 'build 1 (typescript) started\n✓ généré: 3 files — ok\n'
    await storage.transaction(async (tx) => {
      await tx.sdks.putLog(first.id, log)
      await tx.sdks.putArtifact(first.id, bytes)
      t.equal(await tx.sdks.log(first.id), log, 'a transaction reads its own writes')
    })
    const read = storage.read.sdks
    t.equal(await read.log(first.id), log)
    const artifact = await read.artifact(first.id)
    t.ok(Buffer.isBuffer(artifact))
    t.ok(artifact?.equals(bytes), 'byte for byte')
    t.equal(await read.log(second.id), undefined, 'none written')
    t.equal(await read.artifact(second.id), undefined)

    await storage.transaction(async (tx) => {
      await tx.sdks.putLog(first.id, `${log}succeeded\n`)
      await tx.sdks.putArtifact(first.id, Buffer.from('other'))
    })
    t.equal(await read.log(first.id), `${log}succeeded\n`, 'replaced')
    t.equal((await read.artifact(first.id))?.toString(), 'other')
    await storage.transaction((tx) => tx.sdks.putLog(second.id, ''))
    t.equal(await read.log(second.id), '', 'an empty log is a log')

    await t.rejects(storage.transaction((tx) => tx.sdks.putLog(newId(), 'x')), notFound, 'no such build')
    await t.rejects(storage.transaction((tx) => tx.sdks.putArtifact(newId(), bytes)), notFound, 'no such build')
    await t.rejects(storage.transaction((tx) => tx.sdks.putLog(first.id, 'a\u0000b')), /NUL/, 'no NUL character (PostgreSQL text has none)')
    t.equal(await read.log(first.id), `${log}succeeded\n`)
  })
}
