/**
 * Several registry processes on one PostgreSQL database behind a round-robin proxy (issue 16, item 14):
 * the topology of docs/storage.md's replicas, with processes instead of containers. Each replica is the
 * built server (`dist/`: run `npm run build` first) with its own storage directory (the git mirror's
 * derived repositories) and the same secret key; the proxy sends each request to the next live replica
 * in turn and says which one answered in `x-replica`, so that consecutive requests of a test land on
 * different replicas and the test can see it.
 */
import { request as httpRequest, createServer, Agent, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { rmSync } from 'node:fs'
import { tempDir } from '../temp.js'
import { startServer, type RunningServer } from '../process/spawn.js'
import type { PostgresServer } from './postgres.js'

/** The header the proxy adds to every answer: the index of the replica that gave it. */
export const REPLICA_HEADER = 'x-replica'

export interface Replica {
  readonly index: number
  /** Its own storage directory (the git mirror's repositories). */
  readonly storage: string
  /** The running process; replaced by `restart`. */
  server: RunningServer
  /** False from `kill`/`stop` until `restart`: the proxy passes it by. */
  up: boolean
  /** Requests the proxy has passed to it and not yet seen answered to the end. */
  inFlight: number
}

export interface Answer {
  status: number
  headers: IncomingHttpHeaders
  text: string
  /** The replica that answered (the proxy's `x-replica`). */
  replica: number
  json(): any
}

export interface Replicas {
  /** The proxy's address: each request goes to the next live replica. */
  readonly url: string
  readonly databaseUrl: string
  /**
   * The environment every replica gets (the database URL, the bootstrap and secret keys): a CLI run on
   * the same database (`registry verify`) takes the same.
   */
  readonly env: Record<string, string>
  /** The bootstrap key of the `default` organization. */
  readonly key: string
  readonly replicas: Replica[]
  /** One request through the proxy (`host` sets the Host header, as a site's domain would). */
  request(method: string, path: string, options?: { body?: unknown; key?: string | null; host?: string; headers?: Record<string, string> }): Promise<Answer>
  /**
   * Ends a replica's process (SIGKILL: as a crash) and takes it out of the rotation. Requests it was
   * answering end as a client of nginx would see them: 502 before the answer's headers, the
   * connection cut after them.
   */
  kill(index: number, signal?: NodeJS.Signals): Promise<void>
  /** Starts a stopped or killed replica again on its storage directory and puts it back in the rotation. */
  restart(index: number): Promise<void>
}

/**
 * The `application_name` of replica `index`'s database sessions (libpq's and node-postgres's
 * PGAPPNAME), by which a test finds in `pg_stat_activity` and `pg_locks` which replica holds what
 * (the git mirror writer's advisory lock).
 */
export const replicaApplicationName = (index: number): string => `registry-replica-${index}`

/** What the replicas end with: a tap test, or the bench (which runs them outside tap). */
export interface Teardowns {
  teardown(fn: () => unknown): void
}

export interface ReplicaOptions {
  /** How many registry processes (default 3). */
  count?: number
  /** More environment for every replica. */
  env?: Record<string, string>
}

const KEY = `sk_${'r'.repeat(43)}`
const SECRET_KEY = Buffer.alloc(32, 7).toString('base64')

/**
 * Starts `count` replicas on a new database of `postgres` and the proxy; all of it ends with the test
 * (or with whatever `t` stands for).
 * The replicas start together (the migrations run once under their lock; the bootstrap creates one
 * `default` organization whatever the order).
 */
export async function startReplicas(t: Teardowns, postgres: PostgresServer, options: ReplicaOptions = {}): Promise<Replicas> {
  const databaseUrl = await postgres.createDatabase()
  const env = {
    REGISTRY_DATABASE_URL: databaseUrl, REGISTRY_BOOTSTRAP_KEY: KEY, REGISTRY_SECRET_KEY: SECRET_KEY, ...options.env,
  }
  const count = options.count ?? 3
  const envOf = (index: number) => ({ ...env, PGAPPNAME: replicaApplicationName(index) })
  const replicas: Replica[] = await Promise.all(Array.from({ length: count }, async (_, index) => {
    const storage = tempDir('registry-replica-')
    return { index, storage, server: await startServer(storage, envOf(index)), up: true, inFlight: 0 }
  }))
  t.teardown(async () => {
    await Promise.all(replicas.map((replica) => replica.server.stop()))
    for (const replica of replicas) rmSync(replica.storage, { recursive: true, force: true })
  })

  const agent = new Agent({ keepAlive: true })
  let next = 0
  const proxy: Server = createServer((req, res) => {
    const live = replicas.filter((replica) => replica.up)
    if (live.length === 0) {
      res.writeHead(502).end('no replica is up')
      return
    }
    const replica = live[next++ % live.length]
    replica.inFlight += 1
    res.once('close', () => { replica.inFlight -= 1 })
    const target = new URL(replica.server.url)
    // The Host header goes through as sent (as nginx's `proxy_set_header Host $host`): sites route by it.
    const upstream = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, { ...answer.headers, [REPLICA_HEADER]: String(replica.index) })
      answer.pipe(res)
      // The replica died in the middle of its answer: cut the client's connection too (as nginx does),
      // rather than end a truncated body as if it were whole.
      answer.on('aborted', () => res.destroy())
      answer.on('error', () => res.destroy())
    })
    upstream.on('error', (error) => {
      if (res.headersSent) {
        res.destroy()
        return
      }
      res.writeHead(502, { [REPLICA_HEADER]: String(replica.index) })
      res.end(`replica ${replica.index}: ${error.message}`)
    })
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    agent.destroy()
    proxy.closeAllConnections()
    proxy.close(() => resolve())
  }))
  const { port } = proxy.address() as AddressInfo
  const url = `http://127.0.0.1:${port}`

  return {
    url, databaseUrl, env, key: KEY, replicas,
    request: (method, path, options = {}) => send(url, method, path, { key: KEY, ...options }),
    async kill(index, signal = 'SIGKILL') {
      replicas[index].up = false
      await replicas[index].server.stop(signal)
    },
    async restart(index) {
      const replica = replicas[index]
      if (replica.server.child.exitCode === null && replica.server.child.signalCode === null) await replica.server.stop()
      replica.server = await startServer(replica.storage, envOf(index))
      replica.up = true
    },
  }
}

/** One request with node:http (fetch may not set Host); JSON bodies as JSON, strings as they are. */
function send(
  base: string, method: string, path: string,
  options: { body?: unknown; key?: string | null; host?: string; headers?: Record<string, string> },
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.key) headers.authorization = `Bearer ${options.key}`
  if (options.host) headers.host = options.host
  let body: Buffer | undefined
  if (options.body !== undefined) {
    body = Buffer.from(typeof options.body === 'string' ? options.body : JSON.stringify(options.body))
    headers['content-type'] ??= 'application/json'
    headers['content-length'] = String(body.length)
  }
  const target = new URL(path, base)
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: target.hostname, port: target.port, method, path: target.pathname + target.search, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        resolve({
          status: res.statusCode ?? 0, headers: res.headers, text, replica: Number(res.headers[REPLICA_HEADER] ?? -1),
          json: () => JSON.parse(text),
        })
      })
      res.on('error', reject)
      // A connection cut before the end of the body (the proxy does when the replica died).
      res.on('aborted', () => reject(new Error(`${method} ${path}: the connection was cut before the end of the answer`)))
    })
    req.on('error', reject)
    req.end(body)
  })
}
