/**
 * Issue 14, finding 6: a backup restored without its secret key serves everything else and says which
 * secrets must be entered again (API, start-up log, `registry verify`); and a sealed secret copied into
 * another record does not open there.
 */
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { json, petstore, startTestServer, tempDir } from '../helpers.js'
import { api, cli, cliJson, startServer } from '../process/spawn.js'
import { newKeyFile, webhookPing } from './secrets-support.js'

const REPOSITORY = 'https://github.com/acme/petstore.git'
const OUTBOUND = { REGISTRY_OUTBOUND_HOSTS: 'github.com,api.github.com,git.example.com' }

t.test('a backup opened without the key serves the documents and lists the secrets to enter again', async (t) => {
  const storage = tempDir()
  const keys = tempDir('registry-keys-')
  const elsewhere = tempDir('registry-config-')
  const copy = join(tempDir(), 'backup')
  t.teardown(() => { for (const dir of [storage, keys, elsewhere, copy]) rmSync(dir, { recursive: true, force: true }) })
  const env = { ...OUTBOUND, REGISTRY_SECRET_KEY_FILE: newKeyFile(keys) }
  const s = ['--storage', storage]
  const acme = cliJson([...s, 'org', 'create', 'acme'], env)
  const first = await startServer(storage, env)
  t.teardown(() => first.stop('SIGKILL'))
  const call = (server: { url: string }, method: string, path: string, body?: unknown) => api(server.url, acme.api_key, method, path, body)
  const created = (await call(first, 'POST', '/v1/apis', { name: 'petstore', visibility: 'public' })).json().data
  t.equal((await call(first, 'POST', `/v1/apis/${created.id}/spec`, { document: petstore('1.2.3') })).status, 201)
  const connect = { provider: 'github', url: REPOSITORY, branch: 'main', path: 'openapi.yaml', token: 'ghp_token_0123456789', webhook_secret: 'webhook-secret-0123456789' }
  t.equal((await call(first, 'PUT', `/v1/apis/${created.id}/repository`, connect)).status, 201)
  const sdk = (await call(first, 'POST', '/v1/sdks', { name: 'Petstore SDK', targets: ['typescript'], apis: [{ api_id: created.id }] })).json().data
  t.equal((await call(first, 'PUT', `/v1/sdks/${sdk.id}/targets/typescript/repository`, {
    provider: 'github', url: 'https://github.com/acme/petstore-sdk.git', token: 'ghp_output_0123456789',
  })).status, 201)
  t.equal((await call(first, 'PUT', '/v1/mirror', { url: 'https://git.example.com/acme/registry.git', token: 'mirror-token-0123456789' })).status, 200)
  t.match(cliJson([...s, 'backup', copy], env), { blobs: 1 })
  await first.stop()

  // The copy on another machine: no REGISTRY_SECRET_KEY(_FILE), an empty config directory.
  const there = { ...OUTBOUND, XDG_CONFIG_HOME: elsewhere }
  const server = await startServer(copy, there)
  t.teardown(() => server.stop('SIGKILL'))
  const log = server.output()
  t.match(log, /created the secret key file .*api-registry\/secret-key.*Back it up apart from the storage/)
  t.equal(log.match(/secret must be entered again/g)?.length, 4, 'the start-up log names each secret to enter again')
  t.match(log, /4 stored secret\(s\) do not open with this server's secret key/)

  const spec = await call(server, 'GET', `/v1/apis/${created.id}/spec`)
  t.equal(spec.status, 200)
  t.equal(spec.json().info.version, '1.2.3', 'documents are served')
  t.equal((await fetch(`${server.url}/@acme/apis/petstore/latest`)).status, 200, 'the public registry too')
  t.match((await call(server, 'GET', `/v1/apis/${created.id}/repository`)).json().data,
    { has_token: true, token_status: 'needs_reentry', has_webhook_secret: true, webhook_secret_status: 'needs_reentry' })
  t.match((await call(server, 'GET', `/v1/sdks/${sdk.id}`)).json().data.repositories, [{ target: 'typescript', token_status: 'needs_reentry' }])
  t.match((await call(server, 'GET', '/v1/mirror')).json().data, { token_set: true, token_status: 'needs_reentry' })
  const sync = await call(server, 'POST', `/v1/apis/${created.id}/sync`)
  t.equal(sync.status, 409)
  t.match(sync.json(), { code: 'secret_needs_reentry', detail: /the token of the repository connection of API .* must be entered again/ })
  t.equal(await webhookPing(server.url, REPOSITORY, connect.webhook_secret), 401, 'a secret that does not open verifies nothing')

  const verify = cli(['--json', '--storage', copy, 'verify'], there)
  t.equal(verify.code, 0, 'verify passes: the documents are whole, the secrets are reported')
  const report = JSON.parse(verify.stdout)
  t.match(report, { ok: true, problems: [], secrets: { plaintext: 0 } })
  t.equal(report.secrets.needs_reentry.length, 4)
  t.match(cli(['--storage', copy, 'verify'], there).stdout, /4 to enter again/)

  // Entered again: usable, and no longer listed.
  const again = await call(server, 'PUT', `/v1/apis/${created.id}/repository`, connect)
  t.match(again.json().data, { token_status: 'stored', webhook_secret_status: 'stored' })
  t.equal(await webhookPing(server.url, REPOSITORY, connect.webhook_secret), 200)
  t.equal(cliJson(['--storage', copy, 'verify'], there).secrets.needs_reentry.length, 2)
})

t.test('a sealed secret copied into another record is refused', async (t) => {
  const s = await startTestServer()
  t.teardown(() => s.close())
  const connect = async (name: string, url: string, secret: string) => {
    const created = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name } })).data
    const response = await s.call({ method: 'PUT', url: `/v1/apis/${created.id}/repository`, payload: {
      provider: 'github', url, branch: 'main', path: 'openapi.yaml', webhook_secret: secret,
    } })
    t.equal(response.statusCode, 201)
    return created.id as string
  }
  const own = await connect('own', 'https://github.com/acme/own.git', 'own-secret-0123456789')
  const other = await connect('other', 'https://github.com/acme/other.git', 'other-secret-0123456789')
  const storage = s.registry.storage
  const sealed = (await storage.read.repositories.get(own))!.webhook_secret
  t.match(sealed, { alg: 'A256GCM', kid: /^[0-9a-f]{16}$/ })
  await storage.transaction(async (tx) => { await tx.repositories.put({ ...(await tx.repositories.get(other))!, webhook_secret: sealed }) })

  const shown = json(await s.call({ method: 'GET', url: `/v1/apis/${other}/repository` })).data
  t.match(shown, { webhook_secret_status: 'needs_reentry' })
  t.match((await s.registry.secrets.inventory()).needs_reentry, [{ reason: 'refused', ref: { api_id: other, field: 'webhook_secret' } }])
  const listen = await s.app.listen({ port: 0, host: '127.0.0.1' })
  t.equal(await webhookPing(listen, 'https://github.com/acme/other.git', 'own-secret-0123456789'), 401, 'it verifies nothing where it was copied')
  t.equal(await webhookPing(listen, 'https://github.com/acme/own.git', 'own-secret-0123456789'), 200, 'and still does where it belongs')
})
