/**
 * An existing `./storage` is read as it is. The records below are written raw into
 * `<storage>/index/registry.mdb`, under the database names and keys the registry has always used
 * (spelled out here, not taken from layout.ts, so that a change of layout fails this test); the port's
 * LMDB adapter reads them, extends them, and what it writes is found under the same keys.
 */
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { open, type RootDatabase } from 'lmdb'
import { LmdbStorage } from '../../../src/storage/lmdb/storage.js'
import { historyEntry, type JournalChange, type KeyRecord, type ResourceRecord, type VersionRecord } from '../../../src/storage/records.js'
import { tempDir } from '../../temp.js'
import { appendNext, organization, resource, version } from '../contract/contract.js'
import { mirroredVersions } from '../../support/stored.js'

type Key = string | number | (string | number)[]

function openExisting(storage: string): RootDatabase<any, Key> {
  return open<any, Key>({ path: join(storage, 'index', 'registry.mdb'), maxDbs: 64 })
}

/** A resource's records, as the registry wrote them on create and on each version. */
function writeResource(root: RootDatabase<any, Key>, record: ResourceRecord, versions: VersionRecord[], currentAsId = false): void {
  const db = (name: string) => root.openDB<any, Key>({ name })
  const org = record.organization_id
  const stored = { ...record, last_number: versions.length }
  db('resources').put(record.id, stored)
  db('resource-slugs').put([org, record.kind, record.slug], record.id)
  for (const scope of record.visibility === 'public' ? ['all', 'public'] : ['all']) {
    db('resource-names').put([org, record.kind, scope, record.name, record.id], null)
    db('counts').put([org, record.kind, scope], (db('counts').get([org, record.kind, scope]) ?? 0) + 1)
  }
  if (record.kind === 'api' && record.ruleset_id) db('ruleset-apis').put([record.ruleset_id, record.id], null)
  for (const v of versions) {
    db('versions').put([record.id, v.number], v)
    db('version-ids').put(v.id, [record.id, v.number])
    db('organization-versions').put([org, v.id], [record.id, v.number])
    db('valid-documents').put([v.kind, v.checksum], true)
    const tally = ['versions-written', v.kind, v.source]
    db('tallies').put(tally, (db('tallies').get(tally) ?? 0) + 1)
  }
  // The current version's record; storage written before that kept its id.
  const current = versions.at(-1)
  if (current) db('current').put(record.id, currentAsId ? current.id : current)
}

/** A journal entry and its history entry, numbered by `mirror-meta` 'seq'. */
function journal(root: RootDatabase<any, Key>, organizationId: string, change: Exclude<JournalChange, { change: 'rebuild' }>): number {
  const meta = root.openDB<any, Key>({ name: 'mirror-meta' })
  const seq = (meta.get('seq') ?? 0) + 1
  meta.put('seq', seq)
  const at = new Date(Date.UTC(2025, 0, 1, 0, 0, seq)).toISOString()
  root.openDB<any, Key>({ name: 'mirror-journal' }).put(seq, { ...change, seq, organization_id: organizationId, at })
  root.openDB<any, Key>({ name: 'mirror-history' }).put([organizationId, seq], historyEntry(seq, at, change))
  return seq
}

t.test('a storage written as the registry always wrote it is read and extended by the LMDB adapter, under the same keys', async (t) => {
  const directory = tempDir()
  t.teardown(() => rmSync(directory, { recursive: true, force: true }))
  const org = organization('acme')
  const key: KeyRecord = {
    id: `${org.id.slice(0, 25)}K`, organization_id: org.id, name: null, hash: 'f'.repeat(64),
    created_at: org.created_at, last_used_at: null, revoked_at: null,
  }
  const rules = resource(org.id, 'Rules', { kind: 'ruleset' })
  const shop = resource(org.id, 'Shop', { visibility: 'public', ruleset_id: rules.id })
  const pet = resource(org.id, 'Pet', { kind: 'schema' })
  const rulesV1 = version(rules, 1, `sha256:${'1'.repeat(64)}`)
  const shopV1 = version(shop, 1, `sha256:${'2'.repeat(64)}`)
  const shopV2 = version(shop, 2, `sha256:${'3'.repeat(64)}`)
  const petV1 = version(pet, 1, `sha256:${'4'.repeat(64)}`)

  const raw = openExisting(directory)
  await raw.transaction(() => {
    raw.openDB<any, Key>({ name: 'organizations' }).put(org.id, org)
    raw.openDB<any, Key>({ name: 'organization-slugs' }).put(org.slug, org.id)
    raw.openDB<any, Key>({ name: 'keys' }).put(key.id, key)
    raw.openDB<any, Key>({ name: 'key-hashes' }).put(key.hash, key.id)
    writeResource(raw, rules, [rulesV1])
    writeResource(raw, shop, [shopV1, shopV2])
    writeResource(raw, pet, [petV1], true)
    const stored = (record: ResourceRecord, last: number) => ({ ...record, last_number: last })
    journal(raw, org.id, { change: 'create', resource: stored(rules, 0) })
    journal(raw, org.id, { change: 'version', resource: stored(rules, 1), version: rulesV1 })
    journal(raw, org.id, { change: 'create', resource: stored(shop, 0) })
    journal(raw, org.id, { change: 'version', resource: stored(shop, 1), version: shopV1 })
    journal(raw, org.id, { change: 'version', resource: stored(shop, 2), version: shopV2 })
    journal(raw, org.id, { change: 'create', resource: stored(pet, 0) })
    journal(raw, org.id, { change: 'version', resource: stored(pet, 1), version: petV1 })
    // The mirror writer applied the first five: they left the journal, their history stays.
    for (const seq of [1, 2, 3, 4, 5]) raw.openDB<any, Key>({ name: 'mirror-journal' }).remove(seq)
  })
  await raw.close()

  const storage = new LmdbStorage(directory)
  const read = storage.read
  t.same(await read.organizations.bySlug('acme'), org)
  t.same(await read.keys.byHash(key.hash), key)
  t.same(await read.resources.bySlug(org.id, 'api', 'shop'), { ...shop, last_number: 2 })
  t.same(await read.resources.list(org.id, 'api', { offset: 0, limit: 10 }, true), { items: [{ ...shop, last_number: 2 }], total: 1 })
  t.same(await read.resources.list(org.id, 'schema', { offset: 0, limit: 10 }, true), { items: [], total: 0 })
  t.equal((await read.resources.list(org.id, 'schema', { offset: 0, limit: 10 })).total, 1)
  t.equal(await read.resources.countApisUsingRuleset(rules.id), 1)
  t.same(await read.versions.current(shop.id), shopV2)
  t.same(await read.versions.current(pet.id), petV1, 'a current version kept as its id')
  t.same(await read.versions.byId(shopV1.id), shopV1)
  t.same(await read.versions.list(shop.id, { offset: 0, limit: 10 }), { items: [shopV2, shopV1], total: 2 })
  t.equal(await read.versions.isKnownValid('api', shopV1.checksum), true)
  t.same((await read.versions.recent(org.id, 10)).map((v) => v.id), [petV1, shopV2, shopV1, rulesV1].map((v) => v.id), 'the overview, newest first')
  const tallies = await read.tallies.get()
  t.equal(tallies.versions, 4)
  t.same(tallies.versionsWritten.sort((a, b) => a.kind.localeCompare(b.kind)), [
    { kind: 'api', source: 'upload', count: 2 }, { kind: 'ruleset', source: 'upload', count: 1 }, { kind: 'schema', source: 'upload', count: 1 },
  ])
  t.same((await read.mirror.pending(10)).map((entry) => [entry.seq, entry.change]), [[6, 'create'], [7, 'version']])
  t.equal(await read.mirror.lastSeq(org.id), 7)
  t.same((await mirroredVersions(read)).map((v) => v.id), [rulesV1, shopV1, shopV2, petV1].map((v) => v.id))

  // The adapter extends it: a version, a rename made public, a new API, each journaled as the domain does.
  const shopV3 = await storage.transaction((tx) => appendNext(tx, shop.id))
  const pets = { ...pet, name: 'Pets', slug: 'pets', visibility: 'public' as const, last_number: 1, updated_at: new Date().toISOString() }
  const other = resource(org.id, 'Other')
  await storage.transaction(async (tx) => {
    await tx.resources.update(pets)
    await tx.mirror.append(org.id, pets.updated_at, { change: 'update', before: { ...pet, last_number: 1 }, resource: pets })
    await tx.resources.create(other)
    await tx.mirror.append(org.id, other.created_at, { change: 'create', resource: other })
  })
  await storage.close()

  const after = openExisting(directory)
  t.teardown(() => after.close())
  const db = (name: string) => after.openDB<any, Key>({ name })
  t.same(db('versions').get([shop.id, 3]), shopV3)
  t.same(db('version-ids').get(shopV3.id), [shop.id, 3])
  t.same(db('current').get(shop.id), shopV3, 'the current version as a record')
  t.equal(db('resources').get(shop.id).last_number, 3)
  t.same(db('organization-versions').get([org.id, shopV3.id]), [shop.id, 3])
  t.equal(db('valid-documents').get(['api', shopV3.checksum]), true)
  t.equal(db('tallies').get(['versions-written', 'api', 'upload']), 3)
  t.equal(db('resource-slugs').get([org.id, 'schema', 'pets']), pet.id)
  t.equal(db('resource-slugs').get([org.id, 'schema', 'pet']), undefined, 'the old slug is free')
  t.equal(db('resource-names').get([org.id, 'schema', 'public', 'Pets', pet.id]), null)
  t.equal(db('resource-names').get([org.id, 'schema', 'all', 'Pet', pet.id]), undefined, 'the old name left the listing')
  t.equal(db('counts').get([org.id, 'schema', 'public']), 1)
  t.equal(db('counts').get([org.id, 'api', 'all']), 2)
  t.equal(db('resource-slugs').get([org.id, 'api', 'other']), other.id)
  t.equal(db('mirror-meta').get('seq'), 10, 'the journal\'s sequence continued')
  t.same([...db('mirror-journal').getKeys()], [6, 7, 8, 9, 10])
  t.same([8, 9, 10].map((seq) => db('mirror-history').get([org.id, seq]).change), ['version', 'update', 'create'])
})
