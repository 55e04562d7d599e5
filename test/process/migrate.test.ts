/**
 * `registry migrate` (issue 16, item 10; docs/storage.md): a registry built through the API on LMDB is
 * copied by the CLI into an empty PostgreSQL database and from there into an empty directory; `registry
 * verify` passes on each, each copy answers the same requests exactly as the original (ids and dates
 * included: they are copied, not made again), its git mirror is rebuilt to the same head commit, and a
 * target that is not empty is refused.
 */
import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { startReceiver } from '../events/receiver.js'
import { json, OUTBOUND_LOOPBACK, petstore, startTestServer, tempDir, type TestServer } from '../helpers.js'
import { eventually } from '../support/git-repos.js'
import { postgresForFile } from '../support/postgres.js'
import { cliAsync } from './spawn.js'

/** The key test registries seal secrets with (testSecretKeys in test/helpers.ts): the copies are served with it too. */
const SECRET_KEY = Buffer.alloc(32, 7).toString('base64')

/** A ruleset whose finding warns: below the API's threshold, so the upload is stored with its findings. */
const RULESET = { extends: [['spectral:oas', 'off']], rules: { 'info-contact': 'warn' } }

/** What a user reads of the registry: every answer is compared whole, status and body. */
function requests(ids: { api: string; webhook: string }): string[] {
  return [
    '/v1/apis', '/v1/apis?sort=-name', '/v1/apis/pets', '/v1/apis/pets/versions', '/v1/apis/pets/versions/2', '/v1/apis/pets/versions/3/findings',
    '/v1/apis/pets/spec', '/v1/apis/pets/spec?format=yaml', `/v1/apis/${ids.api}/versions/1/document`, '/v1/apis/pets/diff?from=1&to=3',
    '/v1/apis/pets/changelog', '/v1/apis/old', '/v1/schemas', '/v1/schemas/pet/versions', '/v1/rulesets', '/v1/rulesets/house/versions',
    '/v1/sites', '/v1/sites/docs', '/v1/sites/docs/guides', '/v1/sites/docs/guides/start', `/v1/webhooks/${ids.webhook}`,
    `/v1/webhooks/${ids.webhook}/deliveries`, '/v1/search?q=pets', '/v1/overview', '/@acme', '/@acme/apis/pets/latest',
  ]
}

interface Answer { url: string; status: number; body: string }

async function answers(server: TestServer, key: string, ids: { api: string; webhook: string }): Promise<Answer[]> {
  const out: Answer[] = []
  for (const url of requests(ids)) {
    const response = await server.call({ method: 'GET', url, key })
    out.push({ url, status: response.statusCode, body: response.body })
  }
  // A key's last use moves with every request: the rest of each key is compared.
  const keys = await server.call({ method: 'GET', url: '/v1/keys', key })
  out.push({ url: '/v1/keys', status: keys.statusCode, body: JSON.stringify(json(keys).data.map(({ last_used_at: _, ...rest }: Record<string, unknown>) => rest)) })
  return out
}

/**
 * The commit `main` of the organization's bare mirror repository points at, once the server's mirror
 * writer (started here, as `serve` does) has applied everything, or rebuilt a repository it lacks.
 */
async function mirrorHead(server: TestServer): Promise<string> {
  server.registry.mirror!.start({ warn: () => undefined })
  return eventually(async () => {
    await server.registry.mirror!.idle()
    const result = spawnSync('git', ['--git-dir', join(server.storage, 'git', `${server.orgId}.git`), 'rev-parse', '--verify', '-q', 'refs/heads/main'], { encoding: 'utf8' })
    return result.status === 0 ? result.stdout.trim() : undefined
  })
}

const postgres = await postgresForFile(t)
if (postgres) {
  t.test('LMDB to PostgreSQL and back: verify passes and every answer is the same', async (t) => {
    const original = tempDir()
    const back = join(tempDir(), 'storage')
    t.teardown(() => [original, back].forEach((dir) => rmSync(dir, { recursive: true, force: true })))

    // ---------------------------------------------------------------- the registry, built through the API
    const receiver = await startReceiver()
    t.teardown(() => receiver.close())
    const source = await startTestServer({ storage: original, outboundHosts: OUTBOUND_LOOPBACK })
    const call = (method: 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: unknown) => source.call({ method, url, payload: payload as never })
    const expect201 = async (method: 'POST' | 'PUT', url: string, payload?: unknown) => {
      const response = await call(method, url, payload)
      t.ok(response.statusCode === 201 || response.statusCode === 200, `${method} ${url}: ${response.body}`)
      return json(response).data
    }
    const key = source.key
    const ruleset = await expect201('POST', '/v1/rulesets', { name: 'House', blocking_severity: 'error', document: RULESET })
    const api = await expect201('POST', '/v1/apis', { name: 'Pets', visibility: 'public', description: 'All the pets' })
    await expect201('POST', '/v1/apis/pets/spec', { document: petstore('1.0.0') })
    await expect201('POST', '/v1/apis/pets/spec', { document: petstore('1.1.0', { description: 'More pets.' }) })
    t.equal((await call('PATCH', '/v1/apis/pets', { ruleset_id: ruleset.id })).statusCode, 200)
    const linted = await expect201('POST', '/v1/apis/pets/spec', { document: petstore('1.2.0') })
    t.ok(linted.lint.counts.warn > 0, 'version 3 was stored with a finding')
    await expect201('POST', '/v1/apis/pets/versions/1/restore')
    await expect201('POST', '/v1/schemas', { name: 'Pet', document: { type: 'object', properties: { id: { type: 'integer' } } } })
    await expect201('POST', '/v1/schemas/pet/document', { document: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } } })
    await expect201('POST', '/v1/apis', { name: 'Old' })
    await expect201('POST', '/v1/apis/old/spec', { document: petstore('0.1.0', { title: 'Old pets' }) })
    t.equal((await call('DELETE', '/v1/apis/old')).statusCode, 204, 'a deleted API: only the mirror history has it')
    await expect201('POST', '/v1/sites', { name: 'Docs', api_ids: [api.id], domains: ['docs.example.com'] })
    await expect201('PUT', '/v1/sites/docs/guides/start', { title: 'Start', markdown: '# Start\n\nHello.' })
    const webhook = await expect201('POST', '/v1/webhooks', { url: `${receiver.url}/in`, event_types: ['version.created'] })
    await expect201('POST', '/v1/apis/pets/spec', { document: petstore('1.3.0') })
    // Delivered: a settled record (with its attempt's log) that no copy sends again.
    await receiver.waitFor(1)
    await eventually(async () => {
      const deliveries = json(await source.call({ method: 'GET', url: `/v1/webhooks/${webhook.id}/deliveries` })).data
      return deliveries.length === 1 && deliveries[0].status === 'succeeded' ? true : undefined
    })
    const ids = { api: api.id, webhook: webhook.id }
    const head = await mirrorHead(source)
    const expected = await answers(source, key, ids)
    await source.close()
    t.ok(expected.filter((answer) => answer.status === 200).length >= 25, 'the requests find what they ask for')
    t.equal(expected.find((answer) => answer.url === '/v1/apis/old')?.status, 404)
    t.match(expected.find((answer) => answer.url.endsWith('/findings'))?.body, /info-contact/, 'the findings of the linted version are read')

    // ---------------------------------------------------------------- to PostgreSQL
    const databaseUrl = await postgres.createDatabase()
    const toPostgres = await cliAsync(['--json', 'migrate', '--from', original, '--to', databaseUrl])
    t.equal(toPostgres.code, 0, toPostgres.stderr)
    t.match(JSON.parse(toPostgres.stdout), {
      organizations: 1, resources: 3, versions: 8, blobs: 8, sites: 1, guides: 1, webhook_endpoints: 1, webhook_deliveries: 1,
    }, 'rulesets, schemas and APIs with every version, the blobs (the deleted API\'s one too: the mirror history names it), the site, the webhook')
    t.notMatch(toPostgres.stdout, /password|secret@/, 'no password in what it prints')
    const verifyPostgres = await cliAsync(['--json', 'verify'], { REGISTRY_DATABASE_URL: databaseUrl, REGISTRY_SECRET_KEY: SECRET_KEY })
    t.equal(verifyPostgres.code, 0, verifyPostgres.stdout + verifyPostgres.stderr)
    t.match(JSON.parse(verifyPostgres.stdout), { ok: true, versions: 8, problems: [] }, 'registry verify on the database')

    const onPostgres = await startTestServer({ databaseUrl })
    t.same(await answers(onPostgres, key, ids), expected, 'PostgreSQL answers as the original did, byte for byte')
    t.equal(await mirrorHead(onPostgres), head, 'the git mirror rebuilt from the copied history: the same head commit')
    await onPostgres.close()

    // ---------------------------------------------------------------- and back to a directory
    const toDirectory = await cliAsync(['--json', 'migrate', '--from', databaseUrl, '--to', back])
    t.equal(toDirectory.code, 0, toDirectory.stderr)
    const verifyDirectory = await cliAsync(['--json', '--storage', back, 'verify'], { REGISTRY_SECRET_KEY: SECRET_KEY })
    t.equal(verifyDirectory.code, 0, verifyDirectory.stdout + verifyDirectory.stderr)
    t.match(JSON.parse(verifyDirectory.stdout), { ok: true, versions: 8, problems: [] }, 'registry verify on the directory')
    const onDirectory = await startTestServer({ storage: back })
    t.same(await answers(onDirectory, key, ids), expected, 'the directory answers as the original did')
    t.equal(await mirrorHead(onDirectory), head, 'and rebuilds the same mirror')
    await onDirectory.close()

    // ---------------------------------------------------------------- a target that holds a registry
    const again = await cliAsync(['migrate', '--from', original, '--to', databaseUrl])
    t.equal(again.code, 1)
    t.match(again.stderr, /target postgres:\/\/.* is not empty \(1 organization: acme\); migrate copies into an empty storage only/)
    const intoDirectory = await cliAsync(['migrate', '--from', databaseUrl, '--to', original])
    t.equal(intoDirectory.code, 1)
    t.match(intoDirectory.stderr, /is not empty/)
    const missing = await cliAsync(['migrate', '--from', join(back, 'nothing-here'), '--to', await postgres.createDatabase()])
    t.equal(missing.code, 1)
    t.match(missing.stderr, /no registry storage at .*nothing-here/, 'a mistyped source is not taken for an empty registry')
  })
}
