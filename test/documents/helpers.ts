/** Fixtures and helpers for the documents-layer tests (everything generated here, nothing read from a corpus). */
import { createServer } from 'node:net'
import type { AddressInfo, Server, Socket } from 'node:net'
import { readFileSync } from 'node:fs'
import { RegistryError } from '../../src/errors.js'

/** Runs `fn` and returns the RegistryError it throws (failing loudly when it throws something else or nothing). */
export function registryError(fn: () => unknown): RegistryError {
  try {
    fn()
  } catch (err) {
    if (err instanceof RegistryError) return err
    throw err
  }
  throw new Error('expected a RegistryError, nothing was thrown')
}

export async function registryErrorAsync(promise: Promise<unknown>): Promise<RegistryError> {
  try {
    await promise
  } catch (err) {
    if (err instanceof RegistryError) return err
    throw err
  }
  throw new Error('expected a RegistryError, the promise resolved')
}

export function openapi30(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    openapi: '3.0.3',
    info: { title: 'Pets', version: '1.0.0' },
    paths: {
      '/pets': {
        get: {
          operationId: 'listPets',
          description: 'List the pets',
          responses: {
            '200': {
              description: 'the pets',
              content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Pet' } } } },
            },
          },
        },
      },
    },
    ...extra,
    components: mergeComponents(
      { schemas: { Pet: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } } },
      extra.components,
    ),
  }
}

/** The fixture's components plus the test's own (schemas merged, so `Pet` stays resolvable). */
function mergeComponents(base: Record<string, Record<string, unknown>>, extra: unknown): Record<string, unknown> {
  const more = (extra ?? {}) as Record<string, Record<string, unknown>>
  return { ...base, ...more, schemas: { ...base.schemas, ...(more.schemas ?? {}) } }
}

export function openapi31(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'Pets', version: '1.0.0', license: { name: 'MIT', identifier: 'MIT' } },
    paths: {
      '/pets/{petId}': {
        get: {
          operationId: 'getPet',
          parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: ['string', 'null'] } }],
          responses: {
            '200': {
              description: 'a pet',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } },
            },
          },
        },
      },
    },
    ...extra,
    components: mergeComponents(
      { schemas: { Pet: { type: 'object', properties: { name: { type: 'string', examples: ['Rex'] } }, $defs: { x: true } } } },
      extra.components,
    ),
  }
}

/** An OpenAPI 3.0 document with `n` paths: slow enough to lint with spectral:oas for timeout tests. */
export function bigOpenApi(n: number): Record<string, unknown> {
  const paths: Record<string, unknown> = {}
  const schemas: Record<string, unknown> = {}
  for (let i = 0; i < n; i++) {
    schemas[`Thing${i}`] = {
      type: 'object',
      properties: { id: { type: 'integer', example: i }, name: { type: 'string', example: `thing ${i}` } },
      example: { id: i, name: `thing ${i}` },
    }
    paths[`/things${i}/{id}`] = {
      get: {
        summary: `get thing ${i}`,
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' }, example: i }],
        responses: {
          '200': { description: 'ok', content: { 'application/json': { schema: { $ref: `#/components/schemas/Thing${i}` } } } },
        },
      },
    }
  }
  return { openapi: '3.0.3', info: { title: 'Big', version: '1' }, paths, components: { schemas } }
}

/** A TCP server that counts connections (to prove nothing ever connects). */
export async function listeningServer(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let count = 0
  const sockets = new Set<Socket>()
  const server: Server = createServer((socket) => {
    count++
    sockets.add(socket)
    socket.destroy()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    port,
    connections: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

/** A line of /etc/passwd that must never show up in any output (null when the file is not readable). */
export function passwdMarker(): string | null {
  try {
    const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.includes(':'))
    return line ? line.split(':').slice(0, 3).join(':') : null
  } catch {
    return null
  }
}

export function nested(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)
}
