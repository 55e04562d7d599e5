/**
 * The container, without Docker (this machine has no engine): the Dockerfile and compose.yaml are
 * checked for what went wrong before, and the image's runtime stage is replayed into a temporary
 * folder, step by step as the Dockerfile says (production dependencies from the lock file, the
 * compiled dist/, bin/, the `registry` link on the PATH, the storage folder owned by uid 1000). From
 * that layout, with the image's environment, `registry --help`, `npm run registry` and `registry serve`
 * run as the image's user would run them.
 */
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process'
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs'
import { dirname, join } from 'node:path'
import t, { type Test } from 'tap'
import { parse } from 'yaml'
import { tempDir } from '../temp.js'
import { ROOT, untapped, userEnv } from './spawn.js'

// `npm ci --omit=dev` of the whole dependency tree, when it runs (installDependencies), takes minutes on a loaded machine.
t.setTimeout(900_000)

const AS_ROOT = process.getuid?.() === 0
/** The image's user, node: uid 1000. */
const IMAGE_USER = { uid: 1000, gid: 1000 }
const PATH_IN_IMAGE = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

interface Instruction { keyword: string; args: string }

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(text: string): Instruction[] {
  const joined = text.split('\n').filter((line) => !/^\s*#/.test(line)).join('\n').replace(/\\\n/g, ' ')
  return joined.split('\n').map((line) => line.trim()).filter(Boolean).map((line) => {
    const [, keyword, args] = /^(\S+)\s*(.*)$/.exec(line)!
    return { keyword: keyword.toUpperCase(), args }
  })
}

const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
const all = instructions(dockerfile)
const runtime = all.slice(all.map((i) => i.keyword).lastIndexOf('FROM') + 1)

t.test('the Dockerfile: no frontend pulled, no compiling at run time, the CLI on the PATH', async (t) => {
  t.notMatch(dockerfile, /^#\s*syntax\s*=/im, 'no `# syntax=` line: an offline build needs no frontend image')
  const runs = runtime.filter((i) => i.keyword === 'RUN').map((i) => i.args).join(' && ')
  t.match(runs, /npm ci\b[^&]*--omit=dev/, 'the runtime stage installs production dependencies only')
  t.match(runs, /npm ci\b[^&]*--ignore-scripts/, "…without running the project's prepare (a build) or any install script")
  t.notMatch(runs, /\btsc\b|npm run build/, 'nothing is compiled in the runtime stage')
  const link = /ln -s (\S+) (\S+)/.exec(runs)
  t.ok(link, 'the CLI is linked into a folder of the PATH')
  t.equal(link?.[1], '/app/bin/registry.js')
  t.ok(PATH_IN_IMAGE.split(':').includes(dirname(link?.[2] ?? '')), `${link?.[2]} is on the image's PATH`)
  t.equal(link?.[2].split('/').pop(), 'registry')
  const env = runtime.filter((i) => i.keyword === 'ENV').map((i) => i.args).join(' ')
  t.match(env, /\bHOST=0\.0\.0\.0\b/)
  t.ok(runtime.some((i) => i.keyword === 'USER' && i.args === 'node'), 'runs as node (uid 1000)')
  t.ok(runtime.some((i) => i.keyword === 'HEALTHCHECK' && i.args.includes('/readyz')), 'the health check asks /readyz')
  t.same(JSON.parse(runtime.find((i) => i.keyword === 'CMD')!.args), ['node', 'dist/server.js'])
})

t.test('compose.yaml: the registry with a volume for its storage and a health check on /readyz', async (t) => {
  const compose = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'))
  const service = compose.services.registry
  t.equal(service.build, '.')
  t.same(service.ports, ['8080:8080'])
  const [volume, target] = String(service.volumes[0]).split(':')
  t.equal(target, '/app/storage', 'the storage directory is a volume')
  t.ok(volume in compose.volumes, `${volume} is a named volume`)
  t.match(service.healthcheck.test.join(' '), /\/readyz/)
})

type Shell = (command: string, args: string[], cwd: string) => SpawnSyncReturns<string>

/**
 * The runtime stage's `npm ci --omit=dev --ignore-scripts`. Extracting the production tree again cost
 * 45 s of CPU (125 s of this test under CI's load), and the project's own node_modules, installed from
 * the same lock file, holds every file of it. So that tree is hard-linked in and `npm prune` with the
 * Dockerfile's flags takes out what they leave out: checked file by file (md5) to be the tree `npm ci`
 * makes. The hidden lock file is unlinked before npm writes its own, which it would otherwise write
 * through the link into the project's. npm ci itself runs (from this machine's npm cache when it can)
 * when the project's tree was not installed from this lock file or cannot be linked (another file system).
 */
function installDependencies(t: Test, args: string[], app: string, sh: Shell): void {
  const flags = args.slice(1)
  const linked = installedFromLock() && linkTree(join(ROOT, 'node_modules'), join(app, 'node_modules'))
  const result = linked
    ? sh('npm', ['prune', ...flags, '--offline'], app)
    : sh('npm', [...args, '--prefer-offline'], app)
  t.equal(result.status, 0, `npm ${args.join(' ')}${linked ? ' (as npm prune of a linked tree)' : ''}: ${result.stderr.slice(-2000)}`)
}

/** Whether every package of the lock file that production needs is installed at its locked version. */
function installedFromLock(): boolean {
  type Packages = Record<string, { version?: string; integrity?: string; dev?: boolean; optional?: boolean }>
  const read = (path: string): Packages | undefined => {
    try { return JSON.parse(readFileSync(path, 'utf8')).packages } catch { return undefined }
  }
  const locked = read(join(ROOT, 'package-lock.json'))
  const installed = read(join(ROOT, 'node_modules', '.package-lock.json'))
  if (!locked || !installed) return false
  return Object.entries(locked).every(([path, entry]) => {
    if (path === '' || entry.dev || entry.optional) return true
    const there = installed[path]
    return there !== undefined && there.version === entry.version && there.integrity === entry.integrity
  })
}

function linkTree(from: string, to: string): boolean {
  const copied = spawnSync('cp', ['-al', from, to], { encoding: 'utf8' })
  if (copied.status !== 0) {
    rmSync(to, { recursive: true, force: true })
    return false
  }
  rmSync(join(to, '.package-lock.json'), { force: true })
  return true
}

/** Replays the runtime stage into `image` (a folder standing for /); answers the image's environment. */
function replayRuntimeStage(t: Test, image: string): Record<string, string> {
  const inImage = (path: string) => join(image, path)
  let workdir = '/'
  const env: Record<string, string> = { PATH: PATH_IN_IMAGE.split(':').map(inImage).join(':') }
  const sh = (command: string, args: string[], cwd: string): SpawnSyncReturns<string> =>
    spawnSync(...untapped(command, args), { cwd, env: userEnv(), encoding: 'utf8', timeout: 900_000 })
  for (const { keyword, args } of runtime) {
    const words = args.split(/\s+/)
    switch (keyword) {
      case 'WORKDIR':
        workdir = args
        mkdirSync(inImage(workdir), { recursive: true })
        break
      case 'ENV':
        for (const pair of words) {
          const [name, value] = pair.split('=')
          env[name] = name === 'REGISTRY_STORAGE' || name === 'XDG_CONFIG_HOME' ? inImage(value) : value
        }
        break
      case 'COPY': {
        // --from=build: the build stage's output, which `npm run build` made here (tsc, as it runs it).
        const fromBuild = words[0].startsWith('--from=')
        const [sources, destination] = [words.slice(fromBuild ? 1 : 0, -1), words.at(-1)!]
        for (const source of sources) {
          const from = fromBuild ? join(ROOT, source.replace(/^\/app\//, '')) : join(ROOT, source)
          const to = destination.endsWith('/') ? join(inImage(workdir), destination, source.split('/').pop()!) : join(inImage(workdir), destination)
          cpSync(from, to, { recursive: true })
        }
        break
      }
      case 'RUN':
        for (const step of args.split('&&').map((s) => s.trim())) {
          const [command, ...rest] = step.split(/\s+/)
          if (command === 'npm' && rest[0] === 'ci') {
            installDependencies(t, rest, inImage(workdir), sh)
          } else if (command === 'npm' && rest.join(' ') === 'cache clean --force') {
            // Not replayed: it would empty this machine's npm cache, and it changes nothing in the image's /app.
          } else if (command === 'ln' && rest[0] === '-s') {
            mkdirSync(dirname(inImage(rest[2])), { recursive: true })
            symlinkSync(inImage(rest[1]), inImage(rest[2]))
          } else if (command === 'mkdir' && rest[0] === '-p') {
            mkdirSync(inImage(rest[1]), { recursive: true })
          } else if (command === 'chown' && rest[0] === '-R' && rest[1] === 'node:node') {
            if (AS_ROOT) chownSync(inImage(rest[2]), IMAGE_USER.uid, IMAGE_USER.gid)
          } else {
            t.fail(`a RUN step this test does not replay yet: ${step}`)
          }
        }
        break
      default:
        // USER, VOLUME, EXPOSE, HEALTHCHECK and CMD describe how the image runs: see below.
    }
  }
  return env
}

t.test("the image's layout, replayed without Docker: registry --help, npm run registry, registry serve on 0.0.0.0", async (t) => {
  const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, env: userEnv(), encoding: 'utf8' })
  t.equal(built.status, 0, built.stderr)
  const image = tempDir('registry-image-')
  t.teardown(() => rmSync(image, { recursive: true, force: true }))
  chmodSync(image, 0o755)
  const env = replayRuntimeStage(t, image)
  const app = join(image, 'app')
  // Only PostgreSQL mode's SQL migrations, which are not compiled (docs/storage.md).
  t.same(readdirSync(join(app, 'src')), ['storage'], 'no sources in the image but the SQL migrations')
  t.same(readdirSync(join(app, 'src', 'storage', 'postgres', 'migrations')), readdirSync(join(ROOT, 'src', 'storage', 'postgres', 'migrations')))
  t.notOk(existsSync(join(app, 'node_modules', 'tap')), 'no dev dependencies')
  t.equal(env.HOST, '0.0.0.0')

  // As the image's user, in its working directory, with its environment (and its home, for npm's logs).
  const asImageUser = AS_ROOT ? IMAGE_USER : {}
  const home = join(image, 'home', 'node')
  mkdirSync(home, { recursive: true })
  if (AS_ROOT) chownSync(home, IMAGE_USER.uid, IMAGE_USER.gid)
  // The image's PATH, then this machine's for node and npm (the image has them in /usr/local/bin).
  const imageEnv = userEnv({ ...env, PATH: `${env.PATH}:${process.env.PATH}`, PORT: '0', REGISTRY_WORKERS: '1', LOG_LEVEL: 'info', HOME: home })
  const run = (command: string, args: string[]) =>
    spawnSync(...untapped(command, args), { cwd: app, env: imageEnv, encoding: 'utf8', timeout: 120_000, ...asImageUser })

  const help = run('registry', ['--help'])
  t.equal(help.status, 0, help.stderr)
  t.match(help.stdout, /^Usage: registry /m, '`registry --help` from the PATH')
  const script = run('npm', ['run', '--silent', 'registry', '--', '--help'])
  t.equal(script.status, 0, script.stderr)
  t.match(script.stdout, /^Usage: registry /m, '`npm run registry` works without sources (nothing is compiled)')
  const created = run('registry', ['--json', 'org', 'create', 'acme'])
  t.equal(created.status, 0, created.stderr)
  t.match(JSON.parse(created.stdout), { organization: { slug: 'acme' }, api_key: /^sk_/ }, 'the CLI writes the volume as uid 1000')

  const server = spawn(...untapped('registry', ['serve']), { cwd: app, env: imageEnv, stdio: ['ignore', 'pipe', 'pipe'], ...asImageUser })
  t.teardown(() => { if (server.exitCode === null) server.kill('SIGKILL') })
  let output = ''
  server.stdout!.on('data', (chunk) => { output += chunk })
  server.stderr!.on('data', (chunk) => { output += chunk })
  const address = await new Promise<string>((resolve, reject) => {
    server.stdout!.on('data', () => {
      const line = output.split('\n').find((l) => l.includes('registry listening on'))
      if (line) resolve(JSON.parse(line).address)
    })
    server.once('exit', (code) => reject(new Error(`registry serve exited ${code}: ${output}`)))
  })
  t.match(address, /^http:\/\/0\.0\.0\.0:\d+$/, 'the log says the address it listens on: 0.0.0.0')
  const port = new URL(address).port
  const ready = await fetch(`http://127.0.0.1:${port}/readyz`)
  t.equal(ready.status, 200, '/readyz (the health check) answers 200')
  t.match(output, /"msg":"reachable at http:\/\/127\.0\.0\.1:\d+"/, 'each interface is logged as where it can be reached')
  t.ok(existsSync(join(app, 'config', 'api-registry', 'secret-key')), 'the secret key is created in /app/config, its own volume')
  t.match(output, /created the secret key file .*\/app\/config\/api-registry\/secret-key/)
  const exited = new Promise((resolve) => server.once('exit', resolve))
  server.kill('SIGTERM')
  t.equal(await exited, 0, 'SIGTERM stops it cleanly')
})
