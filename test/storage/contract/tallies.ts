/** The port's tallies section (what /metrics reads), run against every adapter by contract.ts. */
import type { Test } from 'tap'
import { appendNext, organization, resource, version, type OpenStorage } from './contract.js'

export function tallyContract(t: Test, open: OpenStorage): void {
  t.test('tallies: versions written by kind and source, versions stored, blobs added from concurrent writers', async (t) => {
    const storage = await open(t)
    t.same(await storage.read.tallies.get(), { versions: 0, versionsWritten: [], blobs: { count: 0, bytes: 0 } }, 'a fresh storage counts nothing')
    const org = organization('acme')
    const api = resource(org.id, 'Pets')
    const schema = resource(org.id, 'Pet', { kind: 'schema' })
    await storage.transaction(async (tx) => {
      await tx.organizations.put(org)
      await tx.resources.create(api)
      await tx.resources.create(schema)
    })
    for (let i = 0; i < 3; i++) await storage.transaction((tx) => appendNext(tx, api.id))
    await storage.transaction(async (tx) => {
      const current = (await tx.resources.get(schema.id))!
      await tx.versions.append({ ...version(current, 1), source: 'github' })
    })
    // Ten writers at once: each one's addition counts, none is lost or refused.
    await Promise.all(Array.from({ length: 10 }, (_, i) => storage.transaction((tx) => tx.tallies.addBlobs(1, 100 + i))))
    await storage.transaction((tx) => tx.tallies.addBlobs(-2, -201))
    const tallies = await storage.read.tallies.get()
    t.equal(tallies.versions, 4)
    t.same(tallies.versionsWritten, [{ kind: 'api', source: 'upload', count: 3 }, { kind: 'schema', source: 'github', count: 1 }])
    t.same(tallies.blobs, { count: 8, bytes: 1045 - 201 })

    await storage.transaction((tx) => tx.resources.remove(api.id))
    const after = await storage.read.tallies.get()
    t.equal(after.versions, 1, 'a removed resource takes its versions out of the count')
    t.same(after.versionsWritten, tallies.versionsWritten, 'versions written stay written')
  })
}
