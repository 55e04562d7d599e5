/**
 * PostgreSQL mode (issue 16; docs/storage.md): the built server with REGISTRY_DATABASE_URL serves from a
 * real PostgreSQL database (started by the test), keeps nothing durable in its storage directory but the
 * git mirror's derived repositories, answers after a restart from what the database holds, and the CLI
 * works on the same database.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { petstore, tempDir } from '../helpers.js'
import { eventually } from '../support/git-repos.js'
import { postgresForFile } from '../support/postgres.js'
import { api, cliAsync, startServer } from './spawn.js'

const KEY = `sk_${'p'.repeat(43)}`

const server = await postgresForFile(t)
if (server) {
  t.test('the core flows on PostgreSQL, a restart, and the CLI on the same database', async (t) => {
    const databaseUrl = await server.createDatabase()
    const storage = tempDir()
    t.teardown(() => rmSync(storage, { recursive: true, force: true }))
    const env = { REGISTRY_DATABASE_URL: databaseUrl, REGISTRY_BOOTSTRAP_KEY: KEY, REGISTRY_SECRET_KEY: Buffer.alloc(32, 9).toString('base64') }
    let registry = await startServer(storage, env)
    t.teardown(() => registry.stop())
    const call = (method: string, path: string, body?: unknown) => api(registry.url, KEY, method, path, body)

    const created = await call('POST', '/v1/apis', { name: 'Pets', visibility: 'public' })
    t.equal(created.status, 201, created.text)
    const apiId = created.json().data.id
    t.equal((await call('POST', `/v1/apis/${apiId}/spec`, { document: petstore('1.0.0') })).status, 201)
    const second = await call('POST', `/v1/apis/${apiId}/spec`, { document: petstore('1.1.0', { description: 'More pets.' }) })
    t.equal(second.status, 201, second.text)
    t.equal((await call('POST', `/v1/apis/${apiId}/spec`, { document: petstore('1.1.0', { description: 'More pets.' }) })).status, 200, 'an unchanged upload stores nothing')
    t.same((await call('GET', `/v1/apis/${apiId}/versions`)).json().data.map((v: { number: number }) => v.number), [2, 1])
    const diff = await call('GET', `/v1/apis/pets/diff`)
    t.equal(diff.status, 200, diff.text)
    t.ok(diff.json().data.changes.some((c: { pointer: string }) => c.pointer === '/info/version'), 'the diff of the two versions')
    t.equal((await call('POST', `/v1/apis/${apiId}/versions/1/restore`)).status, 201)
    t.equal((await call('GET', `/v1/apis/${apiId}/spec`)).json().info.version, '1.0.0', 'the restored version is current')
    const schema = await call('POST', '/v1/schemas', { name: 'Pet', document: { type: 'object', properties: { id: { type: 'integer' } } } })
    t.equal(schema.status, 201, schema.text)
    const site = await call('POST', '/v1/sites', { name: 'Docs', api_ids: [apiId] })
    t.equal(site.status, 201, site.text)
    const other = (await call('POST', '/v1/apis', { name: 'Gone' })).json().data
    t.equal((await call('DELETE', `/v1/apis/${other.id}`)).status, 204)
    t.equal((await call('GET', `/v1/apis/${other.id}`)).status, 404)

    // The git mirror, written from the database's journal: every version a commit, cloned over HTTP.
    const clone = join(storage, 'clone')
    const cloned = await eventually(async () => {
      rmSync(clone, { recursive: true, force: true })
      const result = spawnSync('git', ['clone', '--quiet', `${registry.url.replace('http://', `http://x:${KEY}@`)}/git/default.git`, clone], { encoding: 'utf8' })
      if (result.status !== 0) return undefined
      const log = spawnSync('git', ['log', '--format=%s'], { cwd: clone, encoding: 'utf8' }).stdout.trim().split('\n')
      return log.length >= 8 ? log : undefined
    })
    t.ok(cloned.some((subject) => /version 3/i.test(subject)), `the mirror has the restored version's commit: ${cloned.join(' | ')}`)
    t.ok(existsSync(join(clone, 'apis', 'pets')), 'and the API\'s folder')
    rmSync(clone, { recursive: true, force: true })

    t.equal(await registry.stop(), 0)
    t.notOk(existsSync(join(storage, 'index')), 'no LMDB environment in the storage directory')
    t.notOk(existsSync(join(storage, 'blobs')), 'no blob files either')
    t.same(readdirSync(storage).filter((entry) => entry !== 'git' && entry !== 'tmp'), [], 'only the mirror\'s derived repositories, if any')

    registry = await startServer(storage, env)
    t.equal((await call('GET', `/v1/apis/${apiId}`)).json().data.current.number, 3, 'after a restart, from the database')
    t.equal((await call('GET', '/@default/apis/pets/latest')).status, 200, 'the public registry too')
    t.equal((await call('GET', `/v1/sites/${site.json().data.id}`)).json().data.api_ids[0], apiId)

    const verify = await cliAsync(['--json', 'verify'], { REGISTRY_STORAGE: storage, ...env })
    t.equal(verify.code, 0, verify.stderr)
    t.match(JSON.parse(verify.stdout), { ok: true, versions: 4 }, 'registry verify on the database: three API versions and the schema\'s')
    const orgs = await cliAsync(['--json', 'org', 'list'], { REGISTRY_STORAGE: storage, ...env })
    t.equal(JSON.parse(orgs.stdout).organizations.length, 1, 'the CLI lists the organization the server bootstrapped')
    const backup = await cliAsync(['--json', 'backup', join(storage, 'copy')], { REGISTRY_STORAGE: storage, ...env })
    t.equal(backup.code, 1)
    t.match(backup.stdout + backup.stderr, /pg_dump/, 'backup says to use pg_dump')
  })
}
