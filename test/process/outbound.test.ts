/**
 * REGISTRY_OUTBOUND_HOSTS in real processes (dist/): `registry mirror set-remote` refuses a host the
 * policy leaves out, and an invalid entry stops the CLI and the server at start with a clear error.
 */
import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import t from 'tap'
import { tempDir } from '../temp.js'
import { ROOT, cli, cliJson, userEnv } from './spawn.js'

t.test('registry mirror set-remote checks REGISTRY_OUTBOUND_HOSTS', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const s = ['--storage', storage]
  cliJson([...s, 'org', 'create', 'acme'])
  const env = { REGISTRY_OUTBOUND_HOSTS: 'github.com,*.example.com' }

  const refused = cli([...s, 'mirror', 'set-remote', 'http://169.254.169.254/latest.git', '--org', 'acme'], env)
  t.equal(refused.code, 1)
  t.match(refused.stderr, /url: the host '169\.254\.169\.254' is not in this server's REGISTRY_OUTBOUND_HOSTS/)
  t.match(cliJson([...s, 'mirror', 'show', '--org', 'acme'], env), { url: null }, 'nothing stored')

  const set = cliJson([...s, 'mirror', 'set-remote', 'https://git.example.com/acme/mirror.git', '--org', 'acme'], env)
  t.match(set, { url: 'https://git.example.com/acme/mirror.git' })
})

t.test('an invalid entry fails start-up with a clear error', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const env = { REGISTRY_OUTBOUND_HOSTS: 'github.com, https://gitlab.com' }
  const command = cli(['--storage', storage, 'mirror', 'show', '--org', 'acme'], env)
  t.equal(command.code, 1)
  t.match(command.stderr, /REGISTRY_OUTBOUND_HOSTS: 'https:\/\/gitlab\.com' is a URL: list the host alone/)

  const server = spawnSync(process.execPath, ['dist/server.js'], {
    cwd: ROOT,
    env: userEnv({ PORT: '0', REGISTRY_STORAGE: storage, ...env }), encoding: 'utf8', timeout: 30_000,
  })
  t.equal(server.status, 1, 'the server does not start')
  t.match(server.stdout, /bad configuration: REGISTRY_OUTBOUND_HOSTS: 'https:\/\/gitlab\.com' is a URL/, 'one fatal log line')
})
