import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { stringify } from 'yaml'
import { petstore } from '../helpers.js'
import { tempDir } from '../temp.js'
import { api, cli, cliAsync, cliJson, startServer } from './spawn.js'

t.test('org, key and revoke commands', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const s = ['--storage', storage]
  const created = cliJson([...s, 'org', 'create', 'acme', '--name', 'Acme Inc'])
  t.match(created, { organization: { slug: 'acme', name: 'Acme Inc' } })
  t.match(created.api_key, /^sk_[A-Za-z0-9_-]{32,}$/)
  t.same(cliJson([...s, 'org', 'list']).organizations.map((o: { slug: string }) => o.slug), ['acme'])
  const dup = cli([...s, '--json', 'org', 'create', 'acme'])
  t.not(dup.code, 0, 'a taken slug fails')

  const key = cliJson([...s, 'key', 'create', '--org', 'acme', '--name', 'ci'])
  t.match(key, { id: /^[0-9A-Z]{26}$/, role: 'admin', api_key: /^sk_/ }, 'admin unless told')
  const reader = cliJson([...s, 'key', 'create', '--org', 'acme', '--name', 'dashboards', '--role', 'read'])
  t.match(reader, { role: 'read', api_key: /^sk_/ })
  t.not(cli([...s, 'key', 'create', '--org', 'acme', '--role', 'owner']).code, 0, 'an unknown role is refused')
  const keys = cliJson([...s, 'key', 'list', '--org', 'acme']).keys
  t.equal(keys.length, 3)
  t.same(keys.map((k: { role: string }) => k.role).sort(), ['admin', 'admin', 'read'], 'the first key is admin')
  t.notMatch(JSON.stringify(keys), /sk_|hash/, 'secrets and hashes are never listed')
  t.ok(keys.every((k: Record<string, unknown>) => 'last_used_at' in k && 'created_at' in k))

  const human = cli([...s, 'key', 'list', '--org', 'acme'])
  t.equal(human.code, 0)
  t.match(human.stdout, key.id)

  const server = await startServer(storage)
  t.teardown(() => server.stop('SIGKILL'))
  t.equal(server.key, undefined, 'no default organization when one exists')
  t.equal((await api(server.url, key.api_key, 'GET', '/v1/apis')).status, 200)
  t.equal((await api(server.url, reader.api_key, 'GET', '/v1/apis')).status, 200)
  t.equal((await api(server.url, reader.api_key, 'POST', '/v1/apis', { name: 'x' })).status, 403, 'a read key cannot write')
  t.match(cliJson([...s, 'key', 'revoke', key.id]), { key: { id: key.id, revoked_at: /Z$/ } })
  t.equal((await api(server.url, key.api_key, 'GET', '/v1/apis')).status, 401, 'revoked while the server runs: 401 on the next request')
  t.equal((await api(server.url, created.api_key, 'GET', '/v1/apis')).status, 200, 'other keys still work')
})

t.test('import a folder, verify, gc', async (t) => {
  const storage = tempDir()
  const source = tempDir()
  t.teardown(() => { rmSync(storage, { recursive: true, force: true }); rmSync(source, { recursive: true, force: true }) })
  const s = ['--storage', storage]
  cliJson([...s, 'org', 'create', 'acme'])
  mkdirSync(join(source, 'apis'))
  writeFileSync(join(source, 'apis', 'pets.yaml'), stringify(petstore()))
  writeFileSync(join(source, 'apis', 'zoo.json'), JSON.stringify(petstore('2.0.0', { title: 'Zoo' })))
  writeFileSync(join(source, 'user.schema.json'), JSON.stringify({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' }))
  writeFileSync(join(source, 'rules.yaml'), 'extends: [[spectral:oas, recommended]]\nrules: {}\n')
  // Not valid Swagger 2.0 (no info.version): refused, where a valid one would be converted to OpenAPI 3.
  writeFileSync(join(source, 'broken.json'), JSON.stringify({ swagger: '2.0', info: { title: 'old' }, paths: {} }))
  writeFileSync(join(source, 'notes.txt'), 'not a document')

  const first = cli([...s, 'import', source, '--org', 'acme'])
  t.equal(first.code, 1, 'a failed file makes the exit code 1')
  t.match(first.stdout, /created\tapis\/pets\.yaml\tapis\/apis-pets/)
  t.match(first.stdout, /failed\tbroken\.json.*Swagger 2\.0/)
  rmSync(join(source, 'broken.json'))
  const second = cliJson([...s, 'import', source, '--org', 'acme'])
  t.match(second, { files: 4, created: 0, unchanged: 4, failed: 0 }, 'importing again changes nothing')

  const verify = cliJson([...s, 'verify'])
  t.match(verify, { ok: true, blobs: 4, versions: 4, problems: [] })
  const gc = cliJson([...s, 'gc', '--grace-minutes', '0'])
  t.same(gc, { removed: 0, bytesFreed: 0 }, 'every blob is referenced')

  // A corrupted blob is reported and fails verify.
  const shardDir = join(storage, 'blobs', 'sha256')
  const shard = readdirSync(shardDir)[0]
  const file = join(shardDir, shard, readdirSync(join(shardDir, shard))[0])
  writeFileSync(file, '{"tampered": true}')
  const broken = cli([...s, 'verify'])
  t.equal(broken.code, 1)
  t.match(broken.stdout, /content has checksum/)
})

t.test('backup while the server takes writes: the copy verifies and serves the same data', async (t) => {
  const storage = tempDir()
  const copy = join(tempDir(), 'backup')
  t.teardown(() => { rmSync(storage, { recursive: true, force: true }); rmSync(join(copy, '..'), { recursive: true, force: true }) })
  const key = `sk_${'k'.repeat(40)}`
  const server = await startServer(storage, { REGISTRY_BOOTSTRAP_KEY: key })
  t.teardown(() => server.stop('SIGKILL'))
  const ids: string[] = []
  for (let i = 0; i < 3; i++) ids.push((await api(server.url, key, 'POST', '/v1/apis', { name: `api ${i}` })).json().data.id)

  let writing = true
  let written = 0
  const writer = (async () => {
    while (writing) {
      const id = ids[written % ids.length]
      const res = await api(server.url, key, 'POST', `/v1/apis/${id}/spec`, { document: petstore(`1.0.${written}`) })
      if (res.status !== 201) throw new Error(res.text)
      written += 1
    }
  })()
  while (written < 3) await new Promise((resolve) => setTimeout(resolve, 20))
  // Asynchronously, so that uploads go on while the backup runs (spawnSync would hold them back).
  const before = written
  const backup = await cliAsync(['--storage', storage, '--json', 'backup', copy])
  const during = written - before
  writing = false
  await writer
  t.equal(backup.code, 0, backup.stderr)
  t.ok(during > 0, `${during} uploads were acknowledged while the backup ran`)

  const verify = cliJson(['--storage', copy, 'verify'])
  t.equal(verify.ok, true, JSON.stringify(verify.problems))
  const restored = await startServer(copy)
  t.teardown(() => restored.stop('SIGKILL'))
  let versionsInCopy = 0
  for (const id of ids) {
    const original = (await api(server.url, key, 'GET', `/v1/apis/${id}/versions?limit=100`)).json()
    const copied = (await api(restored.url, key, 'GET', `/v1/apis/${id}/versions?limit=100`)).json()
    versionsInCopy += copied.total
    const byNumber = new Map(original.data.map((v: { number: number; checksum: string }) => [v.number, v.checksum]))
    for (const v of copied.data) t.equal(byNumber.get(v.number), v.checksum, `api ${id} v${v.number} is the same in the copy`)
    if (copied.total > 0) {
      const current = copied.data[0]
      const a = await api(restored.url, key, 'GET', `/v1/apis/${id}/versions/${current.id}/document`)
      const b = await api(server.url, key, 'GET', `/v1/apis/${id}/versions/${current.id}/document`)
      t.equal(a.text, b.text, 'same document bytes')
    }
  }
  t.ok(versionsInCopy > 0, `the copy holds ${versionsInCopy} versions`)
})
