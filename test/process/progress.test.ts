/**
 * Long CLI work (backup, verify, gc, mirror rebuild, import) draws progress bars on a terminal and
 * stays quiet in a pipe and with --json. The terminal is a real pseudo-terminal: the command runs
 * under script(1), as a user at a shell would run it.
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { stringify } from 'yaml'
import { showsProgress } from '../../src/cli/progress.js'
import { petstore } from '../helpers.js'
import { tempDir } from '../temp.js'
import { ROOT, cli, cliJson, userEnv } from './spawn.js'

const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0
/** Terminal control sequences (cursor moves, line clears) and the bar's own characters. */
const CONTROL = /\x1b\[|\x1b[78]|[\u2588\u2591]/

/** Runs the CLI on a pseudo-terminal; answers what the terminal showed (stdout and stderr, as a user sees them). */
function onTerminal(args: string[]): { code: number | null; screen: string } {
  const command = ['/usr/bin/env', '-u', 'NODE_OPTIONS', process.execPath, 'bin/registry.js', ...args].map((word) => `'${word}'`).join(' ')
  const result = spawnSync('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env: userEnv({ COLUMNS: '120' }), encoding: 'utf8', timeout: 120_000 })
  return { code: result.status, screen: result.stdout }
}

/** A storage with an organization, three imported APIs and a blob that nothing references (gc removes it). */
function storageWithWork(t: Test): { storage: string; folder: string } {
  const storage = tempDir()
  const folder = tempDir()
  t.teardown(() => { rmSync(storage, { recursive: true, force: true }); rmSync(folder, { recursive: true, force: true }) })
  cliJson(['--storage', storage, 'org', 'create', 'acme'])
  for (const name of ['pets', 'shop', 'zoo']) writeFileSync(join(folder, `${name}.yaml`), stringify(petstore('1.0.0', { title: name })))
  return { storage, folder }
}

function orphanBlob(storage: string): void {
  const hex = 'ab'.repeat(32)
  const directory = join(storage, 'blobs', 'sha256', 'ab')
  mkdirSync(directory, { recursive: true })
  const path = join(directory, `${hex}.${'cd'.repeat(32)}.json`)
  writeFileSync(path, '{}')
  const anHourAgo = new Date(Date.now() - 3_600_000)
  utimesSync(path, anHourAgo, anHourAgo)
}

t.test('the decision: a terminal on stderr and no --json', async (t) => {
  t.equal(showsProgress({ isTTY: true }, false), true)
  t.equal(showsProgress({ isTTY: true }, true), false, '--json: one JSON object and nothing else')
  t.equal(showsProgress({ isTTY: false }, false), false, 'a pipe or a file')
  t.equal(showsProgress({}, false), false)
})

t.test('on a terminal: each long command shows its phases as bars, then its result', { skip: !hasScript && 'script(1) is not installed' }, async (t) => {
  const { storage, folder } = storageWithWork(t)
  const s = ['--storage', storage]
  const imported = onTerminal([...s, 'import', folder, '--org', 'acme'])
  t.equal(imported.code, 0)
  t.match(imported.screen, /import: files \[[\u2588\u2591]+\] 3\/3/, 'import')
  orphanBlob(storage)
  const expected: [string[], RegExp[], RegExp][] = [
    [['verify'], [/verify: listing blobs 4/, /verify: checking blobs \[[\u2588\u2591]+\] 4\/4/, /verify: checking versions \[[\u2588\u2591]+\] 3\/3/], /FAILED: 4 blobs, 3 versions/],
    [['gc', '--grace-minutes', '0'], [/gc: listing blobs 4/, /gc: removing unreferenced blobs \[[\u2588\u2591]+\] 1\/1/], /removed 1 blobs, freed 2 bytes/],
    [['backup', join(storage, '..', `${storage.split('/').pop()}-backup`)], [/backup: index snapshot \[[\u2588\u2591]+\] 1\/1/, /backup: copying blobs \[[\u2588\u2591]+\] 3\/3/], /backup written to .* \(3 blobs\)/],
    [['mirror', 'rebuild'], [/mirror rebuild: rebuilding acme \[[\u2588\u2591]+\] 6\/6/], /^acme\t[0-9a-f]{40}/m],
  ]
  t.teardown(() => rmSync(join(storage, '..', `${storage.split('/').pop()}-backup`), { recursive: true, force: true }))
  for (const [args, bars, result] of expected) {
    const { screen } = onTerminal([...s, ...args])
    for (const bar of bars) t.match(screen, bar, `${args[0]}: ${bar.source}`)
    t.match(screen, result, `${args[0]}: its result follows`)
  }
  const json = onTerminal([...s, '--json', 'verify'])
  t.notMatch(json.screen, CONTROL, '--json on a terminal: no bar')
  t.match(JSON.parse(json.screen), { ok: true, blobs: 3, versions: 3 })
})

t.test('in a pipe: the results only, no bar and nothing on stderr', async (t) => {
  const { storage, folder } = storageWithWork(t)
  const s = ['--storage', storage]
  const backup = tempDir()
  rmSync(backup, { recursive: true })
  t.teardown(() => rmSync(backup, { recursive: true, force: true }))
  orphanBlob(storage)
  const runs = [
    cli([...s, 'import', folder, '--org', 'acme']),
    cli([...s, 'gc', '--grace-minutes', '0']),
    cli([...s, 'verify']),
    cli([...s, 'backup', backup]),
    cli([...s, 'mirror', 'rebuild']),
  ]
  for (const run of runs) {
    t.equal(run.code, 0, run.stderr)
    t.equal(run.stderr, '', 'nothing on stderr')
    t.notMatch(run.stdout, CONTROL, `no bar: ${run.stdout.split('\n').at(-2)}`)
  }
  t.match(runs[1].stdout, /^removed 1 blobs, freed 2 bytes$/m)
  t.match(runs[2].stdout, /^ok: 3 blobs, 3 versions, 0 problems$/m)
})
