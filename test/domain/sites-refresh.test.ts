/**
 * The sites' in-memory domain map follows domain changes committed past it (by another replica, or the
 * CLI on LMDB): here written straight through the storage port, which this `Sites` does not see, and
 * found after `refreshed()`, on LMDB and on PostgreSQL (reading the stamp per call, as a replica does
 * while its listening session is down). On PostgreSQL with the session up, found once the change's
 * notification arrives, without a read per call. test/process/replicas.test.ts does the same through
 * three real replicas.
 */
import { rmSync } from 'node:fs'
import t, { type Test } from 'tap'
import { newId, now } from '../../src/domain/resources/ids.js'
import { Sites } from '../../src/domain/sites/sites.js'
import { LmdbStorage } from '../../src/storage/lmdb/storage.js'
import type { Storage } from '../../src/storage/port.js'
import { PostgresStorage } from '../../src/storage/postgres/storage.js'
import type { SiteRecord } from '../../src/storage/records.js'
import { postgresForFile } from '../support/postgres.js'
import { tempDir } from '../temp.js'

/** `storage` without its change notifications: every `refreshed()` reads the stamp. */
function unwatched(storage: Storage): Storage {
  const plain = Object.create(storage) as Storage & { watchSiteDomains?: unknown }
  plain.watchSiteDomains = undefined
  return plain
}

async function domainMapFollows(t: Test, storage: Storage): Promise<void> {
  const at = now()
  const org = { id: newId(), slug: `acme-${at.replace(/\D/g, '')}`, name: 'Acme', created_at: at, updated_at: at }
  await storage.transaction((tx) => tx.organizations.put(org))
  const sites = new Sites(storage)
  t.teardown(() => sites.close())
  await sites.load()
  t.equal(sites.siteForHost('docs.acme.test'), undefined)

  // Written past this Sites, as another process would.
  const site: SiteRecord = {
    id: newId(), organization_id: org.id, name: 'Docs', slug: 'docs', title: null, api_ids: [], visibility: 'public',
    domains: ['docs.acme.test'], created_at: at, updated_at: at,
  }
  await storage.transaction((tx) => tx.sites.create(site))
  t.equal(sites.siteForHost('docs.acme.test'), undefined, 'not seen before a refresh (the memo remembered "no site")')
  await sites.refreshed()
  t.equal(sites.siteForHost('docs.acme.test'), site.id, 'seen after one')
  t.equal(sites.siteForHost('Docs.Acme.test:8080'), site.id)

  // Many requests at once while a change commits: each call made after the commit sees it.
  const before = Array.from({ length: 10 }, () => sites.refreshed())
  await storage.transaction((tx) => tx.sites.update({ ...site, domains: ['www.acme.test'], updated_at: now() }))
  const after = Array.from({ length: 10 }, () => sites.refreshed())
  await Promise.all([...before, ...after])
  t.equal(sites.siteForHost('www.acme.test'), site.id, 'the moved domain routes')
  t.equal(sites.siteForHost('docs.acme.test'), undefined, 'the old one no longer does')

  await storage.transaction((tx) => tx.sites.remove(site.id))
  await sites.refreshed()
  t.equal(sites.siteForHost('www.acme.test'), undefined, 'a removed site routes nowhere')
}

t.test('LMDB', async (t) => {
  const directory = tempDir()
  const storage = new LmdbStorage(directory)
  t.teardown(async () => {
    await storage.close()
    rmSync(directory, { recursive: true, force: true })
  })
  await domainMapFollows(t, storage)
})

t.test('PostgreSQL, reading the stamp per call', async (t) => {
  const server = await postgresForFile(t)
  if (!server) return
  const storage = await PostgresStorage.open(await server.createDatabase())
  t.teardown(() => storage.close())
  await domainMapFollows(t, unwatched(storage))
})

t.test('PostgreSQL, listening for changes', async (t) => {
  const server = await postgresForFile(t)
  if (!server) return
  const storage = await PostgresStorage.open(await server.createDatabase())
  t.teardown(() => storage.close())
  const at = now()
  const org = { id: newId(), slug: 'acme', name: 'Acme', created_at: at, updated_at: at }
  await storage.transaction((tx) => tx.organizations.put(org))
  const sites = new Sites(storage)
  t.teardown(() => sites.close())
  await sites.load()
  const reads = countStampReads(storage)
  const routesWithin = async (host: string, siteId: string | undefined) => {
    const deadline = Date.now() + 5000
    for (;;) {
      await sites.refreshed()
      if (sites.siteForHost(host) === siteId || Date.now() > deadline) return sites.siteForHost(host)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  }
  // Once its session listens (and one check followed), calls read nothing while nothing changes.
  const deadline = Date.now() + 10_000
  do {
    await new Promise((resolve) => setTimeout(resolve, 50))
    await sites.refreshed()
    reads.count = 0
    await Promise.all(Array.from({ length: 20 }, () => sites.refreshed()))
  } while (reads.count > 0 && Date.now() < deadline)
  t.equal(reads.count, 0, 'no stamp read per call while nothing changed')

  const site: SiteRecord = {
    id: newId(), organization_id: org.id, name: 'Docs', slug: 'docs', title: null, api_ids: [], visibility: 'public',
    domains: ['docs.acme.test'], created_at: at, updated_at: at,
  }
  await storage.transaction((tx) => tx.sites.create(site))
  t.equal(await routesWithin('docs.acme.test', site.id), site.id, 'a domain added past this Sites routes once its notification came')
  await storage.transaction((tx) => tx.sites.update({ ...site, domains: ['www.acme.test'], updated_at: now() }))
  t.equal(await routesWithin('docs.acme.test', undefined), undefined, 'the old domain of a move no longer routes')
  t.equal(sites.siteForHost('www.acme.test'), site.id, 'the new one does')
  await storage.transaction((tx) => tx.sites.remove(site.id))
  t.equal(await routesWithin('www.acme.test', undefined), undefined, 'a removed site routes nowhere')
  t.ok(reads.count <= 12, `the stamp was read after notifications only (${reads.count} reads for 3 changes)`)
})

/** Counts `sites.domainsStamp()` reads through `storage.read` from now on. */
function countStampReads(storage: Storage): { count: number } {
  const counter = { count: 0 }
  const sites = storage.read.sites
  const read = sites.domainsStamp.bind(sites)
  sites.domainsStamp = () => {
    counter.count++
    return read()
  }
  return counter
}
