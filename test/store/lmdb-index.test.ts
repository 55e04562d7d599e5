import { rmSync } from 'node:fs'
import t from 'tap'
import { keys } from '../../src/store/layout.js'
import { LmdbIndex } from '../../src/store/lmdb-index.js'
import type { ResourceRecord, VersionRecord } from '../../src/store/records.js'
import { newId, now } from '../../src/domain/ids.js'
import { tempDir } from '../temp.js'

function openIndex(t: { teardown(fn: () => unknown): void }) {
  const dir = tempDir()
  const index = new LmdbIndex(dir)
  t.teardown(async () => {
    await index.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return index
}

const org = newId()
function resource(name: string, kind: ResourceRecord['kind'] = 'api', visibility: ResourceRecord['visibility'] = 'private'): ResourceRecord {
  const at = now()
  return { id: newId(), organization_id: org, kind, name, slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '-'), visibility, description: null, created_at: at, updated_at: at, last_number: 0 }
}
function version(res: ResourceRecord, number: number, checksum: string): VersionRecord {
  return { id: newId(), kind: res.kind, resource_id: res.id, organization_id: res.organization_id, number, checksum, digest: '0'.repeat(64), source: 'upload', restored_from: null, size: 1, format: 'json', created_at: now() }
}

t.test('key layouts order names within one organization, kind and scope', async (t) => {
  const range = keys.resourceNameRange(org, 'api', 'all')
  t.same(range.start, [org, 'api', 'all'])
  t.same(keys.resourceName(org, 'api', 'all', 'b', 'ID'), [org, 'api', 'all', 'b', 'ID'])
  t.same(keys.version('R', 3), ['R', 3])
  t.same(keys.lintResult('sha256:a', 'sha256:b'), ['sha256:a', 'sha256:b'])
})

t.test('lists by name, ties by id, with totals per scope', async (t) => {
  const index = openIndex(t)
  const names = ['delta', 'alpha', 'charlie', 'bravo', 'alpha']
  for (const name of names) await index.createResource(resource(name, 'api', name === 'bravo' ? 'public' : 'private'), 'derived')
  await index.createResource(resource('zulu', 'schema'), 'derived')
  const page = index.listResources(org, 'api', { offset: 0, limit: 10 })
  t.equal(page.total, 5)
  t.same(page.items.map((r) => r.name), ['alpha', 'alpha', 'bravo', 'charlie', 'delta'])
  t.ok(page.items[0].id < page.items[1].id, 'equal names are ordered by id')
  t.same(page.items.map((r) => r.slug).slice(0, 2).sort(), ['alpha', 'alpha-2'], 'a derived slug that is taken gets -2')
  t.same(index.listResources(org, 'api', { offset: 3, limit: 10 }).items.map((r) => r.name), ['charlie', 'delta'])
  t.same(index.listResources(org, 'api', { offset: 10, limit: 10 }), { items: [], total: 5 })
  const pub = index.listResources(org, 'api', { offset: 0, limit: 10 }, true)
  t.same(pub.items.map((r) => r.name), ['bravo'])
  t.equal(pub.total, 1)
  t.equal(index.listResources(org, 'schema', { offset: 0, limit: 10 }).total, 1)
})

t.test('renames and visibility changes keep listings and counts right', async (t) => {
  const index = openIndex(t)
  const a = (await index.createResource(resource('a'), 'derived')).resource
  await index.createResource(resource('b'), 'derived')
  await index.updateResource(a.id, (r) => ({ ...r, name: 'z', visibility: 'public' }))
  t.same(index.listResources(org, 'api', { offset: 0, limit: 10 }).items.map((r) => r.name), ['b', 'z'])
  t.equal(index.listResources(org, 'api', { offset: 0, limit: 10 }, true).total, 1)
})

t.test('an explicit slug that is taken conflicts', async (t) => {
  const index = openIndex(t)
  await index.createResource(resource('same'), 'explicit')
  await t.rejects(index.createResource(resource('same'), 'explicit'), { code: 'conflict' })
  const other = (await index.createResource(resource('other'), 'explicit')).resource
  await t.rejects(index.updateResource(other.id, (r) => ({ ...r, slug: 'same' })), { code: 'conflict' })
  t.equal(index.getResource(other.id)?.slug, 'other', 'nothing changed')
})

t.test('concurrent appends get consecutive numbers and the newest is current', async (t) => {
  const index = openIndex(t)
  const res = (await index.createResource(resource('api'), 'derived')).resource
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
    index.appendVersion(res.id, (r, _current, n) => ({ version: version(r, n, `sha256:${String(i).padStart(64, '0')}`) }))))
  t.same(results.map((r) => r.version.number).sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i + 1))
  const listed = index.listVersions(res.id, { offset: 0, limit: 100 })
  t.equal(listed.total, 20)
  t.same(listed.items.map((v) => v.number), Array.from({ length: 20 }, (_, i) => 20 - i), 'newest first')
  t.equal(index.getCurrentVersion(res.id)?.number, 20)
  t.equal(index.getResource(res.id)?.last_number, 20)
})

t.test('an unchanged append writes nothing', async (t) => {
  const index = openIndex(t)
  const res = (await index.createResource(resource('api'), 'derived')).resource
  const first = await index.appendVersion(res.id, (r, _c, n) => ({ version: version(r, n, 'sha256:1') }))
  const again = await index.appendVersion(res.id, (_r, current) => ({ unchanged: current! }))
  t.equal(again.created, false)
  t.equal(again.version.id, first.version.id)
  t.equal(index.listVersions(res.id, { offset: 0, limit: 10 }).total, 1)
})

t.test('ruleset users are tracked through create and update', async (t) => {
  const index = openIndex(t)
  const rs = (await index.createResource(resource('rs', 'ruleset'), 'derived')).resource
  const api = (await index.createResource({ ...resource('api'), ruleset_id: rs.id }, 'derived')).resource
  t.equal(index.countApisUsingRuleset(rs.id), 1)
  await index.updateResource(api.id, (r) => ({ ...r, ruleset_id: null }))
  t.equal(index.countApisUsingRuleset(rs.id), 0)
  await index.updateResource(api.id, (r) => ({ ...r, ruleset_id: rs.id }))
  t.equal(index.countApisUsingRuleset(rs.id), 1)
})

t.test('a change that throws part-way commits none of its writes', async (t) => {
  const index = openIndex(t)
  const extra = index.database('test-scratch')
  await t.rejects(index.transaction(() => {
    extra.put('written-before-the-throw', true)
    throw new Error('refused')
  }), { message: 'refused' })
  t.equal(extra.get('written-before-the-throw'), undefined, 'the write before the throw was undone')
})
