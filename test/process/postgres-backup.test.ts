/**
 * Backing up a registry on PostgreSQL is `pg_dump` (docs/storage.md): a custom-format dump taken while
 * the registry runs, restored with `pg_restore` into an empty database, gives a registry that verifies
 * and answers as the original did (ids, versions, documents and all).
 */
import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { verifyStorage } from '../../src/domain/operations/maintenance.js'
import { json, petstore, startTestServer, tempDir } from '../helpers.js'
import { POSTGRES_BIN, postgresForFile } from '../support/postgres.js'

const server = await postgresForFile(t)
if (server) {
  t.test('pg_dump while the registry runs, pg_restore into an empty database: the same registry', async (t) => {
    const work = tempDir('registry-dump-')
    t.teardown(() => rmSync(work, { recursive: true, force: true }))
    const originalUrl = await server.createDatabase()
    const original = await startTestServer({ databaseUrl: originalUrl })
    t.teardown(original.close)
    const api = json(await original.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Pets' } })).data
    for (const version of ['1.0.0', '1.1.0', '2.0.0']) {
      t.equal((await original.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore(version) } })).statusCode, 201)
    }
    await original.call({ method: 'POST', url: '/v1/schemas', payload: { name: 'Pet', document: { type: 'object' } } })

    const dump = join(work, 'registry.dump')
    const pgDump = spawnSync(join(POSTGRES_BIN, 'pg_dump'), ['--format=custom', `--file=${dump}`, originalUrl], { encoding: 'utf8' })
    t.equal(pgDump.status, 0, pgDump.stderr)

    const restoredUrl = await server.createDatabase()
    const pgRestore = spawnSync(join(POSTGRES_BIN, 'pg_restore'), ['--no-owner', `--dbname=${restoredUrl}`, dump], { encoding: 'utf8' })
    t.equal(pgRestore.status, 0, pgRestore.stderr)

    const restored = await startTestServer({ databaseUrl: restoredUrl, storage: join(work, 'restored') })
    t.teardown(restored.close)
    t.match(await verifyStorage(restored.registry.storage), { ok: true, versions: 4 })
    for (const url of [`/v1/apis/${api.id}`, `/v1/apis/${api.id}/versions`, `/v1/apis/${api.id}/spec`, '/v1/schemas/pet', `/v1/apis/${api.id}/diff?from=1&to=3`]) {
      const [before, after] = [await original.call({ method: 'GET', url }), await restored.call({ method: 'GET', url, key: original.key })]
      t.equal(after.statusCode, 200, url)
      t.same(JSON.parse(after.body), JSON.parse(before.body), `${url}: the same answer`)
    }
    t.equal((await restored.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('2.1.0') }, key: original.key })).statusCode, 201,
      'and it takes new versions (number 4)')
  })
}
