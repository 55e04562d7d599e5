/** The port's repositories section, run against every adapter by contract.ts. */
import type { Test } from 'tap'
import { newId } from '../../../src/domain/resources/ids.js'
import type { Storage } from '../../../src/storage/port.js'
import type {
  LastSyncRecord, OrganizationRecord, RepositoryConnectionRecord, ResourceRecord, SyncLeaseRecord, SyncRequest,
} from '../../../src/storage/records.js'
import { organization, resource, type OpenStorage } from './contract.js'

const notFound = { code: 'not_found' }
const conflict = { code: 'conflict' }

async function withOrganization(storage: Storage, slug: string): Promise<OrganizationRecord> {
  const org = organization(slug)
  await storage.transaction((tx) => tx.organizations.put(org))
  return org
}

async function withApi(storage: Storage, org: OrganizationRecord, name: string, kind: ResourceRecord['kind'] = 'api'): Promise<ResourceRecord> {
  const api = resource(org.id, name, { kind })
  await storage.transaction((tx) => tx.resources.create(api))
  return api
}

let clock = Date.parse('2026-01-01T00:00:00.000Z')
/** Distinct, increasing times: a connection's `updated_at` is its version. */
const tick = () => new Date(clock += 1000).toISOString()

function connection(
  api: ResourceRecord, normalized: string, branch = 'main', fields: Partial<RepositoryConnectionRecord> = {},
): RepositoryConnectionRecord {
  const at = tick()
  return {
    id: newId(), api_id: api.id, organization_id: api.organization_id, provider: 'github', url: `https://${normalized}.git`,
    normalized_url: normalized, branch, path: 'openapi.yaml', token: null,
    webhook_secret: { alg: 'A256GCM', kid: '0123456789abcdef', iv: 'aXY', data: 'ZGF0YQ' },
    created_at: at, updated_at: at, last_sync: null, ...fields,
  }
}

function lastSync(status: LastSyncRecord['status']): LastSyncRecord {
  const at = tick()
  return {
    status, trigger: 'webhook', delivery: 'd-1', started_at: at, finished_at: at, commit: 'c'.repeat(40), version_id: null, version_number: null,
    error: status === 'failed' ? { code: 'repository_unavailable', detail: 'fetch: refused', errors: [{ message: 'no', path: ['url'] }] } : null,
  }
}

const T_ANY = '2030-01-01T00:01:00.000Z'
const LATER = '2030-01-01T00:05:00.000Z'

const ids = (connections: RepositoryConnectionRecord[]) => connections.map((c) => c.api_id)

const asked = (requestedAt: string, trigger: SyncRequest['trigger'] = 'webhook'): SyncRequest =>
  ({ id: newId(), trigger, delivery: trigger === 'webhook' ? newId() : null, requested_at: requestedAt })

/** What a runner does (src/domain/repository-sync/sync-leases.ts): the lease due first at `at`, taken for `holder` until a minute later. */
function claimSyncAt(storage: Storage, holder: string, at: string): Promise<SyncLeaseRecord | undefined> {
  return storage.transaction(async (tx) => {
    const lease = await tx.repositories.nextSync(at)
    if (!lease) return undefined
    const request = lease.pending ?? lease.running!.request
    const taken: SyncLeaseRecord = { api_id: lease.api_id, running: { request, holder, until: new Date(Date.parse(at) + 60_000).toISOString() }, pending: null }
    await tx.repositories.putSyncLease(taken)
    return taken
  })
}

export function repositoryContract(t: Test, open: OpenStorage): void {
  t.test('repositories: one connection per API, replaced in place, found by repository and by organization', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const beta = await withOrganization(storage, 'beta')
    const [a, b, c] = [await withApi(storage, acme, 'a'), await withApi(storage, acme, 'b'), await withApi(storage, acme, 'c')]
    const theirs = await withApi(storage, beta, 'theirs')
    const first = connection(a, 'github.com/acme/x', 'main')
    t.equal(await storage.transaction((tx) => tx.repositories.put(first)), true, 'created')
    t.same(await storage.read.repositories.get(a.id), first, 'stored as given')
    await storage.transaction(async (tx) => {
      await tx.repositories.put(connection(b, 'github.com/acme/x', 'dev'))
      await tx.repositories.put(connection(c, 'github.com/acme/xy', 'main'))
      await tx.repositories.put(connection(theirs, 'github.com/acme/x', 'main'))
      t.same(ids(await tx.repositories.byRepository('github.com/acme/x')).sort(), [a.id, b.id, theirs.id].sort(), 'a transaction reads its own writes')
    })
    // By branch, then API id: 'dev' before 'main'.
    const mainIds = [a.id, theirs.id].sort()
    t.same(ids(await storage.read.repositories.byRepository('github.com/acme/x')), [b.id, ...mainIds],
      'every organization and branch; a longer url with the same prefix is another repository')
    t.same(ids(await storage.read.repositories.byRepository('github.com/acme/xy')), [c.id])
    t.same(await storage.read.repositories.byRepository('github.com/acme'), [], 'nor is a shorter one')
    t.same(ids(await storage.read.repositories.list(acme.id)), [a.id, b.id, c.id], 'one organization, API id order')
    t.same(ids(await storage.read.repositories.list(beta.id)), [theirs.id])

    const moved = connection(a, 'github.com/acme/y', 'main', { id: first.id, created_at: first.created_at, last_sync: lastSync('succeeded') })
    t.equal(await storage.transaction((tx) => tx.repositories.put(moved)), false, 'replaced')
    t.same(await storage.read.repositories.get(a.id), moved)
    t.same(ids(await storage.read.repositories.byRepository('github.com/acme/x')), [b.id, theirs.id], 'the replace moved the index entry')
    t.same(ids(await storage.read.repositories.byRepository('github.com/acme/y')), [a.id])
    const branch = connection(b, 'github.com/acme/x', 'release')
    await storage.transaction((tx) => tx.repositories.put(branch))
    t.same((await storage.read.repositories.byRepository('github.com/acme/x')).map((x) => x.branch), ['main', 'release'], 'a new branch moves it too')

    t.equal(await storage.transaction((tx) => tx.repositories.remove(b.id)), true)
    t.equal(await storage.transaction((tx) => tx.repositories.remove(b.id)), false, 'already gone')
    t.equal(await storage.read.repositories.get(b.id), undefined)
    t.same(ids(await storage.read.repositories.byRepository('github.com/acme/x')), [theirs.id], 'and its index entry with it')
    t.same(ids(await storage.read.repositories.list(acme.id)), [a.id, c.id])
  })

  t.test('repositories: only an existing API of its organization has a connection (404)', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const beta = await withOrganization(storage, 'beta')
    const api = await withApi(storage, acme, 'shop')
    const schema = await withApi(storage, acme, 'pet', 'schema')
    const missing = { ...api, id: newId() }
    await t.rejects(storage.transaction((tx) => tx.repositories.put(connection(missing, 'github.com/acme/x'))), notFound, 'no such API')
    await t.rejects(storage.transaction((tx) => tx.repositories.put(connection(schema, 'github.com/acme/x'))), notFound, 'a schema is not an API')
    await t.rejects(storage.transaction((tx) => tx.repositories.put({ ...connection(api, 'github.com/acme/x'), organization_id: beta.id })),
      notFound, "another organization's API")
    t.same(await storage.read.repositories.byRepository('github.com/acme/x'), [], 'nothing was written')
    t.same(await storage.read.repositories.list(beta.id), [])
  })

  t.test('repositories: a put given the version it replaces is refused when the connection changed (409)', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const api = await withApi(storage, acme, 'shop')
    const first = connection(api, 'github.com/acme/x')
    t.equal(await storage.transaction((tx) => tx.repositories.put(first, null)), true, 'none expected, none there')
    await t.rejects(storage.transaction((tx) => tx.repositories.put(connection(api, 'github.com/acme/y'), null)), conflict, 'one is there')
    await t.rejects(storage.transaction((tx) => tx.repositories.put(connection(api, 'github.com/acme/y'), tick())), conflict, 'another version')
    t.same(await storage.read.repositories.get(api.id), first, 'unchanged')
    const second = connection(api, 'github.com/acme/y', 'main', { id: first.id })
    t.equal(await storage.transaction((tx) => tx.repositories.put(second, first.updated_at)), false, 'the version it replaces')
    t.same(await storage.read.repositories.get(api.id), second)
    await storage.transaction((tx) => tx.repositories.remove(api.id))
    await t.rejects(storage.transaction((tx) => tx.repositories.put(first, second.updated_at)), conflict, 'gone meanwhile')
    t.equal(await storage.read.repositories.get(api.id), undefined)
  })

  t.test('repositories: a sync is recorded only on the connection it started from', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const api = await withApi(storage, acme, 'shop')
    const other = await withApi(storage, acme, 'other')
    const started = connection(api, 'github.com/acme/x')
    await storage.transaction((tx) => tx.repositories.put(started))
    const failed = lastSync('failed')
    t.equal(await storage.transaction((tx) => tx.repositories.recordSync(api.id, started.updated_at, failed)), true)
    t.same(await storage.read.repositories.get(api.id), { ...started, last_sync: failed }, 'kept as given, nothing else changed')
    t.same(Object.keys((await storage.read.repositories.get(api.id))!), Object.keys(started), 'in the same key order')
    const succeeded = lastSync('succeeded')
    t.equal(await storage.transaction((tx) => tx.repositories.recordSync(api.id, started.updated_at, succeeded)), true, 'a later sync replaces it')
    t.same((await storage.read.repositories.get(api.id))?.last_sync, succeeded)

    const replaced = connection(api, 'github.com/acme/y', 'main', { id: started.id })
    await storage.transaction((tx) => tx.repositories.put(replaced))
    t.equal(await storage.transaction((tx) => tx.repositories.recordSync(api.id, started.updated_at, lastSync('failed'))), false,
      'the connection was replaced since the sync started')
    t.same(await storage.read.repositories.get(api.id), replaced, 'left as it is')
    t.equal(await storage.transaction((tx) => tx.repositories.recordSync(other.id, started.updated_at, lastSync('failed'))), false, 'no connection')
    t.equal(await storage.read.repositories.get(other.id), undefined, 'none made')
    await storage.transaction((tx) => tx.repositories.remove(api.id))
    t.equal(await storage.transaction((tx) => tx.repositories.recordSync(api.id, replaced.updated_at, lastSync('failed'))), false,
      'removed since the sync started')
    t.equal(await storage.read.repositories.get(api.id), undefined)
  })

  t.test("repositories: an API's deletion removes its connection in the same transaction", async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const api = await withApi(storage, acme, 'shop')
    const kept = await withApi(storage, acme, 'kept')
    await storage.transaction(async (tx) => {
      await tx.repositories.put(connection(api, 'github.com/acme/x'))
      await tx.repositories.put(connection(kept, 'github.com/acme/x'))
    })
    // What deletion does once it is a port transaction (src/domain/resources/resources.ts).
    await storage.transaction(async (tx) => {
      t.equal(await tx.repositories.remove(api.id), true)
      await tx.resources.remove(api.id)
    })
    t.equal(await storage.read.repositories.get(api.id), undefined)
    t.same(ids(await storage.read.repositories.byRepository('github.com/acme/x')), [kept.id])
    t.same(ids(await storage.read.repositories.list(acme.id)), [kept.id])
    // All or nothing: a deletion that fails after removing the connection leaves it.
    await t.rejects(storage.transaction(async (tx) => {
      await tx.repositories.remove(kept.id)
      throw new Error('refused')
    }), /refused/)
    t.same(ids(await storage.read.repositories.byRepository('github.com/acme/x')), [kept.id])
  })

  t.test('repositories: webhook delivery ids are claimed once, per provider, the oldest forgotten past the bound', async (t) => {
    const storage = await open(t)
    const claim = (provider: 'github' | 'gitlab', id: string, at: number, keep = 3) =>
      storage.transaction((tx) => tx.repositories.claimDelivery(provider, id, at, keep))
    for (let i = 1; i <= 5; i++) t.equal(await claim('github', `d${i}`, 1000 + i), true, `d${i} is new`)
    t.equal(await claim('gitlab', 'd5', 2000), true, 'ids are per provider')
    t.equal(await claim('github', 'd5', 3000), false, 'd5 was seen')
    t.equal(await claim('github', 'd4', 3001), false, 'd4 too: the newest 3 are kept (github d4, d5, gitlab d5)')
    t.equal(await claim('github', 'd1', 3002), true, 'd1 was forgotten')
    t.equal(await claim('github', 'd4', 3003), true, 'and now d4, the oldest of the newest 3')
    t.equal(await claim('gitlab', 'd5', 3004), false, 'gitlab d5 is still among them')
    t.equal(await claim('github', 'd5', 3005), true, 'github d5 was not')
    t.equal(await storage.transaction((tx) => tx.repositories.claimDelivery('github', 'default-bound', 4000)), true,
      'the default bound (10,000)')
    t.equal(await claim('github', 'default-bound', 4001, 10_000), false)
    // A claim in a transaction that fails is not kept.
    await t.rejects(storage.transaction(async (tx) => {
      t.equal(await tx.repositories.claimDelivery('github', 'rolled-back', 5000), true)
      throw new Error('refused')
    }), /refused/)
    t.equal(await claim('github', 'rolled-back', 5001, 10_000), true, 'new again')
  })

  t.test('repositories: concurrent claims: one id is claimed once, different ids all are, within the bound', async (t) => {
    const storage = await open(t)
    const same = await Promise.allSettled(Array.from({ length: 5 }, (_, i) =>
      storage.transaction((tx) => tx.repositories.claimDelivery('github', 'same', 1000 + i))))
    const answers = same.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []))
    for (const o of same) if (o.status === 'rejected') t.match(o.reason, conflict, 'a claim that lost too often is told conflict')
    t.equal(answers.filter(Boolean).length, 1, 'exactly one claim is told the id is new')
    const distinct = await Promise.all(Array.from({ length: 5 }, (_, i) =>
      storage.transaction((tx) => tx.repositories.claimDelivery('gitlab', `d${i}`, 2000 + i, 3))))
    t.same(distinct, [true, true, true, true, true])
    // Whatever order they committed in, the newest 3 by time are kept (d2, d3, d4): github's one went too.
    const again: boolean[] = []
    for (let i = 0; i < 5; i++) again.push(await storage.transaction((tx) => tx.repositories.claimDelivery('gitlab', `d${i}`, 3000 + i, 100)))
    t.same(again, [true, true, false, false, false])
    t.equal(await storage.transaction((tx) => tx.repositories.claimDelivery('github', 'same', 4000, 100)), true, 'forgotten')
  })

  t.test('repositories: sync leases: one per connection, due when the running one ends or, with none running, at once; gone with the connection', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const [a, b, c] = [await withApi(storage, acme, 'a'), await withApi(storage, acme, 'b'), await withApi(storage, acme, 'c')]
    for (const api of [a, b]) await storage.transaction((tx) => tx.repositories.put(connection(api, `github.com/acme/${api.name}`)))
    const read = storage.read.repositories
    t.equal(await read.syncLease(a.id), undefined, 'none before a sync is asked for')
    t.equal(await read.nextSync('2099-01-01T00:00:00.000Z'), undefined, 'nothing to claim')

    const running: SyncLeaseRecord = {
      api_id: a.id, running: { request: asked('2030-01-01T00:00:00.000Z', 'manual'), holder: 'runner-a', until: '2030-01-01T00:01:00.000Z' }, pending: null,
    }
    const waiting: SyncLeaseRecord = { api_id: b.id, running: null, pending: asked('2030-01-01T00:00:30.000Z') }
    await storage.transaction(async (tx) => {
      await tx.repositories.putSyncLease(running)
      await tx.repositories.putSyncLease(waiting)
      t.same(await tx.repositories.syncLease(a.id), running, 'a transaction reads its own writes')
    })
    t.same(await read.syncLease(a.id), running, 'kept as given')
    t.same(await read.syncLease(b.id), waiting)
    t.equal(await read.nextSync('2030-01-01T00:00:29.999Z'), undefined, 'neither is due yet')
    t.same(await read.nextSync('2030-01-01T00:00:30.000Z'), waiting, 'one waiting with none running: due when it was asked for')
    t.same(await read.nextSync('2030-01-01T00:05:00.000Z'), waiting, 'the one due first')

    // A sync asked for while one runs waits after it: not due before the running one's lease ends.
    const both: SyncLeaseRecord = { ...running, pending: asked('2030-01-01T00:00:10.000Z') }
    await storage.transaction(async (tx) => {
      await tx.repositories.removeSyncLease(b.id)
      await tx.repositories.putSyncLease(both)
    })
    t.equal(await read.nextSync('2030-01-01T00:00:59.999Z'), undefined, 'while its lease lasts, its holder runs the waiting one after it')
    t.same(await read.nextSync('2030-01-01T00:01:00.000Z'), both, 'due at the instant the lease ends')
    const renewed: SyncLeaseRecord = { ...both, running: { ...both.running!, until: '2030-01-01T00:02:00.000Z' } }
    await storage.transaction((tx) => tx.repositories.putSyncLease(renewed))
    t.equal(await read.nextSync('2030-01-01T00:01:30.000Z'), undefined, 'a renewal moves when it is due')
    t.same(await read.nextSync('2030-01-01T00:02:00.000Z'), renewed)

    await t.rejects(storage.transaction((tx) => tx.repositories.putSyncLease({ api_id: c.id, running: null, pending: asked(T_ANY) })), notFound,
      'an API without a connection has no sync lease')
    await t.rejects(storage.transaction((tx) => tx.repositories.putSyncLease({ api_id: a.id, running: null, pending: null })), /running or a waiting/,
      'a lease holds a sync')
    t.same(await read.syncLease(a.id), renewed, 'left as it was')
    t.equal(await read.syncLease(c.id), undefined)

    t.equal(await storage.transaction((tx) => tx.repositories.removeSyncLease(a.id)), true, 'released')
    t.equal(await storage.transaction((tx) => tx.repositories.removeSyncLease(a.id)), false, 'already gone')
    t.equal(await read.nextSync('2099-01-01T00:00:00.000Z'), undefined, 'nothing left to claim')

    await storage.transaction((tx) => tx.repositories.putSyncLease(waiting))
    t.equal(await storage.transaction((tx) => tx.repositories.remove(b.id)), true, 'the connection removed')
    t.equal(await read.syncLease(b.id), undefined, 'its lease with it')
    t.equal(await read.nextSync('2099-01-01T00:00:00.000Z'), undefined, 'and no longer due')
  })

  t.test('repositories: a due sync lease is claimed by one of two concurrent claimers; a live one by none', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const api = await withApi(storage, acme, 'shop')
    await storage.transaction((tx) => tx.repositories.put(connection(api, 'github.com/acme/shop')))
    const pending = asked('2030-01-01T00:00:00.000Z')
    await storage.transaction((tx) => tx.repositories.putSyncLease({ api_id: api.id, running: null, pending }))

    const race = await Promise.allSettled([claimSyncAt(storage, 'runner-a', T_ANY), claimSyncAt(storage, 'runner-b', T_ANY)])
    for (const outcome of race) if (outcome.status === 'rejected') t.match(outcome.reason, conflict, 'a claim that lost too often is told conflict')
    const winners = race.flatMap((outcome) => (outcome.status === 'fulfilled' && outcome.value ? [outcome.value.running!.holder] : []))
    t.equal(winners.length, 1, 'exactly one of two concurrent runners claims the waiting sync')
    const claimed = (await storage.read.repositories.syncLease(api.id))!
    t.same(claimed, { api_id: api.id, running: { request: pending, holder: winners[0], until: '2030-01-01T00:02:00.000Z' }, pending: null },
      'it runs the waiting sync under the winner\'s lease')

    t.equal(await claimSyncAt(storage, 'runner-c', '2030-01-01T00:01:59.999Z'), undefined, 'nobody claims it while the lease lasts')
    const again = await Promise.allSettled([claimSyncAt(storage, 'runner-c', LATER), claimSyncAt(storage, 'runner-d', LATER)])
    const retakers = again.flatMap((outcome) => (outcome.status === 'fulfilled' && outcome.value ? [outcome.value.running!.holder] : []))
    t.equal(retakers.length, 1, 'an ended lease is taken over exactly once')
    t.match(await storage.read.repositories.syncLease(api.id), { running: { request: pending, holder: retakers[0] } }, 'the interrupted sync runs again')
  })
}
