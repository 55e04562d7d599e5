import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The environment of a server that connects to the tests' git servers on loopback (see OUTBOUND_LOOPBACK in test/helpers.ts). */
export const OUTBOUND_LOOPBACK_ENV = { REGISTRY_OUTBOUND_HOSTS: '*,127.0.0.1' }

export interface RunningServer {
  child: ChildProcess
  url: string
  /** The key printed on first start, when there was one. */
  key: string | undefined
  output: () => string
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/**
 * The environment of a child process run as users run it: without tap's instrumentation, which it
 * hands down through NODE_OPTIONS (a module loader and a CommonJS hook). Under load, Node 20 once
 * aborted a CLI child inside that hook (a V8 fatal error while requiring an ES module), which is the
 * test's machinery and not the registry.
 */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra }
  if (env.NODE_OPTIONS?.includes('@tapjs/')) delete env.NODE_OPTIONS
  for (const name of Object.keys(env)) if (name.startsWith('_TAPJS_PROCESSINFO_')) delete env[name]
  return env
}

/**
 * The command line that runs node with `args` as users run it. tap's process-info hook puts its loader
 * back into NODE_OPTIONS on every spawn, whatever env is given (userEnv's deletion alone is undone), so
 * node is started through env(1), which drops it: the child runs without tap's instrumentation (which
 * also fails in a child of another user, unable to write tap's .tap/ folder).
 */
export function nodeCommand(args: string[]): [string, string[]] {
  return untapped(process.execPath, args)
}

/** Any command (a script with a node shebang, npm) run without tap's instrumentation: see nodeCommand. */
export function untapped(command: string, args: string[]): [string, string[]] {
  return ['/usr/bin/env', ['-u', 'NODE_OPTIONS', command, ...args]]
}

/** Starts the built server (`node dist/server.js`) as a real process on a free port. */
export async function startServer(storage: string, env: Record<string, string> = {}): Promise<RunningServer> {
  const child = spawn(...nodeCommand(['dist/server.js']), {
    cwd: ROOT,
    env: userEnv({ PORT: '0', HOST: '127.0.0.1', REGISTRY_STORAGE: storage, LOG_LEVEL: 'info', REGISTRY_WORKERS: '1', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout!.on('data', (chunk) => { out += chunk })
  child.stderr!.on('data', (chunk) => { out += chunk })
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`server did not start:\n${out}`))
    }, 30_000)
    const check = () => {
      const match = /registry listening on (http:\/\/[\d.:]+)/.exec(out)
      if (match) {
        clearTimeout(timer)
        resolve(match[1])
      }
    }
    child.stdout!.on('data', check)
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited ${code}:\n${out}`)) })
  })
  const key = /^API key: (sk_\S+)$/m.exec(out)?.[1]
  return {
    child, url, key, output: () => out,
    stop: (signal = 'SIGTERM') => new Promise((resolve) => {
      // A process ended by a signal (kill -9) has no exit code but a signal code, and emits no more 'exit'.
      if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode)
      child.once('exit', (code) => resolve(code))
      child.kill(signal)
    }),
  }
}

/** Runs the `registry` command (the built CLI) and answers its exit code and output. */
export function cli(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(...nodeCommand(['bin/registry.js', ...args]), { cwd: ROOT, env: userEnv(env), encoding: 'utf8', timeout: 120_000 })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

/** As `cli`, without blocking this process: its own requests go on while the command runs. */
export function cliAsync(args: string[], env: Record<string, string> = {}): Promise<Exit> {
  return nodeAsync(['bin/registry.js', ...args], env)
}

export interface Exit { code: number | null; stdout: string; stderr: string }

/**
 * Runs node with `args` in the project, to its end (killed after 120 s), optionally as another user
 * (`uid`/`gid`, when this process may switch).
 */
export function nodeAsync(args: string[], env: Record<string, string> = {}, user: { uid?: number; gid?: number } = {}): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(...nodeCommand(args), { cwd: ROOT, env: userEnv(env), stdio: ['ignore', 'pipe', 'pipe'], ...user })
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (chunk) => { stdout += chunk })
    child.stderr!.on('data', (chunk) => { stderr += chunk })
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
    child.once('error', reject)
    child.once('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }) })
  })
}

export function cliJson(args: string[], env: Record<string, string> = {}): any {
  const result = cli(['--json', ...args], env)
  if (result.code !== 0) throw new Error(`registry ${args.join(' ')} exited ${result.code}: ${result.stdout}${result.stderr}`)
  return JSON.parse(result.stdout)
}

export async function api(base: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) }
}
