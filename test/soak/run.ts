/**
 * `npm run soak`: mixed reads and writes from many concurrent clients against a real server process
 * for a while (default 60 s), then a report: requests, errors (any 5xx or failed request; 4xx are
 * counted apart), p50/p99 latency, and the server's resident memory at start, after warm-up, in the
 * middle and at the end, split into the mapped LMDB index (which grows with every version written)
 * and the rest. Exit 1 on any error, or when the rest grew 10% or more after warm-up.
 *
 * Options: --seconds N (60), --clients N (32), --warmup N (seconds, default a fifth of the run),
 * --workers N (document workers; default as the server's), --apis N (20).
 */
import { readFileSync, rmSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { parseArgs } from 'node:util'
import { stringify } from 'yaml'
import { startServer } from '../process/spawn.js'
import { tempDir } from '../temp.js'
import { documentFor, seededRandom } from '../crash/workload.js'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    clients: { type: 'string', default: '32' },
    warmup: { type: 'string' },
    workers: { type: 'string', default: String(Math.max(1, Math.min(4, availableParallelism()))) },
    apis: { type: 'string', default: '20' },
  },
})
const seconds = Number(values.seconds)
const clients = Number(values.clients)
const warmup = values.warmup === undefined ? seconds / 5 : Number(values.warmup)
const KEY = `sk_${'soak'.repeat(10)}`
/** Each API cycles through this many documents: versions keep coming, blobs and lint results stay bounded. */
const VARIANTS = 8

const storage = tempDir('registry-soak-')
const server = await startServer(storage, {
  REGISTRY_BOOTSTRAP_KEY: KEY, REGISTRY_RATE_LIMIT: '0', REGISTRY_WORKERS: values.workers, LOG_LEVEL: 'info',
}).catch(async (error) => { rmSync(storage, { recursive: true, force: true }); throw error })
const base = server.url
const auth = { authorization: `Bearer ${KEY}` }

interface Answer { status: number; text: string; etag: string | null }
async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const init: RequestInit = { method, headers: { ...auth, ...headers } }
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body)
    ;(init.headers as Record<string, string>)['content-type'] ??= 'application/json'
  }
  const response = await fetch(`${base}${path}`, init)
  return { status: response.status, text: await response.text(), etag: response.headers.get('etag') }
}

// ---------------------------------------------------------------- setup
const ruleset = JSON.parse((await call('POST', '/v1/rulesets', { name: 'house rules', document: documentFor('rulesets', 1) })).text).data
const apis: { id: string; slug: string; versions: string[]; etag: string | null }[] = []
for (let i = 0; i < Number(values.apis); i++) {
  const payload = { name: `soak api ${i}`, visibility: i % 2 === 0 ? 'public' : 'private', ...(i % 2 === 0 ? { ruleset_id: ruleset.id, blocking_severity: 'off' } : {}) }
  const api = JSON.parse((await call('POST', '/v1/apis', payload)).text).data
  const version = JSON.parse((await call('POST', `/v1/apis/${api.id}/spec`, { document: documentFor('apis', i * VARIANTS) })).text).data
  apis.push({ id: api.id, slug: api.slug, versions: [version.id], etag: `"${version.checksum}"` })
}
const schemas: string[] = []
for (let i = 0; i < 10; i++) {
  schemas.push(JSON.parse((await call('POST', '/v1/schemas', { name: `soak schema ${i}`, document: documentFor('schemas', i * VARIANTS) })).text).data.id)
}

// ---------------------------------------------------------------- memory
/**
 * The server's resident memory, and the part of it that is the LMDB index file mapped into memory:
 * that part grows with the data written (every version adds to the index), and the kernel can drop it
 * at will. What remains is the process's own memory (heaps, caches, code), where a leak would show.
 */
function memory(): { rss: number; index: number; own: number } {
  const status = readFileSync(`/proc/${server.child.pid}/status`, 'utf8')
  const rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024
  let index = 0
  let inIndex = false
  for (const line of readFileSync(`/proc/${server.child.pid}/smaps`, 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inIndex = line.endsWith('/index/registry.mdb')
    else if (inIndex && line.startsWith('Rss:')) index += Number(/(\d+) kB/.exec(line)?.[1] ?? 0) * 1024
  }
  return { rss, index, own: rss - index }
}
const samples: { at: number; rss: number; index: number; own: number }[] = []
const started = Date.now()
const sampleMemory = () => samples.push({ at: (Date.now() - started) / 1000, ...memory() })
sampleMemory()
const sampler = setInterval(sampleMemory, 1000)

// ---------------------------------------------------------------- load
const latencies: number[] = []
let requests = 0
let errors = 0
let clientErrors = 0
const errorSamples: string[] = []
const statusCounts = new Map<number, number>()
const random = seededRandom(42)
const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]
let sequence = 0

type Operation = () => Promise<Answer>
const OPERATIONS: [number, Operation][] = [
  [25, () => call('GET', `/v1/apis/${pick(apis).id}/spec`)],
  [5, () => call('GET', `/v1/apis/${pick(apis).id}/spec?format=yaml`)],
  [10, () => { const a = pick(apis.filter((_, i) => i % 2 === 0)); return call('GET', `/@default/apis/${a.slug}/latest`, undefined, {}) }],
  [5, () => { const a = pick(apis); return call('GET', `/v1/apis/${a.id}/spec`, undefined, a.etag ? { 'if-none-match': a.etag } : {}) }],
  [10, () => call('GET', '/v1/apis?limit=20')],
  [10, () => call('GET', `/v1/apis/${pick(apis).id}/versions`)],
  [8, () => call('GET', `/v1/apis/${pick(apis).id}`)],
  [5, () => call('GET', `/v1/schemas/${pick(schemas)}/document`)],
  [8, async () => {
    const index = Math.floor(random() * apis.length)
    const api = apis[index]
    const document = documentFor('apis', index * VARIANTS + (++sequence % VARIANTS))
    const yaml = random() < 0.3
    const answer = await call('POST', `/v1/apis/${api.id}/spec`, yaml ? stringify(document) : { document }, yaml ? { 'content-type': 'application/yaml' } : {})
    if (answer.status < 300) {
      const data = JSON.parse(answer.text).data
      api.etag = `"${data.checksum}"`
      if (api.versions.length < 50) api.versions.push(data.id)
    }
    return answer
  }],
  [4, () => { const i = Math.floor(random() * apis.length); return call('POST', `/v1/apis/${apis[i].id}/spec`, { document: documentFor('apis', i * VARIANTS) }) }],
  [3, () => { const a = pick(apis); return call('POST', `/v1/apis/${a.id}/versions/${pick(a.versions)}/restore`) }],
  [3, () => { const i = Math.floor(random() * schemas.length); return call('POST', `/v1/schemas/${schemas[i]}/document`, { document: documentFor('schemas', i * VARIANTS + (++sequence % VARIANTS)) }) }],
  [2, () => call('POST', `/v1/rulesets/${ruleset.id}/lint`, { document: documentFor('apis', ++sequence % (VARIANTS * 4)) })],
]
const TOTAL = OPERATIONS.reduce((sum, [weight]) => sum + weight, 0)

const deadline = started + seconds * 1000
async function client(): Promise<void> {
  while (Date.now() < deadline) {
    let roll = random() * TOTAL
    const operation = OPERATIONS.find(([weight]) => (roll -= weight) < 0)![1]
    const t0 = performance.now()
    try {
      const answer = await operation()
      latencies.push(performance.now() - t0)
      statusCounts.set(answer.status, (statusCounts.get(answer.status) ?? 0) + 1)
      if (answer.status >= 500) {
        errors += 1
        if (errorSamples.length < 10) errorSamples.push(`${answer.status} ${answer.text.slice(0, 200)}`)
      } else if (answer.status >= 400) clientErrors += 1
    } catch (error) {
      errors += 1
      if (errorSamples.length < 10) errorSamples.push(String(error))
    }
    requests += 1
  }
}
const progress = setInterval(() => {
  const last = samples[samples.length - 1]
  process.stdout.write(`${Math.round((Date.now() - started) / 1000)} s: ${requests} requests, ${errors} errors, ` +
    `RSS ${(last.rss / 2 ** 20).toFixed(0)} MB (index ${(last.index / 2 ** 20).toFixed(0)} MB)\n`)
}, 10_000)
await Promise.all(Array.from({ length: clients }, client))
clearInterval(progress)
sampleMemory()
clearInterval(sampler)
const exit = await server.stop('SIGTERM')
rmSync(storage, { recursive: true, force: true })

// ---------------------------------------------------------------- report
latencies.sort((a, b) => a - b)
const quantile = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0
const at = (second: number) => samples.reduce((best, s) => (Math.abs(s.at - second) < Math.abs(best.at - second) ? s : best))
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`
const start = samples[0]
const warm = at(warmup)
const middle = at(warmup + (seconds - warmup) / 2)
const end = samples[samples.length - 1]
const growth = (end.rss - warm.rss) / warm.rss
const ownGrowth = (end.own - warm.own) / warm.own
const elapsed = (Date.now() - started) / 1000

console.log(`\nsoak: ${seconds} s, ${clients} clients, ${values.workers} document workers`)
console.log(`requests: ${requests} (${(requests / Math.min(elapsed, seconds)).toFixed(0)}/s); statuses: ${[...statusCounts].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}×${n}`).join(' ')}`)
console.log(`errors (5xx or no answer): ${errors}; 4xx: ${clientErrors}`)
console.log(`latency: p50 ${quantile(0.5).toFixed(1)} ms, p90 ${quantile(0.9).toFixed(1)} ms, p99 ${quantile(0.99).toFixed(1)} ms, max ${quantile(1).toFixed(1)} ms`)
const line = (what: string, pick: (s: typeof start) => number, g: number) =>
  console.log(`${what}: start ${mb(pick(start))}, after warm-up (${warm.at.toFixed(0)} s) ${mb(pick(warm))}, middle (${middle.at.toFixed(0)} s) ${mb(pick(middle))}, end ${mb(pick(end))}; growth after warm-up ${(g * 100).toFixed(1)}%`)
line('server RSS', (s) => s.rss, growth)
line('  the mapped LMDB index (grows with the data written)', (s) => s.index, (end.index - warm.index) / Math.max(1, warm.index))
line('  the process without it (heaps, caches, code)', (s) => s.own, ownGrowth)
console.log(`server exit on SIGTERM: ${exit}`)
for (const sample of errorSamples) console.log(`  error: ${sample}`)
// The memory criterion is on the process's own memory: the index's pages are data, not a leak.
const ok = errors === 0 && ownGrowth < 0.1 && exit === 0
console.log(ok ? 'PASS' : 'FAIL')
process.exitCode = ok ? 0 : 1
