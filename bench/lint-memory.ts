/**
 * Figure 8 alone (issue 19 item 3): the built server's peak resident memory (VmHWM) while it lints the
 * generated 5 MB document, after the same uploads as `npm run bench -- --only lint` makes before it (an
 * unlinted 500 KB upload, one concurrent warm-up upload per worker, three 500 KB versions), without the
 * rest of that group. Prints the peak after each step and the resident memory sampled every 100 ms.
 *
 *   npm run bench -- --only memory [--runs N] [--probe] [--cpus LIST] [--samples] [--gc] [--node-arg ARG]… [--env NAME=VALUE]…
 *
 * (the group runs only when named: a full bench leaves it out).
 *
 * `--cpus 0` runs the server on one core only (taskset), as when the machine's other work takes the rest.
 * `--probe` reads the API at 200 requests/s during the 5 MB upload, as figure 5 does in the bench;
 * `--gc` runs the server with --trace-gc and prints each thread's largest heap and full collections.
 * `--node-arg` passes a flag to the server's node (e.g. --trace-gc); `--env` sets the server's environment.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateOpenApi } from './generate.js'
import { load } from './load.js'
import { ROOT } from './processes.js'

interface Options {
  runs: number
  /** Figure 5's reads during the 5 MB upload. */
  probe: boolean
  /** Flags for the server's node. */
  nodeArgs: string[]
  /** The server's environment, besides the bench's. */
  env: Record<string, string>
  /** The cores the server runs on (taskset), as on a machine whose other cores are busy. */
  cpus?: string
  /** The server runs with --trace-gc: each thread's largest heap and its full collections are printed. */
  gc: boolean
  /** The resident memory sampled every 100 ms is printed. */
  samples: boolean
}

function optionsOf(args: string[]): Options {
  const many = (flag: string) => args.flatMap((a, i) => (a === flag ? [args[i + 1]] : []))
  const one = (flag: string) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined)
  return {
    runs: Number(one('--runs') ?? 1),
    probe: args.includes('--probe'),
    nodeArgs: many('--node-arg'),
    env: Object.fromEntries(many('--env').map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)])),
    cpus: one('--cpus'),
    gc: args.includes('--gc'),
    samples: args.includes('--samples'),
  }
}

const KEY = `sk_${'b'.repeat(43)}`

const status = (pid: number, field: string) => {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Math.round(Number(match[1]) / 1024) : NaN
}
const upload = (seed: number, bytes: number, title: string) => `{"document":${JSON.stringify(generateOpenApi(bytes, seed, title))}}`

async function request(base: string, method: string, path: string, body?: string) {
  const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`)
  return JSON.parse(text) as { data: { id: string } }
}

/** Per isolate (thread) of --trace-gc's lines: the largest committed heap, and each mark-compact's "before -> after" MB. */
function summarizeGc(trace: string) {
  const isolates = new Map<string, { maxCommitted: number; lines: number; fullGcs: string[] }>()
  for (const line of trace.split('\n')) {
    const match = /^\[\d+:(0x[0-9a-f]+)\]\s+(\d+) ms: (Scavenge|Mark-Compact(?: \(reduce\))?|Minor Mark-Compact)[^\d]*([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB/.exec(line)
    if (!match) continue
    const [, isolate, ms, kind, before, committedBefore, after, committedAfter] = match
    let entry = isolates.get(isolate)
    if (!entry) isolates.set(isolate, (entry = { maxCommitted: 0, lines: 0, fullGcs: [] }))
    entry.lines += 1
    entry.maxCommitted = Math.max(entry.maxCommitted, Number(committedBefore), Number(committedAfter))
    if (kind.startsWith('Mark-Compact')) entry.fullGcs.push(`${(Number(ms) / 1000).toFixed(1)}s ${Math.round(Number(before))}->${Math.round(Number(after))}${kind.includes('reduce') ? 'r' : ''}`)
  }
  for (const [isolate, entry] of isolates) {
    process.stderr.write(`  isolate ${isolate}: ${entry.lines} GCs, largest heap ${Math.round(entry.maxCommitted)} MB; full: ${entry.fullGcs.join(', ')}\n`)
  }
}

async function once(run: number, options: Options): Promise<number> {
  const storage = mkdtempSync(join(tmpdir(), 'registry-lint-memory-'))
  const command = options.cpus ? ['taskset', '-c', options.cpus, process.execPath] : [process.execPath]
  const child = spawn(command[0], [...command.slice(1), ...(options.gc ? ['--trace-gc'] : []), ...options.nodeArgs, 'dist/server.js'], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', REGISTRY_STORAGE: storage, REGISTRY_BOOTSTRAP_KEY: KEY, LOG_LEVEL: 'info',
      REGISTRY_RATE_LIMIT: '1000000000', REGISTRY_LINT_TIMEOUT_MS: '600000', ...options.env },
  })
  let out = ''
  const trace: string[] = []
  child.stderr!.on('data', (chunk) => { out += chunk })
  const base = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      const text = String(chunk)
      if (options.gc) trace.push(text)
      out += text
      const match = /registry listening on (http:\/\/[\d.:]+)/.exec(out)
      if (match) resolve(match[1])
    })
    child.once('exit', (code) => reject(new Error(`exited ${code}:\n${out}`)))
  })
  const pid = child.pid!
  const samples: string[] = []
  const began = performance.now()
  let maxRss = 0
  const sampler = setInterval(() => {
    const rss = status(pid, 'VmRSS')
    maxRss = Math.max(maxRss, rss)
    samples.push(`${((performance.now() - began) / 1000).toFixed(1)}:${rss}`)
  }, 100)
  const step = (name: string) => process.stderr.write(`  ${name}: VmHWM ${status(pid, 'VmHWM')} MB, VmRSS ${status(pid, 'VmRSS')} MB, load ${loadavg()[0].toFixed(1)}, ${((performance.now() - began) / 1000).toFixed(1)} s\n`)
  try {
    const bench = await request(base, 'POST', '/v1/apis', JSON.stringify({ name: 'Bench' }))
    await request(base, 'POST', `/v1/apis/${bench.data.id}/spec`, upload(1, 500_000, 'Mid API'))
    step('unlinted 500 KB')
    const ruleset = await request(base, 'POST', '/v1/rulesets', JSON.stringify({ name: 'Default rules', blocking_severity: 'off' }))
    const linted = await request(base, 'POST', '/v1/apis', JSON.stringify({ name: 'Linted', ruleset_id: ruleset.data.id }))
    await Promise.all(Array.from({ length: Math.min(4, cpus().length) }, async (_, i) => {
      const warm = await request(base, 'POST', '/v1/apis', JSON.stringify({ name: `Warm-up ${i}`, ruleset_id: ruleset.data.id }))
      await request(base, 'POST', `/v1/apis/${warm.data.id}/spec`, upload(10 + i, 500_000, 'Mid API'))
    }))
    step('warm-ups')
    for (const seed of [2, 3, 4]) await request(base, 'POST', `/v1/apis/${linted.data.id}/spec`, upload(seed, 500_000, 'Mid API'))
    step('three 500 KB versions')
    const large = upload(2, 5_000_000, 'Large API')
    const started = performance.now()
    const uploading = request(base, 'POST', `/v1/apis/${linted.data.id}/spec`, large)
    if (options.probe) {
      await new Promise((resolve) => setTimeout(resolve, 3000))
      for (let i = 0; i < 3; i++) await load(`${base}/v1/apis/${linted.data.id}`, { headers: { authorization: `Bearer ${KEY}` }, seconds: 5, rate: 200, connections: 4 })
    }
    await uploading
    step(`5 MB upload (${Math.round(performance.now() - started)} ms)`)
    const peak = status(pid, 'VmHWM')
    process.stderr.write(`run ${run}: figure 8 = ${peak} MB (sampled max RSS ${maxRss} MB)\n`)
    if (options.samples) process.stderr.write(`  samples ${samples.join(' ')}\n`)
    if (options.gc) summarizeGc(trace.join(''))
    return peak
  } finally {
    clearInterval(sampler)
    child.kill('SIGTERM')
    await new Promise((resolve) => child.once('exit', resolve))
    rmSync(storage, { recursive: true, force: true })
  }
}

/** Runs the figure `--runs` times (`npm run bench -- --only memory [options]`) and prints each peak. */
export async function lintMemory(args: string[]): Promise<number[]> {
  const options = optionsOf(args)
  const peaks: number[] = []
  for (let run = 1; run <= options.runs; run++) peaks.push(await once(run, options))
  process.stderr.write(`figure 8 over ${options.runs} run(s): ${peaks.join(', ')} MB\n`)
  return peaks
}
