/**
 * The crash test: a real server process on a temporary storage directory, several clients streaming
 * writes, `kill -9` at a random moment, restart, check (the API and `registry verify`), and again.
 */
import { rmSync } from 'node:fs'
import { cli, startServer, type RunningServer } from '../process/spawn.js'
import { tempDir } from '../temp.js'
import { checkState } from './checks.js'
import { Ledger } from './ledger.js'
import { runClient, seededRandom, type Target } from './workload.js'

export interface CrashOptions {
  kills: number
  /** Concurrent clients. */
  clients?: number
  /** How long the clients write before each kill: a random time in [min, max] ms. */
  minRunMs?: number
  maxRunMs?: number
  seed?: number
  /** Progress lines. */
  log?: (line: string) => void
}

export interface CrashResult {
  seed: number
  kills: number
  /** Writes the server acknowledged (2xx), over all rounds. */
  acknowledgedWrites: number
  /** Requests cut off by a kill. */
  unanswered: number
  /** Acknowledged versions found as answered, in the last check. */
  acknowledgedVersions: number
  /** Resources and versions present at the end, and documents read and checked over the run. */
  resources: number
  versions: number
  documents: number
  problems: string[]
  seconds: number
}

// Info level: the harness reads the "registry listening on" line.
const ENV = { REGISTRY_WORKERS: '2', REGISTRY_RATE_LIMIT: '0', LOG_LEVEL: 'info' }
const KEY = `sk_${'crash'.repeat(8)}`
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
/** How long a round may go on past its random length for its first acknowledged version. */
const FIRST_VERSION_WAIT_MS = 60_000

export async function runCrashTest(options: CrashOptions): Promise<CrashResult> {
  const started = Date.now()
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31)
  const random = seededRandom(seed)
  const log = options.log ?? (() => {})
  const clients = options.clients ?? 6
  const minRunMs = options.minRunMs ?? 200
  const maxRunMs = options.maxRunMs ?? 1500
  const storage = tempDir('registry-crash-')
  const ledger = new Ledger()
  const verified = new Set<string>()
  let sequence = 0
  const next = () => ++sequence
  const result: CrashResult = {
    seed, kills: 0, acknowledgedWrites: 0, unanswered: 0, acknowledgedVersions: 0, resources: 0, versions: 0, documents: 0, problems: [], seconds: 0,
  }
  let server: RunningServer | undefined
  try {
    server = await startServer(storage, { ...ENV, REGISTRY_BOOTSTRAP_KEY: KEY })
    for (let round = 1; round <= options.kills; round++) {
      const target: Target = { url: server.url, key: KEY }
      const stop = { stopped: false }
      const writers = Array.from({ length: clients }, () => runClient(target, ledger, random, next, stop))
      const before = ledger.writes
      const versionsBefore = ledger.versionsAcknowledged
      await sleep(minRunMs + random() * (maxRunMs - minRunMs))
      // Until the round's first version is answered, the clients go on: on a loaded machine a round can end
      // while the restarted server's workers are still warming up, and a round that acknowledged no version
      // checks none (the result counts the last round's).
      for (let waited = 0; ledger.versionsAcknowledged === versionsBefore && waited < FIRST_VERSION_WAIT_MS; waited += 50) await sleep(50)
      stop.stopped = true
      await server.stop('SIGKILL')
      await Promise.all(writers)
      result.kills = round
      ledger.round = round + 1

      server = await startServer(storage, ENV)
      const restarted: Target = { url: server.url, key: KEY }
      const report = await checkState(restarted, ledger, verified)
      const verify = cli(['--storage', storage, '--json', 'verify'])
      const verification = verify.code === 0 ? undefined : `registry verify exited ${verify.code}: ${verify.stdout}${verify.stderr}`
      result.problems.push(...ledger.unexpected.splice(0), ...report.problems, ...(verification ? [verification] : []))
      Object.assign(result, { acknowledgedVersions: report.acknowledged, resources: report.resources, versions: report.versions })
      result.documents += report.documents
      log(`kill ${round}: ${ledger.writes - before} writes acknowledged, ${report.resources} resources, ${report.versions} versions ` +
        `(${report.acknowledged} acknowledged ones checked, ${report.documents} new documents read), verify ${verification ? 'FAILED' : 'ok'}`)
      if (result.problems.length > 0) break
    }
    const code = await server.stop('SIGTERM')
    if (code !== 0) result.problems.push(`the last server exited ${code} on SIGTERM`)
  } finally {
    await server?.stop('SIGKILL')
    if (result.problems.length === 0) rmSync(storage, { recursive: true, force: true })
    else log(`storage kept for inspection: ${storage}`)
  }
  result.acknowledgedWrites = ledger.writes
  result.unanswered = ledger.unanswered
  result.seconds = (Date.now() - started) / 1000
  return result
}
