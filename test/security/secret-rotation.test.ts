/**
 * Issue 14, finding 6: `registry secrets rotate --new-key-file F` seals every stored secret with a new
 * key while the server runs. The server follows the key file without a restart, keeps opening every
 * secret, and the old key alone no longer opens any of them.
 */
import { readFileSync, rmSync } from 'node:fs'
import t from 'tap'
import { api, cli, cliJson, startServer } from '../process/spawn.js'
import { tempDir } from '../temp.js'
import { newKeyFile, webhookPing } from './secrets-support.js'

const OUTBOUND = { REGISTRY_OUTBOUND_HOSTS: 'github.com,api.github.com,git.example.com' }

/** The key lines of a key file (comments left out). */
const keyLines = (path: string) => readFileSync(path, 'utf8').split('\n').filter((line) => line && !line.startsWith('#'))

t.test('rotation to a new key while the server runs: every secret is sealed again and keeps working', async (t) => {
  const storage = tempDir()
  const keys = tempDir('registry-keys-')
  t.teardown(() => { for (const dir of [storage, keys]) rmSync(dir, { recursive: true, force: true }) })
  const keyFile = newKeyFile(keys, 'current')
  const oldKey = keyLines(keyFile)[0]
  const env = { ...OUTBOUND, REGISTRY_SECRET_KEY_FILE: keyFile }
  const s = ['--storage', storage]
  const acme = cliJson([...s, 'org', 'create', 'acme'], env)
  const server = await startServer(storage, env)
  t.teardown(() => server.stop('SIGKILL'))
  const call = (method: string, path: string, body?: unknown) => api(server.url, acme.api_key, method, path, body)

  // Three APIs connected to three repositories, each with its webhook secret, and a push mirror token.
  const repositories = [1, 2, 3].map((n) => ({ url: `https://github.com/acme/api-${n}.git`, secret: `webhook-secret-${n}-0123456789` }))
  const ids: string[] = []
  for (const [n, repository] of repositories.entries()) {
    const created = (await call('POST', '/v1/apis', { name: `api ${n}` })).json().data
    ids.push(created.id)
    const connected = await call('PUT', `/v1/apis/${created.id}/repository`, {
      provider: 'github', url: repository.url, branch: 'main', path: 'openapi.yaml', token: `ghp_token_${n}_0123456789`, webhook_secret: repository.secret,
    })
    t.equal(connected.status, 201, connected.text)
  }
  t.equal((await call('PUT', '/v1/mirror', { url: 'https://git.example.com/acme/registry.git', token: 'mirror-token-0123456789' })).status, 200)
  const before = cliJson([...s, 'secrets', 'status'], env)
  t.same(Object.keys(before.sealed), [before.key.ids[0]], 'all sealed with the current key')
  t.equal(before.sealed[before.key.ids[0]], 7)

  const newFile = newKeyFile(keys, 'next')
  const rotated = cliJson([...s, 'secrets', 'rotate', '--new-key-file', newFile], env)
  t.match(rotated, { resealed: 7, current: 7, needs_reentry: [], retired: [] })
  t.not(rotated.key_id, before.key.ids[0])
  t.same(keyLines(keyFile), [keyLines(newFile)[0], oldKey], 'the key file holds the new key first, the old one after it')

  // The running server opens what was sealed with the new key (it read the key file again).
  for (const repository of repositories) t.equal(await webhookPing(server.url, repository.url, repository.secret), 200, repository.url)
  for (const id of ids) t.match((await call('GET', `/v1/apis/${id}/repository`)).json().data, { token_status: 'stored', webhook_secret_status: 'stored' })
  t.match((await call('GET', '/v1/mirror')).json().data, { token_status: 'stored' })
  // And seals what it is given now with the new key.
  t.equal((await call('PUT', `/v1/apis/${ids[0]}/repository`, {
    provider: 'github', url: repositories[0].url, branch: 'main', path: 'openapi.yaml', webhook_secret: repositories[0].secret,
  })).status, 200)
  t.same(Object.keys(cliJson([...s, 'secrets', 'status'], env).sealed), [rotated.key_id])

  const retired = cliJson([...s, 'secrets', 'rotate', '--retire-old-keys'], env)
  t.match(retired, { resealed: 0, current: 6, retired: [before.key.ids[0]] })
  t.same(keyLines(keyFile), [keyLines(newFile)[0]], 'only the new key is left')
  for (const repository of repositories) t.equal(await webhookPing(server.url, repository.url, repository.secret), 200)

  // The old key alone opens nothing any more.
  const withOldKey = cliJson([...s, 'secrets', 'status'], { REGISTRY_SECRET_KEY: oldKey })
  t.equal(withOldKey.needs_reentry.length, 6)
  t.match(withOldKey.needs_reentry[0], { reason: 'unknown_key', kid: rotated.key_id })
})

t.test('a key given in REGISTRY_SECRET_KEY is rotated by putting the new one first', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const s = ['--storage', storage]
  const oldKey = cliJson(['secrets', 'new-key']).key
  const newKey = cliJson(['secrets', 'new-key']).key
  cliJson([...s, 'org', 'create', 'acme'], { REGISTRY_SECRET_KEY: oldKey })
  cliJson([...s, 'mirror', 'set-remote', 'https://git.example.com/acme/registry.git', '--org', 'acme', '--token', 'mirror-token-0123456789'],
    { ...OUTBOUND, REGISTRY_SECRET_KEY: oldKey })

  const refused = cli([...s, 'secrets', 'rotate', '--new-key-file', '/dev/null'], { REGISTRY_SECRET_KEY: oldKey })
  t.equal(refused.code, 1)
  t.match(refused.stderr, /REGISTRY_SECRET_KEY=<new>,<old>/, 'says how to rotate a key given in the environment')

  const rotated = cliJson([...s, 'secrets', 'rotate'], { REGISTRY_SECRET_KEY: `${newKey},${oldKey}` })
  t.match(rotated, { resealed: 1, current: 1, needs_reentry: [] })
  t.match(cliJson([...s, 'secrets', 'status'], { REGISTRY_SECRET_KEY: newKey }), { needs_reentry: [], plaintext: 0 })
  t.match(cliJson([...s, 'mirror', 'show', '--org', 'acme'], { REGISTRY_SECRET_KEY: newKey }), { token_status: 'stored' })
  const withOldKey = cli(['--json', ...s, 'mirror', 'show', '--org', 'acme'], { REGISTRY_SECRET_KEY: oldKey })
  t.match(JSON.parse(withOldKey.stdout), { token_status: 'needs_reentry' })
  t.match(withOldKey.stderr, /warning: none of the 1 stored secret\(s\) opens with the secret key at REGISTRY_SECRET_KEY/,
    'a CLI run with another key than the server says so')
})
