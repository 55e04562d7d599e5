/**
 * /metrics counts what is stored, whichever process stored it: a CLI import and a CLI gc while the
 * server runs show in its blob and version gauges and in registry_versions_written_total at the next
 * scrape. (The server counted only its own writes before: an import never showed, a gc only after a
 * restart.)
 */
import { mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { stringify } from 'yaml'
import { petstore } from '../helpers.js'
import { tempDir } from '../temp.js'
import { cliAsync, cliJson, startServer } from './spawn.js'

/** The value of the sample named exactly `name` (with its labels), or undefined. */
function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  return line === undefined ? undefined : Number(line.slice(name.length + 1))
}

/** The blobs on disk, as `ls` would count them. */
function blobsOnDisk(storage: string): { count: number; bytes: number } {
  const root = join(storage, 'blobs', 'sha256')
  let count = 0
  let bytes = 0
  for (const shard of readdirSync(root)) {
    for (const name of readdirSync(join(root, shard))) {
      count += 1
      bytes += statSync(join(root, shard, name)).size
    }
  }
  return { count, bytes }
}

t.test('blobs and versions the CLI writes or removes while the server runs show at the next scrape', async (t) => {
  const storage = tempDir()
  const folder = tempDir()
  t.teardown(() => { rmSync(storage, { recursive: true, force: true }); rmSync(folder, { recursive: true, force: true }) })
  cliJson(['--storage', storage, 'org', 'create', 'acme'])
  // A blob nothing references (what a crash between a blob write and its commit leaves): gc removes it.
  const orphan = join(storage, 'blobs', 'sha256', 'ab', `${'ab'.repeat(32)}.${'cd'.repeat(32)}.json`)
  mkdirSync(join(orphan, '..'), { recursive: true })
  writeFileSync(orphan, '{"orphan":true}')
  utimesSync(orphan, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000))

  const server = await startServer(storage)
  t.teardown(() => server.stop('SIGKILL'))
  const scrape = async () => (await fetch(`${server.url}/metrics`)).text()
  // The count on disk at start runs in the background: wait for it.
  for (let i = 0; i < 100 && sample(await scrape(), 'registry_blobs') !== 1; i++) await new Promise((resolve) => setTimeout(resolve, 100))
  let text = await scrape()
  t.equal(sample(text, 'registry_blobs'), 1, 'at start: the one blob on disk')
  t.equal(sample(text, 'registry_versions'), 0)

  for (const name of ['pets', 'shop']) writeFileSync(join(folder, `${name}.yaml`), stringify(petstore('1.0.0', { title: name })))
  writeFileSync(join(folder, 'user.schema.json'), JSON.stringify({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' }))
  const imported = await cliAsync(['--storage', storage, '--json', 'import', folder, '--org', 'acme'])
  t.equal(imported.code, 0, imported.stderr)
  text = await scrape()
  t.same({ count: sample(text, 'registry_blobs'), bytes: sample(text, 'registry_blob_bytes') }, blobsOnDisk(storage), 'the import\'s blobs: as on disk')
  t.equal(sample(text, 'registry_blobs'), 4)
  t.equal(sample(text, 'registry_versions'), 3, 'three versions stored')
  t.equal(sample(text, 'registry_versions_written_total{kind="api",source="upload"}'), 2)
  t.equal(sample(text, 'registry_versions_written_total{kind="schema",source="upload"}'), 1)

  const gc = await cliAsync(['--storage', storage, '--json', 'gc', '--grace-minutes', '0'])
  t.match(JSON.parse(gc.stdout), { removed: 1 })
  text = await scrape()
  t.same({ count: sample(text, 'registry_blobs'), bytes: sample(text, 'registry_blob_bytes') }, blobsOnDisk(storage), 'after gc: as on disk')
  t.equal(sample(text, 'registry_blobs'), 3)
  t.equal(sample(text, 'registry_versions_written_total{kind="api",source="upload"}'), 2, 'a counter: unchanged by gc')
})
