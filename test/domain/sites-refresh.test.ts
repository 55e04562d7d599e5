/**
 * The sites' in-memory domain map follows domain changes committed past it (by another replica, or the
 * CLI on LMDB): here written straight through the storage port, which this `Sites` does not see, and
 * found after `refreshed()`, on LMDB and on PostgreSQL. test/process/replicas.test.ts does the same
 * through three real replicas.
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

async function domainMapFollows(t: Test, storage: Storage): Promise<void> {
  const at = now()
  const org = { id: newId(), slug: 'acme', name: 'Acme', created_at: at, updated_at: at }
  await storage.transaction((tx) => tx.organizations.put(org))
  const sites = new Sites(storage)
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

t.test('PostgreSQL', async (t) => {
  const server = await postgresForFile(t)
  if (!server) return
  const storage = await PostgresStorage.open(await server.createDatabase())
  t.teardown(() => storage.close())
  await domainMapFollows(t, storage)
})
