import { rmSync } from 'node:fs'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildApp, type AppConfig } from '../src/app.js'
import type { DocumentProcessor } from '../src/domain/documents.js'
import { Registry, type RegistryOptions } from '../src/domain/registry.js'
import { RegistryMetrics } from '../src/metrics/registry-metrics.js'
import type { BlobStore } from '../src/storage/records.js'
import { SecretKeyring } from '../src/storage/secret-keyring.js'

import { tempDir } from './temp.js'
import { workerExecArgv } from './worker-exec-argv.js'

export { tempDir, workerExecArgv }

/**
 * REGISTRY_OUTBOUND_HOSTS of a test whose registry connects to git servers on loopback: any public host,
 * as by default, and 127.0.0.1, which the default refuses. Tests opt in to it, as an operator would.
 */
export const OUTBOUND_LOOPBACK = ['*', '127.0.0.1']

/** A line the registry wrote to the server's log (the operator's: why a sync or a delivery failed). */
export type ServerLogLine = Record<string, unknown> & { message: string }

export interface TestServer {
  app: FastifyInstance
  registry: Registry
  storage: string
  /** The first organization's key (organization `acme`). */
  key: string
  orgId: string
  /** Sends a request with the key unless `headers.authorization` is given. */
  call(options: InjectOptions & { key?: string | null }): Promise<LightMyRequestResponse>
  /** What the registry wrote to the server's log, in order. */
  serverLog: ServerLogLine[]
  close(): Promise<void>
}

/** The secret key of in-process test registries: one fixed key, so that a test can reopen its storage. */
export const testSecretKeys = (): SecretKeyring => new SecretKeyring([Buffer.alloc(32, 7)])

/**
 * Options of an in-process test registry on `storage`: one document worker, started cold and without
 * the test runner's module hooks (workerExecArgv), and small caches.
 */
export const testRegistryOptions = (storage: string): RegistryOptions => ({
  storage, workers: 1, lintTimeoutMs: 60_000, lintMemoryMb: 1024, documentCacheBytes: 16 * 1024 * 1024,
  warmWorkers: false, workerExecArgv: workerExecArgv(),
})

export const appConfig = (overrides: Partial<AppConfig> = {}): AppConfig => ({
  bodyLimit: 64 * 1024 * 1024, publicHost: undefined, rateLimitPerMinute: 0, logLevel: 'silent', ...overrides,
})

/** A registry on its own temporary storage directory with one organization, reached through app.inject. */
export async function startTestServer(options: {
  config?: Partial<AppConfig>
  lintTimeoutMs?: number
  storage?: string
  /** Wraps (or replaces) the worker pool, e.g. to count how often Spectral runs. */
  wrapDocuments?: (documents: DocumentProcessor, metrics: RegistryMetrics) => DocumentProcessor
  /** Wraps the blob store, e.g. to inject write faults. */
  wrapBlobs?: (blobs: BlobStore) => BlobStore
  /** REGISTRY_OUTBOUND_HOSTS entries (default: none, the default policy: any public host, no internal one). */
  outboundHosts?: string[]
  /** REGISTRY_REFERENCE_SPLIT: documents larger than this get reference pages in parts (default 1 MB). */
  referenceSplitBytes?: number
  /** How the one document worker is shared between organizations and keys (default: the server's). */
  fairness?: RegistryOptions['fairness']
  /** The keys that seal stored secrets (default: testSecretKeys()). */
  secretKeys?: SecretKeyring
  /** Serve from this PostgreSQL database instead of the storage directory's LMDB (test/support/postgres.ts makes one). */
  databaseUrl?: string
} = {}): Promise<TestServer> {
  const storage = options.storage ?? tempDir()
  const metrics = new RegistryMetrics()
  const registry = await Registry.open({
    ...testRegistryOptions(storage), lintTimeoutMs: options.lintTimeoutMs ?? 60_000,
    outboundHosts: options.outboundHosts, referenceSplitBytes: options.referenceSplitBytes, fairness: options.fairness,
    secretKeys: options.secretKeys ?? testSecretKeys(), databaseUrl: options.databaseUrl,
  }, metrics, {
    blobs: options.wrapBlobs,
    documents: options.wrapDocuments && ((documents) => options.wrapDocuments!(documents, metrics)),
  })
  const created = await registry.organizations.bySlug('acme')
    ? undefined
    : await registry.organizations.create('acme', 'Acme')
  const app = await buildApp(registry, appConfig(options.config), { logger: false, metrics })
  const serverLog: ServerLogLine[] = []
  registry.log.use({ warn: (details, message) => serverLog.push({ ...details, message }) })
  const key = created?.secret ?? ''
  return {
    app, registry, storage, key, serverLog, orgId: created?.organization.id ?? (await registry.organizations.requireBySlug('acme')).id,
    call: ({ key: callKey, ...request }) => {
      const headers = { ...(request.headers ?? {}) } as Record<string, string>
      const useKey = callKey === undefined ? key : callKey
      if (useKey !== null && headers.authorization === undefined) headers.authorization = `Bearer ${useKey}`
      return app.inject({ ...request, headers })
    },
    close: async () => {
      await app.close()
      await registry.close()
      if (!options.storage) rmSync(storage, { recursive: true, force: true })
    },
  }
}

/** A small valid OpenAPI 3.1 document; `extra` is merged into `info`. */
export function petstore(version = '1.0.0', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'Petstore', version, description: 'Pets.', ...extra },
    paths: {
      '/pets': {
        get: {
          operationId: 'listPets',
          summary: 'List pets',
          responses: {
            '200': {
              description: 'the pets',
              content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Pet' } } } },
            },
          },
        },
      },
    },
    components: {
      schemas: { Pet: { type: 'object', required: ['id'], properties: { id: { type: 'integer' }, name: { type: 'string' } } } },
    },
  }
}

export const json = (response: LightMyRequestResponse): any => JSON.parse(response.body)

/**
 * A worker pool where the next task of one kind after `arm()` waits until `release()`: `inFlight`
 * resolves once it is waiting, so a test can change the registry while an upload is being checked.
 */
export function holdNextTask(op: 'check' | 'diff') {
  let release!: () => void
  let entered!: () => void
  const released = new Promise<void>((resolve) => { release = resolve })
  const inFlight = new Promise<void>((resolve) => { entered = resolve })
  let armed = false
  const hold = async () => {
    if (!armed) return
    armed = false
    entered()
    await released
  }
  const wrap = (inner: DocumentProcessor): DocumentProcessor => ({
    digest: (task) => inner.digest(task),
    check: async (task) => { if (op === 'check') await hold(); return inner.check(task) },
    lint: (task) => inner.lint(task),
    convert: (task) => inner.convert(task),
    bundle: (task) => inner.bundle(task),
    diff: async (task) => { if (op === 'diff') await hold(); return inner.diff(task) },
    terms: (task) => inner.terms(task),
    locate: (task) => inner.locate(task),
    close: () => inner.close(),
  })
  return { wrap, release, inFlight, arm: () => { armed = true } }
}

/** Counts worker tasks by kind, so a test can see whether Spectral ran. */
export function countingDocuments(counts: { lint: number; check: number; digest: number }) {
  return (inner: DocumentProcessor): DocumentProcessor => ({
    digest: (task) => { counts.digest += 1; return inner.digest(task) },
    check: (task) => { counts.check += 1; if (task.ruleset) counts.lint += 1; return inner.check(task) },
    lint: (task) => { counts.lint += 1; return inner.lint(task) },
    convert: (task) => inner.convert(task),
    bundle: (task) => inner.bundle(task),
    diff: (task) => inner.diff(task),
    terms: (task) => inner.terms(task),
    locate: (task) => inner.locate(task),
    close: () => inner.close(),
  })
}

/** A ruleset with one rule per severity, each on a field of `info`: a document chooses its findings. */
export const SEVERITY_RULESET = {
  rules: {
    'needs-owner': { given: '$.info', severity: 'error', then: { field: 'x-owner', function: 'truthy' }, message: 'info needs x-owner' },
    'needs-description': { given: '$.info', severity: 'warn', then: { field: 'description', function: 'truthy' }, message: 'info needs a description' },
    'needs-contact': { given: '$.info', severity: 'info', then: { field: 'contact', function: 'truthy' }, message: 'info needs a contact' },
    'needs-license': { given: '$.info', severity: 'hint', then: { field: 'license', function: 'truthy' }, message: 'info needs a license' },
  },
}

/** A petstore whose only finding under SEVERITY_RULESET has the given severity (or none). */
export function docWithFinding(severity: 'error' | 'warn' | 'info' | 'hint' | 'none', version = '1.0.0') {
  const info: Record<string, unknown> = { 'x-owner': 'team', description: 'Pets.', contact: { name: 'a' }, license: { name: 'MIT' } }
  const field = { error: 'x-owner', warn: 'description', info: 'contact', hint: 'license', none: '' }[severity]
  if (field) delete info[field]
  const doc = petstore(version)
  doc.info = { title: 'Petstore', version, ...info }
  return doc
}
