import { rmSync } from 'node:fs'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildApp, type AppConfig } from '../src/app.js'
import { Registry } from '../src/domain/registry.js'

import { tempDir } from './temp.js'

export { tempDir }

export interface TestServer {
  app: FastifyInstance
  registry: Registry
  storage: string
  /** The first organization's key (organization `acme`). */
  key: string
  orgId: string
  /** Sends a request with the key unless `headers.authorization` is given. */
  call(options: InjectOptions & { key?: string | null }): Promise<LightMyRequestResponse>
  close(): Promise<void>
}

export const appConfig = (overrides: Partial<AppConfig> = {}): AppConfig => ({
  bodyLimit: 64 * 1024 * 1024, publicHost: undefined, rateLimitPerMinute: 0, logLevel: 'silent', ...overrides,
})

/** A registry on its own temporary storage directory with one organization, reached through app.inject. */
export async function startTestServer(options: { config?: Partial<AppConfig>; lintTimeoutMs?: number; storage?: string } = {}): Promise<TestServer> {
  const storage = options.storage ?? tempDir()
  const registry = Registry.open({
    storage, workers: 1, lintTimeoutMs: options.lintTimeoutMs ?? 60_000, lintMemoryMb: 1024, documentCacheBytes: 16 * 1024 * 1024,
  })
  const created = registry.organizations.bySlug('acme')
    ? undefined
    : await registry.organizations.create('acme', 'Acme')
  const app = await buildApp(registry, appConfig(options.config), { logger: false })
  const key = created?.secret ?? ''
  return {
    app, registry, storage, key, orgId: created?.organization.id ?? registry.organizations.requireBySlug('acme').id,
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
