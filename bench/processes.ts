import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))

export interface Started {
  child: ChildProcess
  url: string
  /** Milliseconds from spawn to the listening line. */
  startupMs: number
  /** Everything the process printed so far (shown when the bench fails). */
  output(): string
  stop(): Promise<void>
}

/** Spawns a server process and waits for its `… listening on http://…` line. */
function startProcess(args: string[], env: Record<string, string>, pattern: RegExp): Promise<Started> {
  const began = performance.now()
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 60 s:\n${out}`)), 60_000)
    const onData = (chunk: Buffer) => {
      out += chunk
      const match = pattern.exec(out)
      if (!match) return
      clearTimeout(timer)
      child.stdout!.off('data', onData)
      resolve({
        child, url: match[1], startupMs: performance.now() - began, output: () => out,
        stop: () => new Promise<void>((done) => {
          if (child.exitCode !== null) return done()
          child.once('exit', () => done())
          child.kill('SIGTERM')
        }),
      })
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', (chunk) => { out += chunk })
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`exited ${code}:\n${out}`)) })
  })
}

/** The registry as users run it: the built server on its own storage directory. */
export function startRegistry(storage: string, key: string, env: Record<string, string> = {}): Promise<Started> {
  return startProcess(['dist/server.js'], {
    PORT: '0', HOST: '127.0.0.1', REGISTRY_STORAGE: storage, REGISTRY_BOOTSTRAP_KEY: key, LOG_LEVEL: 'info',
    // Rate limiting stays on (its cost is part of every request) with a limit the load never reaches.
    REGISTRY_RATE_LIMIT: '1000000000', REGISTRY_LINT_TIMEOUT_MS: '600000', ...env,
  }, /registry listening on (http:\/\/[\d.:]+)/)
}

export function startBaseline(bytesFile: string, objectFile: string): Promise<Started> {
  return startProcess(['--import', 'tsx', 'bench/baseline.ts'], { BENCH_BYTES_FILE: bytesFile, BENCH_OBJECT_FILE: objectFile },
    /baseline listening on (http:\/\/[\d.:]+)/)
}

/** Peak resident memory of a process so far (VmHWM), in MB. */
export function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Math.round(Number(match[1]) / 1024) : NaN
}
