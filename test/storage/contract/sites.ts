/** The port's sites section, run against every adapter by contract.ts. */
import type { Test } from 'tap'
import { newId, now } from '../../../src/domain/resources/ids.js'
import type { Storage, Stores } from '../../../src/storage/port.js'
import type { GuideRecord, OrganizationRecord, ResourceRecord, SiteRecord } from '../../../src/storage/records.js'
import type { OpenStorage } from './contract.js'
import { organization, resource } from './contract.js'

const conflict = { code: 'conflict' }
const notFound = { code: 'not_found' }
const page = (offset: number, limit: number) => ({ offset, limit })
const all = page(0, 100)

function site(organizationId: string, name: string, fields: Partial<SiteRecord> = {}): SiteRecord {
  const at = now()
  return {
    id: newId(), organization_id: organizationId, name, slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '-'), title: null,
    api_ids: [], visibility: 'private', domains: [], created_at: at, updated_at: at, ...fields,
  }
}

function guide(of: SiteRecord, slug: string, position: number): GuideRecord {
  const at = now()
  return {
    id: newId(), organization_id: of.organization_id, site_id: of.id, slug, title: slug.toUpperCase(), markdown: `# ${slug}`,
    position, created_at: at, updated_at: at,
  }
}

async function withOrganization(storage: Storage, slug: string): Promise<OrganizationRecord> {
  const org = organization(slug)
  await storage.transaction((tx) => tx.organizations.put(org))
  return org
}

async function api(storage: Storage, org: OrganizationRecord, name: string, kind: ResourceRecord['kind'] = 'api'): Promise<ResourceRecord> {
  const record = resource(org.id, name, { kind })
  await storage.transaction((tx) => tx.resources.create(record))
  return record
}

async function created(storage: Storage, record: SiteRecord): Promise<SiteRecord> {
  await storage.transaction((tx) => tx.sites.create(record))
  return record
}

/** What the domain does inside its transaction for a derived slug: the first free of slug, slug-2, slug-3… */
async function createWithFreeSlug(tx: Stores, record: SiteRecord): Promise<SiteRecord> {
  let slug = record.slug
  for (let n = 2; await tx.sites.bySlug(record.organization_id, slug); n++) slug = `${record.slug}-${n}`
  const free = { ...record, slug }
  await tx.sites.create(free)
  return free
}

export function siteContract(t: Test, open: OpenStorage): void {
  t.test('sites: by id and slug, one slug per organization, listed by name (ties by id) with the total', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const beta = await withOrganization(storage, 'beta')
    const names = ['delta', 'alpha', 'charlie', 'bravo']
    const sites: SiteRecord[] = []
    for (const name of names) sites.push(await created(storage, site(acme.id, name)))
    const twin = await created(storage, site(acme.id, 'alpha', { slug: 'alpha-2' }))
    await created(storage, site(beta.id, 'delta'))
    t.same(await storage.read.sites.get(sites[0].id), sites[0])
    t.same(await storage.read.sites.bySlug(acme.id, 'charlie'), sites[2])
    t.equal(await storage.read.sites.bySlug(acme.id, 'nope'), undefined)
    t.equal((await storage.read.sites.bySlug(beta.id, 'delta'))?.organization_id, beta.id, 'the same slug in another organization')

    await t.rejects(storage.transaction((tx) => tx.sites.create(site(acme.id, 'Delta'))), {
      ...conflict, message: "slug 'delta' is already used by another site",
    })
    await t.rejects(storage.transaction((tx) => tx.sites.create(site(newId(), 'x'))), notFound, 'no such organization')
    await t.rejects(storage.transaction((tx) => tx.sites.create({ ...sites[1], slug: 'fresh' })), conflict, 'an id is created once')

    const listed = await storage.read.sites.list(acme.id, all)
    t.equal(listed.total, 5)
    const alphas = [sites[1].id, twin.id].sort()
    t.same(listed.items.map((s) => s.id), [...alphas, sites[3].id, sites[2].id, sites[0].id], 'by name, ties by id')
    t.same(await storage.read.sites.list(acme.id, page(1, 2)), { items: listed.items.slice(1, 3), total: 5 })
    t.same(await storage.read.sites.list(acme.id, page(9, 2)), { items: [], total: 5 }, 'past the end: the total only')
    t.same(await storage.read.sites.list(newId(), all), { items: [], total: 0 })
  })

  t.test('sites: a derived slug decided in the transaction gets -2, -3…; concurrent creates never share a slug', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const first = await storage.transaction((tx) => createWithFreeSlug(tx, site(acme.id, 'Docs')))
    const second = await storage.transaction((tx) => createWithFreeSlug(tx, site(acme.id, 'Docs')))
    t.same([first.slug, second.slug], ['docs', 'docs-2'])
    const seen = await storage.transaction(async (tx) => {
      const third = await createWithFreeSlug(tx, site(acme.id, 'Docs'))
      return { third, read: await tx.sites.bySlug(acme.id, 'docs-3') }
    })
    t.same(seen.read, seen.third, 'a transaction reads its own writes')

    const outcomes = await Promise.allSettled(Array.from({ length: 4 }, () =>
      storage.transaction((tx) => createWithFreeSlug(tx, site(acme.id, 'Guide')))))
    const slugs = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.slug] : []))
    for (const o of outcomes) if (o.status === 'rejected') t.match(o.reason, conflict, 'a writer that lost too often is told conflict')
    t.ok(slugs.length >= 1)
    t.equal(new Set(slugs).size, slugs.length, 'no slug twice')
    const stored = (await storage.read.sites.list(acme.id, all)).items.filter((s) => s.name === 'Guide').map((s) => s.slug).sort()
    t.same(stored, [...slugs].sort())
  })

  t.test('sites: a domain belongs to one site of the whole registry', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const beta = await withOrganization(storage, 'beta')
    const a = await created(storage, site(acme.id, 'a', { domains: ['docs.acme.example', 'api.acme.example'] }))
    await t.rejects(storage.transaction((tx) => tx.sites.create(site(beta.id, 'b', { domains: ['docs.beta.example', 'api.acme.example'] }))), {
      ...conflict, message: "domain 'api.acme.example' is already used by another site",
      errors: [{ path: ['domains', 1], message: 'this domain belongs to another site' }],
    }, 'another organization cannot take it either')
    t.same(await storage.read.sites.list(beta.id, all), { items: [], total: 0 }, 'a refused create stores nothing')
    const b = await created(storage, site(beta.id, 'b', { domains: ['docs.beta.example'] }))
    t.same(await storage.read.sites.domains(), [['api.acme.example', a.id], ['docs.acme.example', a.id], ['docs.beta.example', b.id]], 'in domain order')

    // Refused: the slug was free, a domain was not; nothing of it is kept.
    await t.rejects(storage.transaction((tx) => tx.sites.update({ ...b, slug: 'renamed', domains: ['www.beta.example', 'docs.acme.example'] })), {
      ...conflict, errors: [{ path: ['domains', 1] }],
    })
    t.same(await storage.read.sites.get(b.id), b)
    t.equal(await storage.read.sites.bySlug(beta.id, 'renamed'), undefined)
    await created(storage, site(beta.id, 'c', { slug: 'renamed', domains: ['www.beta.example'] }))
    t.pass('neither the slug nor the domain of the refused update was taken')

    const kept = { ...a, domains: ['docs.acme.example'], updated_at: now() }
    await storage.transaction((tx) => tx.sites.update(kept))
    t.same(await storage.read.sites.get(a.id), kept, 'a site keeps its own domains')
    const moved = { ...b, domains: ['api.acme.example'], updated_at: now() }
    await storage.transaction((tx) => tx.sites.update(moved))
    t.same(new Map(await storage.read.sites.domains()), new Map([
      ['docs.acme.example', a.id], ['api.acme.example', b.id], ['www.beta.example', (await storage.read.sites.bySlug(beta.id, 'renamed'))!.id],
    ]), 'a dropped domain is free; a site loses the domains it no longer lists')

    const outcomes = await Promise.allSettled(['x', 'y', 'z'].map((name) =>
      storage.transaction((tx) => tx.sites.create(site(acme.id, name, { domains: ['contested.example'] })))))
    t.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1, 'concurrent claims of one domain: one wins')
    for (const o of outcomes) if (o.status === 'rejected') t.match(o.reason, conflict)
  })

  t.test('sites: the domain stamp moves with every committed change of the domain map, and only then', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const stamp = () => storage.read.sites.domainsStamp()
    const start = await stamp()
    const plain = await created(storage, site(acme.id, 'plain'))
    await storage.transaction((tx) => tx.sites.putGuide(guide(plain, 'intro', 0)))
    t.equal(await stamp(), start, 'a site without domains and a guide leave it')
    const docs = await created(storage, site(acme.id, 'docs', { domains: ['docs.acme.example'] }))
    const afterCreate = await stamp()
    t.not(afterCreate, start, 'a site created with a domain moves it')
    await storage.transaction((tx) => tx.sites.update({ ...docs, name: 'Documentation', updated_at: now() }))
    t.equal(await stamp(), afterCreate, 'an update that keeps the domains leaves it')
    await t.rejects(storage.transaction((tx) => tx.sites.create(site(acme.id, 'thief', { domains: ['docs.acme.example'] }))), conflict)
    t.equal(await stamp(), afterCreate, 'a refused claim of a domain leaves it')
    const moved = { ...docs, name: 'Documentation', domains: ['api.acme.example'], updated_at: now() }
    await storage.transaction((tx) => tx.sites.update(moved))
    const afterMove = await stamp()
    t.not(afterMove, afterCreate, 'a domain moved moves it')
    t.equal(await storage.transaction((tx) => tx.sites.domainsStamp()), afterMove, 'read the same inside a transaction')
    await storage.transaction((tx) => tx.sites.remove(docs.id))
    t.not(await stamp(), afterMove, 'a site removed with its domains moves it')
    t.not(await stamp(), afterCreate, 'never back to a value a replica may hold')
  })

  t.test('sites: api_ids name APIs of the organization; the API → sites index follows them', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const beta = await withOrganization(storage, 'beta')
    const [one, two] = [await api(storage, acme, 'one'), await api(storage, acme, 'two')]
    const schema = await api(storage, acme, 'a schema', 'schema')
    const theirs = await api(storage, beta, 'theirs')
    for (const ids of [[newId()], [schema.id], [theirs.id], [one.id, theirs.id]]) {
      await t.rejects(storage.transaction((tx) => tx.sites.create(site(acme.id, 'docs', { api_ids: ids }))), {
        code: 'invalid_reference', message: `api_ids: 1 of ${ids.length} name no API of this organization`,
        errors: [{ path: ['api_ids', ids.length - 1], message: `'${ids.at(-1)}' names no API of this organization` }],
      }, ids.join(','))
    }
    t.equal((await storage.read.sites.list(acme.id, all)).total, 0, 'nothing stored')

    const x = await created(storage, site(acme.id, 'x', { api_ids: [one.id, two.id] }))
    const y = await created(storage, site(acme.id, 'y', { api_ids: [two.id] }))
    t.same(await storage.read.sites.listing(two.id), [x.id, y.id].sort(), 'in id order')
    t.same(await storage.read.sites.listing(one.id), [x.id])
    await t.rejects(storage.transaction((tx) => tx.sites.update({ ...x, api_ids: [one.id, theirs.id] })), {
      code: 'invalid_reference', errors: [{ path: ['api_ids', 1] }],
    })
    t.same(await storage.read.sites.get(x.id), x, 'a refused update changes nothing')
    const reordered = { ...x, api_ids: [two.id], updated_at: now() }
    await storage.transaction((tx) => tx.sites.update(reordered))
    t.same(await storage.read.sites.listing(one.id), [], 'an API the site no longer lists')
    t.same(await storage.read.sites.listing(two.id), [x.id, y.id].sort())
  })

  t.test("sites: an API's delete drops it from every site listing it, in the delete's transaction", async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const [one, two] = [await api(storage, acme, 'one'), await api(storage, acme, 'two')]
    const x = await created(storage, site(acme.id, 'x', { api_ids: [one.id, two.id] }))
    const y = await created(storage, site(acme.id, 'y', { api_ids: [two.id] }))
    const z = await created(storage, site(acme.id, 'z', { api_ids: [one.id] }))
    const at = '2030-01-01T00:00:00.000Z'
    await storage.transaction(async (tx) => {
      await tx.sites.dropApi(two.id, at)
      await tx.resources.remove(two.id)
    })
    t.same(await storage.read.sites.get(x.id), { ...x, api_ids: [one.id], updated_at: at })
    t.same(await storage.read.sites.get(y.id), { ...y, api_ids: [], updated_at: at })
    t.same(await storage.read.sites.get(z.id), z, 'a site not listing it is untouched')
    t.same(await storage.read.sites.listing(two.id), [])
    // The other order in one transaction, as a delete may write them.
    await storage.transaction(async (tx) => {
      await tx.resources.remove(one.id)
      await tx.sites.dropApi(one.id, at)
    })
    t.same((await storage.read.sites.get(z.id))?.api_ids, [])
    await storage.transaction((tx) => tx.sites.dropApi(newId(), at))
    t.pass('an API no site lists: nothing to do')
  })

  t.test('sites: an update moves slug and listing; a removal takes guides, slug, domains and references with it', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const shop = await api(storage, acme, 'shop')
    const [a, b] = [await created(storage, site(acme.id, 'a')), await created(storage, site(acme.id, 'b'))]
    await t.rejects(storage.transaction((tx) => tx.sites.update({ ...a, slug: 'b' })), {
      ...conflict, message: "slug 'b' is already used by another site",
    })
    const renamed = { ...a, name: 'zzz', slug: 'last', title: 'Last', visibility: 'public' as const, updated_at: now() }
    await storage.transaction((tx) => tx.sites.update(renamed))
    t.same(await storage.read.sites.get(a.id), renamed)
    t.equal(await storage.read.sites.bySlug(acme.id, 'a'), undefined, 'the old slug is free')
    t.same(await storage.read.sites.bySlug(acme.id, 'last'), renamed)
    t.same((await storage.read.sites.list(acme.id, all)).items.map((s) => s.id), [b.id, a.id], 'a rename moves it in the listing')
    await t.rejects(storage.transaction((tx) => tx.sites.update(site(acme.id, 'ghost'))), notFound)

    const full = { ...renamed, domains: ['docs.acme.example'], api_ids: [shop.id], updated_at: now() }
    await storage.transaction(async (tx) => {
      await tx.sites.update(full)
      await tx.sites.putGuide(guide(full, 'intro', 0))
      await tx.sites.putGuide(guide(full, 'auth', 1))
    })
    t.same(await storage.transaction((tx) => tx.sites.remove(a.id)), full)
    t.equal(await storage.read.sites.get(a.id), undefined)
    t.equal(await storage.transaction((tx) => tx.sites.remove(a.id)), undefined, 'already gone')
    t.same(await storage.read.sites.list(acme.id, all), { items: [b], total: 1 })
    t.same(await storage.read.sites.domains(), [])
    t.same(await storage.read.sites.listing(shop.id), [])
    t.same(await storage.read.sites.guides(a.id, all), { items: [], total: 0 }, 'its guides went with it')
    t.equal(await storage.read.sites.guide(a.id, 'intro'), undefined)
    await created(storage, site(acme.id, 'again', { slug: 'last', domains: ['docs.acme.example'], api_ids: [shop.id] }))
    t.pass('its slug and domain are free again')
  })

  t.test('guides: by site and slug, listed by position then slug, replaced in place, removed', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const docs = await created(storage, site(acme.id, 'docs'))
    const other = await created(storage, site(acme.id, 'other'))
    t.equal(await storage.read.sites.nextGuidePosition(docs.id), 0, 'no guide yet')
    const [intro, auth, errors, zeta] = [guide(docs, 'intro', 0), guide(docs, 'auth', 1), guide(docs, 'errors', 1), guide(docs, 'zeta', 0)]
    await storage.transaction(async (tx) => {
      for (const g of [intro, auth, errors, zeta]) await tx.sites.putGuide(g)
      await tx.sites.putGuide(guide(other, 'intro', 5))
    })
    t.same(await storage.read.sites.guide(docs.id, 'auth'), auth)
    t.equal(await storage.read.sites.guide(docs.id, 'nope'), undefined)
    const order = async () => (await storage.read.sites.guides(docs.id, all)).items.map((g) => g.slug)
    t.same(await order(), ['intro', 'zeta', 'auth', 'errors'], 'by position, then slug')
    t.equal(await storage.read.sites.nextGuidePosition(docs.id), 2)
    t.equal(await storage.read.sites.nextGuidePosition(other.id), 6)

    const moved = { ...auth, title: 'Authentication', position: 7, updated_at: now() }
    await storage.transaction((tx) => tx.sites.putGuide(moved))
    t.same(await storage.read.sites.guide(docs.id, 'auth'), moved, 'replaced by (site, slug)')
    t.same(await order(), ['intro', 'zeta', 'errors', 'auth'], 'moved, and listed once')
    t.equal(await storage.read.sites.nextGuidePosition(docs.id), 8)
    t.same(await storage.read.sites.guides(docs.id, page(2, 2)), { items: [errors, moved], total: 4 })
    t.same(await storage.read.sites.guides(docs.id, page(4, 2)), { items: [], total: 4 })

    t.equal(await storage.transaction((tx) => tx.sites.removeGuide(docs.id, 'zeta')), true)
    t.equal(await storage.transaction((tx) => tx.sites.removeGuide(docs.id, 'zeta')), false, 'already gone')
    t.same(await order(), ['intro', 'errors', 'auth'])
    t.equal((await storage.read.sites.guides(docs.id, all)).total, 3)
    t.same((await storage.read.sites.guides(other.id, all)).items.map((g) => g.slug), ['intro'], "another site's guides are its own")
    await t.rejects(storage.transaction((tx) => tx.sites.putGuide(guide(site(acme.id, 'ghost'), 'x', 0))), notFound, 'no such site')
  })

  t.test('guides: concurrent new guides of one site, each placed after the others, get distinct positions', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const docs = await created(storage, site(acme.id, 'docs'))
    const outcomes = await Promise.allSettled(['a', 'b', 'c', 'd'].map((slug) => storage.transaction(async (tx) => {
      const placed = guide(docs, slug, await tx.sites.nextGuidePosition(docs.id))
      await tx.sites.putGuide(placed)
      return placed.position
    })))
    const positions = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : [])).sort((a, b) => a - b)
    for (const o of outcomes) if (o.status === 'rejected') t.match(o.reason, conflict)
    t.same(positions, Array.from({ length: positions.length }, (_, i) => i), '0, 1, 2… with no position twice')
  })
}
