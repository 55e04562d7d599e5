/**
 * The service's own OpenAPI description (`/openapi.json`, issue 18 item 8): @fastify/swagger's options.
 * The operations come from the route schemas (src/http/*-routes.ts), which say what each route takes
 * and answers; this adds what no route says: the document's servers, tags and security schemes, an
 * operationId where a route names none, and the one thing a route schema cannot say (an optional body).
 *
 * The registry's TypeScript client (src/client, which the CLI's remote commands use) is generated from
 * this description: after changing it or a route schema, `npm run generate:client` and commit the
 * result (test/client/generated.test.ts fails until then).
 */
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import { CSRF_HEADER, SESSION_COOKIE } from './auth.js'
import { operationIdOf } from './operation-ids.js'

/** The groups of operations, in reading order; every route's `tags` names one of them. */
const OPERATION_TAGS = [
  { name: 'APIs', description: 'OpenAPI descriptions: their versions, documents, lint findings, diffs and changelogs' },
  { name: 'Schemas', description: 'JSON Schemas and their versions' },
  { name: 'Rulesets', description: 'Spectral rulesets, their versions, and linting any document with one' },
  { name: 'Organization', description: 'The organization at a glance, and search across its resources' },
  { name: 'Public registry', description: "An organization's public APIs, schemas and rulesets, readable without a key" },
  { name: 'Sites', description: 'Documentation sites and their guides' },
  { name: 'Sites (pages)', description: "A public site's pages (HTML) and the documents its reference pages read" },
  { name: 'SDKs', description: 'SDKs generated from APIs, and the repositories they are delivered to' },
  { name: 'Builds', description: 'SDK builds: status, log and archive' },
  { name: 'Repository sync', description: 'APIs that follow a file in a GitHub or GitLab repository, and the webhooks those send' },
  { name: 'Mirror', description: "The organization's git mirror and the remote it is pushed to" },
  { name: 'Git', description: 'The git mirror over smart HTTP (clone and fetch)' },
  { name: 'Webhooks', description: 'Outbound webhooks: endpoints the registry sends its events to, and their deliveries' },
  { name: 'Keys', description: "The organization's API keys (admin keys only)" },
  { name: 'Session', description: 'Console sign-in with a key, as a session cookie' },
  { name: 'Service', description: 'What this server is, its health, readiness and metrics' },
]

/**
 * A route schema's mark for a body that may be left out (`POST /v1/sdks/{sdk}/builds`): @fastify/swagger
 * makes every described body required, so the document is corrected where a route carries the mark.
 */
export const OPTIONAL_BODY = 'x-optional-body'

type Operation = { requestBody?: { required?: boolean }; [OPTIONAL_BODY]?: boolean }

function markOptionalBodies(document: { paths?: Record<string, Record<string, unknown>> }): void {
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item) as Operation[]) {
      if (operation === null || typeof operation !== 'object' || operation[OPTIONAL_BODY] !== true) continue
      delete operation[OPTIONAL_BODY]
      if (operation.requestBody) operation.requestBody.required = false
    }
  }
}

export function serviceDescription(service: { title: string; version: string }): FastifyDynamicSwaggerOptions {
  return {
    // Every operation gets an operationId (its method and path as words) unless its route names one.
    transform: ({ schema, url, route }) => ({
      schema: { ...schema, operationId: (schema as { operationId?: string } | undefined)?.operationId ?? operationIdOf(String(route.method), url) } as typeof schema,
      url,
    }),
    transformObject: (documentObject) => {
      const document = 'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject
      markOptionalBodies(document as Parameters<typeof markOptionalBodies>[0])
      return document
    },
    // Shared schemas keep their $id as their name in components.schemas (`Problem`, not `def-0`).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: service.title,
        version: service.version,
        description: 'OpenAPI documents, JSON Schemas and Spectral rulesets with full version history and lint-gated publishes.',
      },
      // Relative: wherever this description was read from (every registry is self-hosted).
      servers: [{ url: '/', description: 'the server this description was read from' }],
      tags: OPERATION_TAGS,
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An organization key: sk_…' },
          session: {
            type: 'apiKey', in: 'cookie', name: SESSION_COOKIE,
            description: `A console session (POST /v1/session); requests other than GET also need the ${CSRF_HEADER} header`,
          },
          basic: { type: 'http', scheme: 'basic', description: 'git over HTTP: an organization key as the password (any user name)' },
          metricsToken: { type: 'http', scheme: 'bearer', description: 'REGISTRY_METRICS_TOKEN, when the server has one' },
        },
      },
    },
  }
}
