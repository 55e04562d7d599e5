/**
 * The behaviours of the storage port, run against every adapter (lmdb.test.ts, postgres.test.ts):
 * `open` answers a fresh, empty storage for each subtest.
 */
import { createHash } from 'node:crypto'
import type { Test } from 'tap'
import { newId, now } from '../../../src/domain/resources/ids.js'
import { RegistryError } from '../../../src/errors.js'
import type { ResourceLookup, Storage, Stores } from '../../../src/storage/port.js'
import type {
  BlobRef, KeyRecord, OrganizationRecord, ResourceKind, ResourceRecord, VersionRecord, WebhookDeliveryRecord,
  WebhookEndpointRecord, WebhookEventRecord,
} from '../../../src/storage/records.js'
import { mirrorContract } from './mirror.js'
import { repositoryContract } from './repositories.js'
import { sdkContract } from './sdks.js'
import { secretContract } from './secrets.js'
import { siteContract } from './sites.js'
import { tallyContract } from './tallies.js'

export type OpenStorage = (t: Test) => Promise<Storage>

export function organization(slug: string): OrganizationRecord {
  const at = now()
  return { id: newId(), slug, name: slug.toUpperCase(), created_at: at, updated_at: at }
}

function key(organizationId: string, secret = newId()): KeyRecord {
  return {
    id: newId(), organization_id: organizationId, name: null, role: 'admin',
    hash: createHash('sha256').update(secret).digest('hex'), created_at: now(), last_used_at: null, revoked_at: null,
  }
}

export function resource(
  organizationId: string, name: string,
  options: { kind?: ResourceKind; slug?: string; visibility?: ResourceRecord['visibility']; ruleset_id?: string | null } = {},
): ResourceRecord {
  const at = now()
  return {
    id: newId(), organization_id: organizationId, kind: options.kind ?? 'api', name,
    slug: options.slug ?? name.toLowerCase().replace(/[^a-z0-9]+/g, '-'), visibility: options.visibility ?? 'private',
    description: null, created_at: at, updated_at: at, last_number: 0,
    ...(options.kind === undefined || options.kind === 'api' ? { ruleset_id: options.ruleset_id ?? null, logo_url: null, blocking_severity: null } : {}),
  }
}

export function version(of: ResourceRecord, number: number, checksum = `sha256:${'a'.repeat(64)}`): VersionRecord {
  return {
    id: newId(), kind: of.kind, resource_id: of.id, organization_id: of.organization_id, number, checksum,
    digest: 'b'.repeat(64), source: 'upload', restored_from: null, size: 10, format: 'json', created_at: now(),
  }
}

/** What a domain upload does inside its transaction: the next number, from the resource as it is now. */
export async function appendNext(tx: Stores, resourceId: string): Promise<VersionRecord> {
  const current = await tx.resources.get(resourceId)
  if (!current) throw new RegistryError('not_found', 'resource not found')
  const next = version(current, current.last_number + 1)
  const updated = await tx.versions.append(next)
  await tx.mirror.append(current.organization_id, next.created_at, { change: 'version', resource: updated, version: next })
  return next
}

const conflict = { code: 'conflict' }

function endpoint(organizationId: string, url = 'https://hooks.example.com/registry'): WebhookEndpointRecord {
  const at = now()
  return {
    id: newId(), organization_id: organizationId, url, description: null, event_types: [], enabled: true,
    disabled_reason: null, secret: 'whsec_test', failing_since: null, created_at: at, updated_at: at,
  }
}

function event(organizationId: string): WebhookEventRecord {
  return { id: newId(), organization_id: organizationId, type: 'resource.created', created_at: now(), data: { n: 1 } }
}

function delivery(to: WebhookEndpointRecord, of: WebhookEventRecord, nextAttemptAt: string | null): WebhookDeliveryRecord {
  return {
    id: newId(), organization_id: to.organization_id, endpoint_id: to.id, event_id: of.id, event_type: of.type,
    status: nextAttemptAt === null ? 'succeeded' : 'pending', attempts: 0, next_attempt_at: nextAttemptAt, log: [],
    created_at: of.created_at, updated_at: of.created_at,
  }
}
const notFound = { code: 'not_found' }

async function withOrganization(storage: Storage, slug = 'acme'): Promise<OrganizationRecord> {
  const org = organization(slug)
  await storage.transaction((tx) => tx.organizations.put(org))
  return org
}

async function created(storage: Storage, record: ResourceRecord): Promise<ResourceRecord> {
  await storage.transaction((tx) => tx.resources.create(record))
  return record
}

export function storageContract(t: Test, open: OpenStorage): void {
  t.test('organizations: by id and slug, listed in id order, one owner per slug', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const beta = await withOrganization(storage, 'beta')
    t.same(await storage.read.organizations.get(acme.id), acme)
    t.same(await storage.read.organizations.bySlug('beta'), beta)
    t.equal(await storage.read.organizations.bySlug('nope'), undefined)
    t.same((await storage.read.organizations.list()).map((o) => o.slug), ['acme', 'beta'])
    await t.rejects(storage.transaction((tx) => tx.organizations.put(organization('acme'))), conflict)
    const renamed = { ...acme, slug: 'acme-2', updated_at: now() }
    await storage.transaction((tx) => tx.organizations.put(renamed))
    t.equal(await storage.read.organizations.bySlug('acme'), undefined, 'the old slug is free')
    t.same(await storage.read.organizations.bySlug('acme-2'), renamed)
    await storage.transaction((tx) => tx.organizations.put(organization('acme')))
    t.equal((await storage.read.organizations.list()).length, 3)
  })

  t.test('keys: by hash, per organization in id order, updated in place, never without their organization', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const beta = await withOrganization(storage, 'beta')
    const first = key(acme.id, 'one')
    const second = key(acme.id, 'two')
    const other = key(beta.id, 'three')
    await storage.transaction(async (tx) => {
      await tx.keys.put(first)
      await tx.keys.put(second)
      await tx.keys.put(other)
    })
    t.same(await storage.read.keys.byHash(first.hash), first)
    t.same((await storage.read.keys.list(acme.id)).map((k) => k.id), [first.id, second.id])
    const revoked = { ...first, revoked_at: now() }
    await storage.transaction((tx) => tx.keys.put(revoked))
    t.same(await storage.read.keys.get(first.id), revoked)
    t.same(await storage.read.keys.byHashWithOrganization(first.hash), { key: revoked, organization: acme }, 'with its organization, revoked as stored')
    const renamed = { ...beta, slug: 'beta-2', name: 'Beta renamed', updated_at: now() }
    await storage.transaction((tx) => tx.organizations.put(renamed))
    t.same(await storage.read.keys.byHashWithOrganization(other.hash), { key: other, organization: renamed }, 'the organization as it is now')
    t.equal(await storage.read.keys.byHashWithOrganization(createHash('sha256').update('unknown').digest('hex')), undefined)
    t.same(await storage.transaction((tx) => tx.keys.byHashWithOrganization(second.hash)), { key: second, organization: acme }, 'and in a transaction')
    await t.rejects(storage.transaction((tx) => tx.keys.put(key(newId()))), notFound)
    await t.rejects(storage.transaction((tx) => tx.keys.put({ ...key(acme.id), hash: second.hash })), conflict)
  })

  t.test('key reads at once answer as each alone: its key, its organization, only its own resource', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const beta = await withOrganization(storage, 'beta')
    const mine = key(acme.id, 'mine')
    const theirs = key(beta.id, 'theirs')
    const shop = resource(acme.id, 'shop')
    const betaShop = resource(beta.id, 'shop')
    await storage.transaction(async (tx) => {
      await tx.keys.put(mine)
      await tx.keys.put(theirs)
      await tx.resources.create(shop)
      await tx.resources.create(betaShop)
    })
    const unknown = createHash('sha256').update('unknown').digest('hex')
    const lookups: [string, ResourceLookup | undefined][] = [
      [mine.hash, { kind: 'api', by: 'id', ref: shop.id }],
      [theirs.hash, { kind: 'api', by: 'id', ref: shop.id }],
      [mine.hash, { kind: 'api', by: 'slug', ref: 'shop' }],
      [theirs.hash, { kind: 'api', by: 'slug', ref: 'shop' }],
      [unknown, { kind: 'api', by: 'slug', ref: 'shop' }],
      [mine.hash, undefined],
      [mine.hash, { kind: 'schema', by: 'slug', ref: 'shop' }],
      [theirs.hash, { kind: 'api', by: 'id', ref: betaShop.id }],
      [unknown, undefined],
      [mine.hash, { kind: 'api', by: 'slug', ref: 'nothing' }],
    ]
    const alone = []
    for (const [hash, along] of lookups) alone.push(await storage.read.keys.byHashWithOrganization(hash, along))
    // An adapter may leave the resource to the caller (LMDB does); one it answers is the right one.
    const expected = [shop.id, undefined, shop.id, betaShop.id, undefined, undefined, undefined, betaShop.id, undefined, undefined]
    t.same(alone.map((found, i) => (found?.resource === undefined ? undefined : expected[i])), alone.map((found) => found?.resource?.id),
      "each key's own organization's resource, of the kind asked, or none")
    if (storage.kind === 'postgres') t.same(alone.map((found) => found?.resource?.id), expected, 'PostgreSQL reads it along')
    t.same(alone.map((found) => found?.organization?.id), [acme.id, beta.id, acme.id, beta.id, undefined, acme.id, acme.id, beta.id, undefined, acme.id])
    // Started in one turn of the event loop: PostgreSQL reads them with one statement (key-reads.ts).
    const together = await Promise.all(lookups.map(([hash, along]) => storage.read.keys.byHashWithOrganization(hash, along)))
    t.same(together, alone, 'read together, each answer is the one it gets alone')
  })

  t.test('resources: one slug per organization and kind, pages by name with totals, public scope', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const beta = await withOrganization(storage, 'beta')
    const records: ResourceRecord[] = []
    for (const [name, visibility] of [['delta', 'private'], ['alpha', 'public'], ['charlie', 'private'], ['bravo', 'public']] as const) {
      records.push(await created(storage, resource(acme.id, name, { visibility })))
    }
    const twin = await created(storage, resource(acme.id, 'alpha', { slug: 'alpha-2' }))
    t.same(await storage.read.resources.bySlug(acme.id, 'api', 'charlie'), records[2])
    t.equal(await storage.read.resources.bySlug(acme.id, 'schema', 'charlie'), undefined)
    await t.rejects(storage.transaction((tx) => tx.resources.create(resource(acme.id, 'Delta'))), conflict, 'slug taken')
    await created(storage, resource(acme.id, 'delta', { kind: 'schema' }))
    await created(storage, resource(beta.id, 'delta'))
    await t.rejects(storage.transaction((tx) => tx.resources.create(resource(newId(), 'x'))), notFound, 'no such organization')

    const all = await storage.read.resources.list(acme.id, 'api', { offset: 0, limit: 10 })
    t.equal(all.total, 5)
    const alphas = [records[1].id, twin.id].sort()
    t.same(all.items.map((r) => r.id), [...alphas, records[3].id, records[2].id, records[0].id], 'by name, ties by id')
    const page = await storage.read.resources.list(acme.id, 'api', { offset: 1, limit: 2 })
    t.same(page, { items: all.items.slice(1, 3), total: 5 })
    t.same(await storage.read.resources.list(acme.id, 'api', { offset: 5, limit: 10 }), { items: [], total: 5 }, 'past the end: no items, the total')
    t.equal((await storage.read.resources.list(acme.id, 'schema', { offset: 0, limit: 10 })).total, 1, 'totals per kind')
    const publicOnes = await storage.read.resources.list(acme.id, 'api', { offset: 0, limit: 10 }, true)
    t.same(publicOnes.items.map((r) => r.name), ['alpha', 'bravo'])
    t.equal(publicOnes.total, 2)
    t.same(await storage.read.resources.list(acme.id, 'ruleset', { offset: 0, limit: 10 }), { items: [], total: 0 })

    const descending = await storage.read.resources.list(acme.id, 'api', { offset: 0, limit: 10 }, false, { descending: true })
    t.same(descending, { items: [...all.items].reverse(), total: 5 }, 'Z to A, ties by id descending')
    const named = await storage.read.resources.list(acme.id, 'api', { offset: 1, limit: 10 }, false, { nameContains: 'HA' })
    t.same(named.items.map((r) => r.name), ['alpha', 'charlie'], 'names containing it, ignoring case, paged')
    t.equal(named.total, 3, 'the total counts the matching names')
    const publicNamed = await storage.read.resources.list(acme.id, 'api', { offset: 0, limit: 10 }, true, { nameContains: 'r', descending: true })
    t.same(publicNamed, { items: [records[3]], total: 1 })

    // Case is folded beyond ASCII, as JavaScript folds it (the console's filter box and the CLI).
    const other = await withOrganization(storage, 'other')
    for (const name of ['ÄPFEL API', 'Øresund', 'ΟΔΟΣ', 'Straße']) await created(storage, resource(other.id, name, { slug: `s-${records.length}-${name.length}` }))
    const folded = async (needle: string) => (await storage.read.resources.list(other.id, 'api', { offset: 0, limit: 10 }, false, { nameContains: needle })).items.map((r) => r.name)
    t.same(await folded('äpfel'), ['ÄPFEL API'])
    t.same(await folded('ØRE'), ['Øresund'])
    t.same(await folded('οδο'), ['ΟΔΟΣ'])
    t.same(await folded('STRASSE'), [], 'no expansion: ß is not ss')
    t.same(await folded('ße'), ['Straße'])
  })

  t.test('resources: an update moves slug, listings and ruleset use; a taken slug is refused', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage)
    const ruleset = await created(storage, resource(acme.id, 'rules', { kind: 'ruleset' }))
    const api = await created(storage, resource(acme.id, 'shop', { ruleset_id: ruleset.id }))
    const other = await created(storage, resource(acme.id, 'other'))
    t.equal(await storage.read.resources.countApisUsingRuleset(ruleset.id), 1)
    await t.rejects(storage.transaction((tx) => tx.resources.update({ ...api, slug: 'other', name: 'zzz' })), conflict)
    t.same(await storage.read.resources.get(api.id), api, 'a refused update changes nothing')
    t.same((await storage.read.resources.list(acme.id, 'api', { offset: 0, limit: 10 })).items.map((r) => r.name), ['other', 'shop'])
    const moved = { ...api, slug: 'store', name: 'Store', visibility: 'public' as const, ruleset_id: null, updated_at: now() }
    await storage.transaction((tx) => tx.resources.update(moved))
    t.same(await storage.read.resources.get(api.id), moved)
    t.equal(await storage.read.resources.bySlug(acme.id, 'api', 'shop'), undefined)
    t.same(await storage.read.resources.bySlug(acme.id, 'api', 'store'), moved)
    t.equal(await storage.read.resources.countApisUsingRuleset(ruleset.id), 0)
    const publicOnes = await storage.read.resources.list(acme.id, 'api', { offset: 0, limit: 10 }, true)
    t.same(publicOnes, { items: [moved], total: 1 })
    t.same(await storage.read.resources.list(acme.id, 'api', { offset: 0, limit: 10 }), { items: [moved, other], total: 2 },
      'the new name listed in its place (byte order: capitals first), the old one gone, the total unchanged')
    await t.rejects(storage.transaction((tx) => tx.resources.update(resource(acme.id, 'ghost'))), notFound)
  })

  t.test('versions: gapless numbers, one current, newest first, removed with their resource', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage)
    const api = await created(storage, resource(acme.id, 'shop'))
    const v1 = version(api, 1, `sha256:${'1'.repeat(64)}`)
    const afterFirst = await storage.transaction((tx) => tx.versions.append(v1))
    t.equal(afterFirst.last_number, 1)
    t.equal(afterFirst.updated_at, v1.created_at)
    await t.rejects(storage.transaction((tx) => tx.versions.append(version(api, 3))), conflict, 'a gap is refused')
    await t.rejects(storage.transaction((tx) => tx.versions.append(version(api, 1))), conflict, 'a number again is refused')
    await t.rejects(storage.transaction((tx) => tx.versions.append(version(resource(acme.id, 'ghost'), 1))), notFound)
    const v2 = version(api, 2, `sha256:${'2'.repeat(64)}`)
    const afterSecond = await storage.transaction((tx) => tx.versions.append(v2))
    t.same(await storage.read.versions.current(api.id), v2)
    t.same(await storage.read.versions.currentOf(afterSecond), v2, 'the current version of a record of its resource')
    t.same(await storage.read.versions.currentOf(afterSecond), v2, 'and again (PostgreSQL keeps it)')
    t.same(await storage.read.versions.currentOf(afterFirst), v1, 'as the record names it: an older record names an older version')
    t.equal(await storage.read.versions.currentOf(api), undefined, 'none before the first')
    const v3 = version(api, 3, `sha256:${'3'.repeat(64)}`)
    const seenInside = await storage.transaction(async (tx) => tx.versions.currentOf(await tx.versions.append(v3)))
    t.same(seenInside, v3, "a transaction's own append")
    t.same(await storage.read.versions.currentOf((await storage.read.resources.get(api.id))!), v3)
    t.same(await storage.read.versions.get(api.id, 1), v1)
    t.same(await storage.read.versions.byId(v1.id), v1)
    t.same(await storage.read.versions.list(api.id, { offset: 0, limit: 10 }), { items: [v3, v2, v1], total: 3 })
    t.same(await storage.read.versions.list(api.id, { offset: 2, limit: 1 }), { items: [v1], total: 3 })
    t.equal((await storage.read.resources.get(api.id))?.last_number, 3)
    t.equal(await storage.read.versions.isKnownValid('api', v1.checksum), true)
    t.equal(await storage.read.versions.isKnownValid('schema', v1.checksum), false)

    t.same(await storage.transaction((tx) => tx.resources.remove(api.id)), { ...api, last_number: 3, updated_at: v3.created_at })
    t.equal(await storage.read.resources.get(api.id), undefined)
    t.equal(await storage.read.versions.current(api.id), undefined)
    t.equal(await storage.read.versions.byId(v1.id), undefined)
    t.same(await storage.read.versions.list(api.id, { offset: 0, limit: 10 }), { items: [], total: 0 })
    t.equal(await storage.read.versions.isKnownValid('api', v1.checksum), true, 'a fact about content outlives the resource')
    t.equal(await storage.transaction((tx) => tx.resources.remove(api.id)), undefined)
    await created(storage, resource(acme.id, 'shop'))
    t.pass('the slug is free again')
  })

  t.test('a transaction reads its own writes and commits all or nothing', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage)
    const api = resource(acme.id, 'shop')
    const seen = await storage.transaction(async (tx) => {
      await tx.resources.create(api)
      await tx.versions.append(version(api, 1))
      return { resource: await tx.resources.bySlug(acme.id, 'api', 'shop'), current: await tx.versions.current(api.id) }
    })
    t.equal(seen.resource?.last_number, 1)
    t.equal(seen.current?.number, 1)
    const failing = resource(acme.id, 'failing')
    await t.rejects(storage.transaction(async (tx) => {
      await tx.resources.create(failing)
      await tx.versions.append(version(failing, 1))
      throw new RegistryError('invalid_document', 'refused after writing')
    }), { code: 'invalid_document' })
    t.equal(await storage.read.resources.get(failing.id), undefined)
    t.equal(await storage.read.resources.bySlug(acme.id, 'api', 'failing'), undefined)
    t.equal((await storage.read.resources.list(acme.id, 'api', { offset: 0, limit: 10 })).total, 1)
  })

  t.test('concurrent transactions on one resource produce gapless numbers with no duplicate', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage)
    const api = await created(storage, resource(acme.id, 'shop'))
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => storage.transaction((tx) => appendNext(tx, api.id))))
    const numbers = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.number] : [])).sort((a, b) => a - b)
    for (const o of outcomes) if (o.status === 'rejected') t.match(o.reason, conflict, 'a writer that lost too often is told conflict')
    t.ok(numbers.length >= 1)
    t.same(numbers, Array.from({ length: numbers.length }, (_, i) => i + 1), 'gapless, no duplicate')
    const stored = await storage.read.versions.list(api.id, { offset: 0, limit: 100 })
    t.same(stored.items.map((v) => v.number), [...numbers].reverse())
    t.equal((await storage.read.resources.get(api.id))?.last_number, numbers.length)
    t.equal((await storage.read.versions.current(api.id))?.number, numbers.length)
    const journal = await storage.read.mirror.pending(100)
    t.same(journal.map((e) => (e.change === 'version' ? e.version.number : 0)).sort((a, b) => a - b), numbers, 'journaled once each')
  })

  t.test('concurrent creates of one slug: one wins, the others are told conflict', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage)
    const outcomes = await Promise.allSettled(Array.from({ length: 4 }, () =>
      storage.transaction((tx) => tx.resources.create(resource(acme.id, 'shop')))))
    t.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1)
    for (const o of outcomes) if (o.status === 'rejected') t.match(o.reason, conflict)
    t.equal((await storage.read.resources.list(acme.id, 'api', { offset: 0, limit: 10 })).total, 1)
  })

  t.test('the journal numbers entries at commit: increasing, never conflicting, nudging listeners', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage)
    const apis = await Promise.all(['a', 'b', 'c', 'd'].map((name) => created(storage, resource(acme.id, name))))
    const nudges: boolean[] = []
    storage.onCommit(({ journal }) => nudges.push(journal))
    // Different resources: nothing read in common, so none of these needs to run twice.
    await Promise.all(apis.map((api) => storage.transaction((tx) => appendNext(tx, api.id))))
    await storage.transaction((tx) => tx.resources.get(apis[0].id))
    const entries = await storage.read.mirror.pending(100)
    t.equal(entries.length, 4)
    const seqs = entries.map((e) => e.seq)
    t.same(seqs, [...seqs].sort((a, b) => a - b), 'in sequence order')
    t.equal(new Set(seqs).size, 4)
    t.same(entries.map((e) => e.organization_id), Array(4).fill(acme.id))
    t.same(nudges.filter(Boolean).length, 4, 'each commit that journaled nudged')
    t.equal(nudges.length, 5)
    t.same((await storage.read.mirror.pending(2)).map((e) => e.seq), seqs.slice(0, 2))
    t.same((await storage.read.mirror.pending(2, seqs[1])).map((e) => e.seq), seqs.slice(2, 4), 'a page after a sequence number')
    t.same(await storage.read.mirror.pending(2, seqs[3]), [], 'none after the last')
  })

  t.test('webhooks: endpoints per organization, the outbox, deliveries newest first and due soonest first', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const beta = await withOrganization(storage, 'beta')
    const [one, two, theirs] = [endpoint(acme.id), endpoint(acme.id), endpoint(beta.id)]
    await storage.transaction(async (tx) => {
      for (const e of [one, two, theirs]) await tx.webhooks.putEndpoint(e)
    })
    t.same((await storage.read.webhooks.endpoints(acme.id)).map((e) => e.id), [one.id, two.id], 'one organization, id order')
    await t.rejects(storage.transaction((tx) => tx.webhooks.putEndpoint(endpoint(newId()))), notFound, 'no such organization')
    const disabled = { ...one, enabled: false, disabled_reason: 'failing', updated_at: now() }
    await storage.transaction((tx) => tx.webhooks.putEndpoint(disabled))
    t.same(await storage.read.webhooks.endpoint(one.id), disabled, 'replaced by id')

    const happened = event(acme.id)
    const times = ['2026-01-01T00:00:03.000Z', '2026-01-01T00:00:01.000Z', '2026-01-01T00:00:02.000Z']
    const deliveries = times.map((at) => delivery(two, happened, at))
    // The event and its deliveries in one transaction, as a change writes them.
    await storage.transaction(async (tx) => {
      await tx.webhooks.putEvent(happened)
      for (const d of deliveries) await tx.webhooks.putDelivery(d)
    })
    t.same(await storage.read.webhooks.event(happened.id), happened)
    await t.rejects(storage.transaction((tx) => tx.webhooks.putEvent(happened)), conflict, 'an event is written once')
    await t.rejects(storage.transaction((tx) => tx.webhooks.putDelivery(delivery(endpoint(acme.id), happened, null))), notFound, 'no such endpoint')
    await t.rejects(storage.transaction((tx) => tx.webhooks.putDelivery(delivery(two, event(acme.id), null))), notFound, 'no such event')

    const due = await storage.read.webhooks.due('2026-01-01T00:00:02.000Z', 10)
    t.same(due.map((d) => d.id), [deliveries[1].id, deliveries[2].id], 'due at or before the time, soonest first')
    t.same((await storage.read.webhooks.due('2026-01-02T00:00:00.000Z', 1)).map((d) => d.id), [deliveries[1].id], 'at most limit')
    const page = await storage.read.webhooks.deliveries(two.id, { offset: 0, limit: 2 })
    t.same(page, { items: [deliveries[2], deliveries[1]], total: 3 }, 'newest first, with the total')

    // A delivery that succeeded is due no more; one moved later is due then.
    const done = { ...deliveries[1], status: 'succeeded' as const, next_attempt_at: null, attempts: 1 }
    const later = { ...deliveries[2], next_attempt_at: '2026-01-01T00:00:09.000Z', attempts: 1 }
    await storage.transaction(async (tx) => {
      await tx.webhooks.putDelivery(done)
      await tx.webhooks.putDelivery(later)
    })
    t.same((await storage.read.webhooks.due('2026-01-01T00:00:05.000Z', 10)).map((d) => d.id), [deliveries[0].id])
    t.same((await storage.read.webhooks.due('2026-01-01T00:00:09.000Z', 10)).map((d) => d.id), [deliveries[0].id, later.id])
    t.same(await storage.read.webhooks.delivery(done.id), done)

    t.equal(await storage.transaction((tx) => tx.webhooks.removeEndpoint(two.id)), true)
    t.equal(await storage.transaction((tx) => tx.webhooks.removeEndpoint(two.id)), false, 'already gone')
    t.same(await storage.read.webhooks.deliveries(two.id, { offset: 0, limit: 10 }), { items: [], total: 0 }, 'its deliveries went with it')
    t.same(await storage.read.webhooks.due('2026-02-01T00:00:00.000Z', 10), [], 'and are due no more')
    t.same((await storage.read.webhooks.endpoints(beta.id)).map((e) => e.id), [theirs.id], "other organizations' are untouched")
  })

  t.test('results: lint findings and diffs kept by the checksums they were computed from', async (t) => {
    const storage = await open(t)
    const [ruleset, document, other] = ['a', 'b', 'c'].map((c) => `sha256:${c.repeat(64)}`)
    const findings = [{ code: 'info-contact', message: 'Info object must have "contact" object.', severity: 'warn', path: ['info'] }]
    t.equal(await storage.read.results.lint(ruleset, document), undefined)
    await storage.transaction((tx) => tx.results.putLint(ruleset, document, findings as never))
    t.same(await storage.read.results.lint(ruleset, document), findings)
    t.equal(await storage.read.results.lint(ruleset, other), undefined, 'another document')
    await storage.transaction((tx) => tx.results.putLint(ruleset, other, []))
    t.same(await storage.read.results.lint(ruleset, other), [], 'no finding is a result too')
    // The same key again (two processes computed it at once): the same value, no conflict.
    await Promise.all([1, 2].map(() => storage.transaction((tx) => tx.results.putLint(ruleset, document, findings as never))))
    t.same(await storage.read.results.lint(ruleset, document), findings)

    const diff = { entries: [], counts: { breaking: 0, 'non-breaking': 0, annotation: 0 } }
    t.equal(await storage.read.results.diff('openapi/1', document, other), undefined)
    await storage.transaction((tx) => tx.results.putDiff('openapi/1', document, other, diff as never))
    t.same(await storage.read.results.diff('openapi/1', document, other), diff)
    t.equal(await storage.read.results.diff('openapi/1', other, document), undefined, 'a diff has a direction')
    t.equal(await storage.read.results.diff('openapi/2', document, other), undefined, 'and a method')
  })

  t.test('sessions: by hash, replaced in place, expired ones listed oldest first', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const session = (expiresAt: string) => ({ key_id: newId(), organization_id: acme.id, created_at: now(), expires_at: expiresAt })
    const [a, b, c] = ['a', 'b', 'c'].map((x) => x.repeat(64))
    await storage.transaction(async (tx) => {
      await tx.sessions.put(a, session('2026-01-01T00:00:02.000Z'))
      await tx.sessions.put(b, session('2026-01-01T00:00:01.000Z'))
      await tx.sessions.put(c, session('2026-01-03T00:00:00.000Z'))
    })
    t.match(await storage.read.sessions.get(a), { expires_at: '2026-01-01T00:00:02.000Z' })
    t.same(await storage.read.sessions.expired('2026-01-02T00:00:00.000Z', 10), [b, a], 'expired at or before, oldest first')
    t.same(await storage.read.sessions.expired('2026-01-01T00:00:01.000Z', 10), [b], 'at the time itself')
    t.same(await storage.read.sessions.expired('2026-01-02T00:00:00.000Z', 1), [b], 'at most limit')
    // Extended: listed by its new expiry only.
    await storage.transaction((tx) => tx.sessions.put(b, session('2026-01-05T00:00:00.000Z')))
    t.same(await storage.read.sessions.expired('2026-01-02T00:00:00.000Z', 10), [a])
    t.equal(await storage.transaction((tx) => tx.sessions.remove(a)), true)
    t.equal(await storage.transaction((tx) => tx.sessions.remove(a)), false, 'already gone')
    t.equal(await storage.read.sessions.get(a), undefined)
    t.same(await storage.read.sessions.expired('2026-02-01T00:00:00.000Z', 10), [c, b])
  })

  t.test("versions: an organization's latest across its resources, newest first, deleted resources' left out", async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const beta = await withOrganization(storage, 'beta')
    const [shop, pets, gone] = await Promise.all(['shop', 'pets', 'gone'].map((name) => created(storage, resource(acme.id, name))))
    const theirs = await created(storage, resource(beta.id, 'theirs'))
    const order: VersionRecord[] = []
    for (const api of [shop, gone, pets, gone, shop, theirs, gone]) order.push(await storage.transaction((tx) => appendNext(tx, api.id)))
    await storage.transaction((tx) => tx.resources.remove(gone.id))
    const mine = order.filter((v) => v.resource_id !== gone.id && v.organization_id === acme.id).reverse()
    t.same((await storage.read.versions.recent(acme.id, 10)).map((v) => v.id), mine.map((v) => v.id))
    t.same((await storage.read.versions.recent(acme.id, 2)).map((v) => v.id), mine.slice(0, 2).map((v) => v.id), 'at most limit, past the deleted ones')
    t.same((await storage.read.versions.recent(beta.id, 10)).map((v) => v.resource_id), [theirs.id])
  })

  t.test('versions: every stored version scanned a page at a time, by resource then number', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const beta = await withOrganization(storage, 'beta')
    const apis = await Promise.all([resource(acme.id, 'one'), resource(acme.id, 'two'), resource(beta.id, 'three')].map((r) => created(storage, r)))
    const gone = await created(storage, resource(acme.id, 'gone'))
    for (const api of [...apis, gone, apis[0], apis[2], apis[0]]) await storage.transaction((tx) => appendNext(tx, api.id))
    await storage.transaction((tx) => tx.resources.remove(gone.id))
    const scanned: VersionRecord[] = []
    for (let page: VersionRecord[] = []; ;) {
      page = await storage.read.versions.scan(scanned.at(-1), 2)
      scanned.push(...page)
      if (page.length < 2) break
    }
    const expected = apis.map((api) => api.id).sort().flatMap((id) => ({ [apis[0].id]: [1, 2, 3], [apis[1].id]: [1], [apis[2].id]: [1, 2] })[id].map((n) => `${id}#${n}`))
    t.same(scanned.map((v) => `${v.resource_id}#${v.number}`), expected, 'each once, in order, the removed resource\'s none')
    t.same(await storage.read.versions.scan(undefined, 0), [], 'a page of none')
  })

  t.test('blobs are content-addressed: stored once, read back byte for byte', async (t) => {
    const storage = await open(t)
    const text = '{"openapi":"3.1.0"}'
    const ref: BlobRef = {
      checksum: `sha256:${'c'.repeat(64)}`, digest: createHash('sha256').update(text).digest('hex'), format: 'json',
    }
    t.equal(await storage.blobs.has(ref), false)
    t.same(await storage.blobs.put(ref, text), { created: true, size: text.length })
    t.same(await storage.blobs.put(ref, text), { created: false, size: text.length })
    t.equal(await storage.blobs.has(ref), true)
    t.equal((await storage.blobs.get(ref)).toString('utf8'), text)
  })
  siteContract(t, open)
  sdkContract(t, open)
  repositoryContract(t, open)
  tallyContract(t, open)
  mirrorContract(t, open)
  secretContract(t, open)
}
