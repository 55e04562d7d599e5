import { isIP } from 'node:net'
import { availableParallelism } from 'node:os'
import { resolve } from 'node:path'
import { defaultFairness, type FairnessLimits } from './documents/fair-scheduler.js'
import { parseOutboundHosts } from './domain/outbound/outbound.js'

/** Runtime settings, read from the environment (CONTRACT §1). */
export interface Config {
  port: number
  host: string
  storage: string
  /**
   * REGISTRY_DATABASE_URL: serve from this PostgreSQL database (docs/storage.md) instead of the storage
   * directory's LMDB; the directory then holds only the git mirror's repositories, derived and rebuilt.
   */
  databaseUrl: string | undefined
  publicHost: string | undefined
  bodyLimit: number
  lintTimeoutMs: number
  lintMemoryMb: number
  workers: number
  /** Spectral runs after which a worker is replaced (0: never). */
  workerMaxRuns: number
  /** Heap size (MB) after a task above which a worker is replaced (0: never). */
  workerMaxHeapMb: number
  /** How the document workers are shared: tasks running and waiting per organization and per key. */
  fairness: Omit<FairnessLimits, 'slots'>
  /** When set, GET /metrics requires `Authorization: Bearer <this>`. */
  metricsToken: string | undefined
  bootstrapKey: string | undefined
  logLevel: string
  /** Requests per minute per key (or per client address without a key); 0 turns limiting off. */
  rateLimitPerMinute: number
  /** Failed authentications per minute from one client address before it is refused (429); 0 turns it off. */
  authFailureLimit: number
  /** Fastify's `trustProxy`: which peers' X-Forwarded-For is believed for the client address (false: none). */
  trustProxy: TrustProxy
  /** Bytes of stored documents kept in memory for fast reads. */
  documentCacheBytes: number
  /** Documents larger than this get their reference pages in parts, one per tag (0: never). */
  referenceSplitBytes: number
  /** REGISTRY_OUTBOUND_HOSTS, normalized: where sync, SDK delivery and mirror pushes may connect; empty: any public host, no internal one. */
  outboundHosts: string[]
  /** Longest attempt to deliver a webhook (REGISTRY_WEBHOOK_TIMEOUT_MS). */
  webhookTimeoutMs: number
  /**
   * REGISTRY_LEASE_SECONDS, in ms: how long an SDK build's or a repository sync's claim holds without
   * renewal, so how soon another replica takes over the work of one that died.
   */
  leaseMs: number
}

/** REGISTRY_TRUST_PROXY as Fastify takes it: no proxy, every peer, a hop count, or addresses and subnets. */
export type TrustProxy = boolean | number | string[]

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/**
 * `true` (every peer is a proxy: only when nothing reaches the server but through it), a number of
 * hops, or a comma-separated list of proxy addresses, subnets (`10.0.0.0/8`) and the names
 * `loopback`, `linklocal`, `uniquelocal`. Unset: no proxy is trusted and X-Forwarded-For is ignored.
 */
export function parseTrustProxy(value: string | undefined): TrustProxy {
  const text = value?.trim() ?? ''
  if (text === '' || text === 'false') return false
  if (text === 'true') return true
  if (/^\d+$/.test(text)) return Number(text)
  const entries = text.split(',').map((entry) => entry.trim()).filter(Boolean)
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/')
    const ip = isIP(address)
    const maxBits = ip === 6 ? 128 : 32
    const validBits = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= maxBits)
    if (!PROXY_NAMES.has(entry) && (ip === 0 || !validBits || extra !== undefined)) {
      throw new ConfigError(`REGISTRY_TRUST_PROXY must be true, a number of hops, or proxy addresses, subnets and loopback/linklocal/uniquelocal separated by commas; '${entry}' is none of them`)
    }
  }
  return entries
}

/** A setting the environment got wrong: the message names the variable, what it must be and what it was. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }

/** Parses sizes such as `64mb`, `512kb` or a plain number of bytes. */
export function parseSize(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(text)
  if (!match) throw new Error(`not a size: ${text}`)
  return Math.floor(Number(match[1]) * UNITS[(match[2] ?? 'b').toLowerCase()])
}

function integer(name: string, value: string | undefined, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined || value === '') return fallback
  const n = Number(value)
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer ${max < Number.MAX_SAFE_INTEGER ? `from ${min} to ${max}` : `>= ${min}`}, got ${value}`)
  }
  return n
}

function size(name: string, value: string | undefined, fallback: string): number {
  try {
    return parseSize(value || fallback)
  } catch {
    throw new ConfigError(`${name} must be a size such as 64mb, 512kb or a number of bytes, got ${value}`)
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

function oneOf(name: string, value: string | undefined, allowed: string[], fallback: string): string {
  if (value === undefined || value === '') return fallback
  if (!allowed.includes(value)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got ${value}`)
  return value
}

/** Reads the settings; a bad one throws a ConfigError naming it (start-up says so in one line). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return readConfig(env)
  } catch (error) {
    throw error instanceof ConfigError ? error : new ConfigError((error as Error).message)
  }
}

/** REGISTRY_ORG_WORKERS, REGISTRY_KEY_WORKERS, REGISTRY_KEY_QUEUE, REGISTRY_ORG_QUEUE (see fair-scheduler.ts). */
function fairness(env: NodeJS.ProcessEnv, workers: number): Omit<FairnessLimits, 'slots'> {
  const defaults = defaultFairness(workers)
  const perOrganization = integer('REGISTRY_ORG_WORKERS', env.REGISTRY_ORG_WORKERS, defaults.perOrganization, 1)
  return {
    perOrganization,
    perKey: integer('REGISTRY_KEY_WORKERS', env.REGISTRY_KEY_WORKERS, Math.min(defaults.perKey, perOrganization), 1),
    queuePerKey: integer('REGISTRY_KEY_QUEUE', env.REGISTRY_KEY_QUEUE, defaults.queuePerKey, 0),
    queuePerOrganization: integer('REGISTRY_ORG_QUEUE', env.REGISTRY_ORG_QUEUE, defaults.queuePerOrganization, 0),
  }
}

/**
 * REGISTRY_DATABASE_URL (issue 16, docs/storage.md): PostgreSQL mode is refused until every feature
 * keeps its state behind the storage port. Serving some features from PostgreSQL and the others from
 * the LMDB storage would answer from two states that disagree, so nothing is opened.
 */
/** REGISTRY_DATABASE_URL: a PostgreSQL connection URL, or unset (the storage directory's LMDB). */
function databaseUrl(value: string | undefined): string | undefined {
  if (!value) return undefined
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new ConfigError('REGISTRY_DATABASE_URL must be a URL such as postgres://user:password@host:5432/registry')
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError(`REGISTRY_DATABASE_URL must be a postgres:// URL, not ${url.protocol}//…`)
  }
  return value
}

function readConfig(env: NodeJS.ProcessEnv): Config {
  const lintMemoryMb = integer('REGISTRY_LINT_MEMORY_MB', env.REGISTRY_LINT_MEMORY_MB, 4096, 64)
  const workers = integer('REGISTRY_WORKERS', env.REGISTRY_WORKERS, Math.max(1, Math.min(4, availableParallelism())), 1)
  return {
    port: integer('PORT', env.PORT, 8080, 0, 65535),
    host: env.HOST || '127.0.0.1',
    storage: resolve(env.REGISTRY_STORAGE || './storage'),
    databaseUrl: databaseUrl(env.REGISTRY_DATABASE_URL),
    publicHost: env.REGISTRY_PUBLIC_HOST || undefined,
    bodyLimit: size('REGISTRY_BODY_LIMIT', env.REGISTRY_BODY_LIMIT, '64mb'),
    lintTimeoutMs: integer('REGISTRY_LINT_TIMEOUT_MS', env.REGISTRY_LINT_TIMEOUT_MS, 120_000, 1),
    lintMemoryMb,
    workers,
    fairness: fairness(env, workers),
    workerMaxRuns: integer('REGISTRY_WORKER_MAX_RUNS', env.REGISTRY_WORKER_MAX_RUNS, 1000),
    workerMaxHeapMb: integer('REGISTRY_WORKER_MAX_HEAP_MB', env.REGISTRY_WORKER_MAX_HEAP_MB, Math.min(1024, Math.floor(lintMemoryMb / 2))),
    metricsToken: env.REGISTRY_METRICS_TOKEN || undefined,
    bootstrapKey: env.REGISTRY_BOOTSTRAP_KEY || undefined,
    logLevel: oneOf('LOG_LEVEL', env.LOG_LEVEL, LOG_LEVELS, 'info'),
    rateLimitPerMinute: integer('REGISTRY_RATE_LIMIT', env.REGISTRY_RATE_LIMIT, 6000),
    authFailureLimit: integer('REGISTRY_AUTH_FAILURE_LIMIT', env.REGISTRY_AUTH_FAILURE_LIMIT, 30),
    trustProxy: parseTrustProxy(env.REGISTRY_TRUST_PROXY),
    documentCacheBytes: size('REGISTRY_DOCUMENT_CACHE', env.REGISTRY_DOCUMENT_CACHE, '256mb'),
    referenceSplitBytes: size('REGISTRY_REFERENCE_SPLIT', env.REGISTRY_REFERENCE_SPLIT, '1mb'),
    outboundHosts: parseOutboundHosts(env.REGISTRY_OUTBOUND_HOSTS),
    webhookTimeoutMs: integer('REGISTRY_WEBHOOK_TIMEOUT_MS', env.REGISTRY_WEBHOOK_TIMEOUT_MS, 10_000, 100, 60_000),
    // At least 3 s: a claim is renewed every third of its length, and a renewal late by more than the
    // other two thirds (a busy machine) hands live work to another replica, which runs it again.
    leaseMs: integer('REGISTRY_LEASE_SECONDS', env.REGISTRY_LEASE_SECONDS, 60, 3, 3600) * 1000,
  }
}
