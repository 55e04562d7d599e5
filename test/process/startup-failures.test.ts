/**
 * Start-up failures an operator can fix, as a real process shows them: one log line that says what to
 * do, exit code 1, no stack. Storage owned by another user is what a root-owned bind mount is to the
 * image's uid 1000: run as root, the child runs as uid 1000 (as in the container); otherwise the folder
 * is made unwritable for the test's own user.
 */
import { chmodSync, chownSync, mkdirSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { tempDir } from '../temp.js'
import { nodeAsync, type Exit } from './spawn.js'

const AS_ROOT = process.getuid?.() === 0
/** The container's user: uid 1000 (node). */
const CONTAINER_USER = { uid: 1000, gid: 1000 }

/** Runs a command of the project to its end (start-up failures end it within seconds). */
function run(args: string[], env: Record<string, string>, asContainerUser = false): Promise<Exit> {
  // A server that starts instead of failing is killed after 120 s: the test then fails on its exit code.
  return nodeAsync(args, { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', REGISTRY_WORKERS: '1', ...env }, asContainerUser && AS_ROOT ? CONTAINER_USER : {})
}

/**
 * The server's output is JSON log lines: the failure is the one error line, at level fatal. A failure
 * that comes late in start-up (the port) follows what every start says first (the first key, where the
 * secret key is, or a warning that the key file was just created, on a machine's first start).
 */
function fatalLine(t: Test, exit: Exit): string {
  t.equal(exit.code, 1, 'exit code 1')
  t.equal(exit.stderr, '', 'nothing on stderr: no stack trace')
  const lines = exit.stdout.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('API key: '))
  const entries = lines.map((line) => JSON.parse(line) as { level: number; msg: string })
  const errors = entries.filter((entry) => entry.level >= 50)
  t.equal(errors.length, 1, `one error line: ${exit.stdout}`)
  const entry = errors[0] ?? { level: 0, msg: '' }
  t.equal(entry.level, 60, 'logged at level fatal')
  t.notMatch(exit.stdout, /\n\s+at /, 'no stack frames')
  return entry.msg as string
}

/** A storage folder the container's user cannot write: root's (as a bind mount made by root), or read-only. */
function foreignStorage(t: Test, mode: { asRoot: number; asSelf: number }): string {
  const parent = tempDir()
  t.teardown(() => { chmodSync(storage, 0o700); rmSync(parent, { recursive: true, force: true }) })
  chmodSync(parent, 0o755)
  const storage = join(parent, 'storage')
  mkdirSync(storage)
  chmodSync(storage, AS_ROOT ? mode.asRoot : mode.asSelf)
  return storage
}

const SERVE = [['dist/server.js'], ['bin/registry.js', 'serve']]

t.test('storage the process cannot write: the line names the folder, the uid and both fixes', async (t) => {
  const storage = foreignStorage(t, { asRoot: 0o755, asSelf: 0o555 })
  for (const args of SERVE) {
    const message = fatalLine(t, await run(args, { REGISTRY_STORAGE: storage }, true))
    t.match(message, `cannot read and write the storage directory ${storage}`, args.join(' '))
    if (AS_ROOT) t.match(message, 'as uid 1000:1000')
    t.match(message, /chown -R \d+:\d+ <the folder>/)
    t.match(message, '--user "$(id -u):$(id -g)"')
  }
  const cli = await run(['bin/registry.js', '--storage', storage, 'org', 'list'], {}, true)
  t.equal(cli.code, 1)
  t.match(cli.stderr, /^registry: cannot read and write the storage directory .*chown -R/, 'the CLI says the same in one line')
  t.equal(cli.stderr.trim().split('\n').length, 1)
})

t.test('storage the process cannot even read', async (t) => {
  const storage = foreignStorage(t, { asRoot: 0o700, asSelf: 0o000 })
  const message = fatalLine(t, await run(['dist/server.js'], { REGISTRY_STORAGE: storage }, true))
  t.match(message, `cannot read and write the storage directory ${storage}`)
})

t.test('storage whose index belongs to another user (a copy restored as root): the line names the file', { skip: !AS_ROOT && 'needs root to give the index away' }, async (t) => {
  const parent = tempDir()
  t.teardown(() => rmSync(parent, { recursive: true, force: true }))
  chmodSync(parent, 0o755)
  const storage = join(parent, 'storage')
  mkdirSync(join(storage, 'index'), { recursive: true })
  chownSync(storage, CONTAINER_USER.uid, CONTAINER_USER.gid)
  const message = fatalLine(t, await run(['dist/server.js'], { REGISTRY_STORAGE: storage }, true))
  t.match(message, `cannot read and write the storage directory ${storage} (${join(storage, 'index')})`)
})

t.test('a port already in use', async (t) => {
  const storage = tempDir()
  const taken: Server = createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { taken.close(); rmSync(storage, { recursive: true, force: true }) })
  const port = (taken.address() as { port: number }).port
  const message = fatalLine(t, await run(['dist/server.js'], { REGISTRY_STORAGE: storage, PORT: String(port) }))
  t.equal(message, `port ${port} on 127.0.0.1 is already in use: stop the process that listens there, or set PORT to a free port (PORT=0 picks one)`)
})

t.test('a HOST that is not an address of this machine', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const message = fatalLine(t, await run(['dist/server.js'], { REGISTRY_STORAGE: storage, HOST: '203.0.113.254' }))
  t.match(message, /^HOST 203\.0\.113\.254 is not an address of this machine: set HOST to one of its addresses, 0\.0\.0\.0/)
})

t.test('bad configuration: the variable, what it must be and what it was', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const cases: [Record<string, string>, string][] = [
    [{ PORT: 'eighty' }, 'bad configuration: PORT must be an integer from 0 to 65535, got eighty'],
    [{ REGISTRY_BODY_LIMIT: 'lots' }, 'bad configuration: REGISTRY_BODY_LIMIT must be a size such as 64mb, 512kb or a number of bytes, got lots'],
    [{ LOG_LEVEL: 'loud' }, 'bad configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got loud'],
    [{ REGISTRY_LEASE_SECONDS: '1' }, 'bad configuration: REGISTRY_LEASE_SECONDS must be an integer from 3 to 3600, got 1'],
  ]
  for (const [env, expected] of cases) {
    const message = fatalLine(t, await run(['dist/server.js'], { REGISTRY_STORAGE: storage, ...env }))
    t.ok(message.startsWith(expected), `${Object.keys(env)[0]}: ${message}`)
  }
  const cli = await run(['bin/registry.js', '--json', 'org', 'list'], { REGISTRY_STORAGE: storage, REGISTRY_BODY_LIMIT: 'lots' })
  t.equal(cli.code, 1)
  t.match(JSON.parse(cli.stdout), { error: { message: /^bad configuration: REGISTRY_BODY_LIMIT must be a size/ } }, 'the CLI too, as JSON with --json')
})

t.test('REGISTRY_DATABASE_URL: a URL that is not postgres:// is refused, an unreachable database named without its password', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  for (const args of SERVE) {
    const bad = fatalLine(t, await run(args, { REGISTRY_STORAGE: storage, REGISTRY_DATABASE_URL: 'mysql://registry@127.0.0.1/registry' }))
    t.match(bad, /^bad configuration: REGISTRY_DATABASE_URL must be a postgres:\/\/ URL/, args.join(' '))
    // A port nothing listens on.
    const env = { REGISTRY_STORAGE: storage, REGISTRY_DATABASE_URL: 'postgres://registry:s3cret@127.0.0.1:1/registry' }
    const unreachable = fatalLine(t, await run(args, env))
    t.match(unreachable, /^cannot connect to the PostgreSQL database of REGISTRY_DATABASE_URL \(registry@127\.0\.0\.1:1\/registry\): .*ECONNREFUSED/, args.join(' '))
    t.notMatch(unreachable, 's3cret', 'the password is not shown')
  }
  const cli = await run(['bin/registry.js', '--json', 'org', 'list'], { REGISTRY_STORAGE: storage, REGISTRY_DATABASE_URL: 'postgres://registry:s3cret@127.0.0.1:1/registry' })
  t.equal(cli.code, 1)
  t.match(JSON.parse(cli.stdout), { error: { message: /^cannot connect to the PostgreSQL database of REGISTRY_DATABASE_URL/ } }, 'the CLI too')
  t.notMatch(cli.stdout, 's3cret')
})
