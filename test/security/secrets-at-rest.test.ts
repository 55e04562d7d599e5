/**
 * Issue 14, finding 6: repository tokens, webhook secrets, output repository tokens and the mirror
 * token are sealed (AES-256-GCM) under a key that is not in the storage directory. Configured through
 * the API or the CLI, none of them is in any file of the storage directory or of a backup; and those
 * an earlier version stored in plaintext are sealed at start without being lost.
 */
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { petstore, startTestServer, tempDir } from '../helpers.js'
import { api, cliJson, startServer } from '../process/spawn.js'
import { LmdbStorage } from '../../src/storage/lmdb/storage.js'
import { filesContaining, fileCount, newKeyFile, webhookPing } from './secrets-support.js'

const REPOSITORY = 'https://github.com/acme/petstore.git'
// Hosts are named, never connected to: configuration alone must seal the secrets.
const OUTBOUND = { REGISTRY_OUTBOUND_HOSTS: 'github.com,api.github.com,git.example.com' }

t.test('secrets configured through the API and the CLI are in no file of the storage directory, nor of a backup', async (t) => {
  const storage = tempDir()
  const keys = tempDir('registry-keys-')
  const copy = join(tempDir(), 'backup')
  t.teardown(() => { for (const dir of [storage, keys, copy]) rmSync(dir, { recursive: true, force: true }) })
  const env = { ...OUTBOUND, REGISTRY_SECRET_KEY_FILE: newKeyFile(keys) }
  const s = ['--storage', storage]
  const acme = cliJson([...s, 'org', 'create', 'acme'], env)
  cliJson([...s, 'org', 'create', 'globex'], env)
  const server = await startServer(storage, env)
  t.teardown(() => server.stop('SIGKILL'))
  const call = (method: string, path: string, body?: unknown) => api(server.url, acme.api_key, method, path, body)
  const secrets = {
    repositoryToken: 'ghp_RepositoryToken0123456789abcdef',
    webhookSecret: 'whsec-Webhook-Secret-0123456789',
    outputToken: 'ghp_OutputRepoToken0123456789abcdef',
    mirrorToken: 'glpat-MirrorToken-0123456789abcd',
    cliMirrorToken: 'glpat-CliMirrorToken-0123456789ab',
  }

  const created = (await call('POST', '/v1/apis', { name: 'petstore' })).json().data
  t.equal((await call('POST', `/v1/apis/${created.id}/spec`, { document: petstore() })).status, 201)
  const connected = await call('PUT', `/v1/apis/${created.id}/repository`, {
    provider: 'github', url: REPOSITORY, branch: 'main', path: 'openapi.yaml', token: secrets.repositoryToken, webhook_secret: secrets.webhookSecret,
  })
  t.equal(connected.status, 201, connected.text)
  t.match(connected.json().data, { has_token: true, token_status: 'stored', webhook_secret_status: 'stored' })
  const sdk = (await call('POST', '/v1/sdks', { name: 'Petstore SDK', targets: ['typescript'], apis: [{ api_id: created.id }] })).json().data
  const output = await call('PUT', `/v1/sdks/${sdk.id}/targets/typescript/repository`, {
    provider: 'github', url: 'https://github.com/acme/petstore-sdk.git', token: secrets.outputToken,
  })
  t.equal(output.status, 201, output.text)
  t.match(output.json().data, { has_token: true, token_status: 'stored' })
  const mirror = await call('PUT', '/v1/mirror', { url: 'https://git.example.com/acme/registry.git', token: secrets.mirrorToken })
  t.match(mirror.json().data, { token_set: true, token_status: 'stored' })
  t.match(cliJson([...s, 'mirror', 'set-remote', 'https://git.example.com/globex/registry.git', '--org', 'globex'],
    { ...env, REGISTRY_MIRROR_TOKEN: secrets.cliMirrorToken }), { token_set: true, token_status: 'stored' })

  t.equal(await webhookPing(server.url, REPOSITORY, secrets.webhookSecret), 200, 'the server opens the webhook secret it sealed')
  t.equal(await webhookPing(server.url, REPOSITORY, 'another-secret'), 401)

  const needles = Object.values(secrets)
  t.ok(fileCount(storage) > 3)
  t.same(filesContaining(storage, needles), [], 'no secret in any file of the storage directory')
  t.match(cliJson([...s, 'backup', copy], env), { blobs: 1 })
  t.same(filesContaining(copy, needles), [], 'nor in a backup')
  t.match(cliJson([...s, 'secrets', 'status'], env), { plaintext: 0, needs_reentry: [] })
})

t.test('secrets an earlier version stored in plaintext are sealed when the server starts, and still work', async (t) => {
  const storage = tempDir()
  const keys = tempDir('registry-keys-')
  const copy = join(tempDir(), 'backup')
  t.teardown(() => { for (const dir of [storage, keys, copy]) rmSync(dir, { recursive: true, force: true }) })
  const webhookSecret = 'plaintext-webhook-secret-0123456789'
  const mirrorToken = 'plaintext-mirror-token-0123456789'

  // What an earlier version left: a connection and a mirror remote with their secrets in plaintext.
  const before = await startTestServer({ storage })
  const created = (await before.call({ method: 'POST', url: '/v1/apis', payload: { name: 'petstore' } })).json().data
  t.equal((await before.call({ method: 'PUT', url: `/v1/apis/${created.id}/repository`, payload: {
    provider: 'github', url: REPOSITORY, branch: 'main', path: 'openapi.yaml',
  } })).statusCode, 201)
  await before.close()
  // The port stores what it is given: plaintext here, as an earlier version wrote it (sealing is the domain's).
  const port = new LmdbStorage(storage)
  await port.transaction(async (tx) => {
    await tx.repositories.put({ ...(await tx.repositories.get(created.id))!, webhook_secret: webhookSecret })
    await tx.mirror.putRemote(before.orgId, {
      url: 'https://git.example.com/acme/registry.git', token: mirrorToken, created_at: new Date().toISOString(),
      last_pushed_commit: null, last_pushed_at: null, last_error: null, last_error_at: null,
    })
  })
  await port.close()

  const env = { ...OUTBOUND, REGISTRY_SECRET_KEY_FILE: newKeyFile(keys) }
  const s = ['--storage', storage]
  t.match(cliJson([...s, 'secrets', 'status'], env), { plaintext: 2 })
  const server = await startServer(storage, env)
  t.teardown(() => server.stop('SIGKILL'))
  t.match(server.output(), /sealed 2 secret\(s\) stored in plaintext by an earlier version/)
  t.match(cliJson([...s, 'secrets', 'status'], env), { plaintext: 0, needs_reentry: [] })
  t.equal(Object.values(cliJson([...s, 'secrets', 'status'], env).sealed).reduce((a: number, b) => a + Number(b), 0), 2)
  t.equal(await webhookPing(server.url, REPOSITORY, webhookSecret), 200, 'the sealed webhook secret is the one given')

  t.match(cliJson([...s, 'backup', copy], env), { destination: copy })
  t.same(filesContaining(copy, [webhookSecret, mirrorToken]), [], 'a backup made after start-up holds no plaintext (free pages are left out)')
})
