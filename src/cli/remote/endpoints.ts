import type { RegistryClient } from '../../client/index.js'

/** The three kinds of resource, as the HTTP API names them. */
export const KINDS = {
  api: { plural: 'apis', label: 'API' },
  schema: { plural: 'schemas', label: 'schema' },
  ruleset: { plural: 'rulesets', label: 'ruleset' },
} as const
export type Kind = keyof typeof KINDS

export type DocumentFormat = 'json' | 'yaml'

/**
 * The requests the remote commands send, for each kind of resource, written out path by path: the
 * typed client checks each path, parameter and body against the registry's description, which a path
 * assembled from the kind's name would escape. Where a kind has no such route, there is no entry
 * (findings are the lint's, which APIs alone have).
 */
export function endpoints(registry: RegistryClient) {
  /** The document as the registry serves it, as text: `parseAs: 'text'` (YAML is not JSON). */
  const asText = (format: DocumentFormat) => ({
    parseAs: 'text' as const,
    headers: { accept: format === 'yaml' ? 'application/yaml' : 'application/json' },
  })
  // A publish sends no `dry_run` parameter at all, as a person with curl would.
  const dryRunQuery = (dryRun: boolean) => (dryRun ? { dry_run: true } : {})
  return {
    api: {
      read: (api: string) => registry.GET('/v1/apis/{api}', { params: { path: { api } } }),
      create: (body: { name: string; slug: string }) => registry.POST('/v1/apis', { body }),
      list: (page: number) => registry.GET('/v1/apis', { params: { query: { limit: 100, page } } }),
      // The text as written, in the JSON envelope: the registry reads JSON or YAML from it alike.
      upload: (api: string, document: string, dryRun: boolean) =>
        registry.POST('/v1/apis/{api}/spec', { params: { path: { api }, query: dryRunQuery(dryRun) }, body: { document } }),
      current: (api: string, format: DocumentFormat) =>
        registry.GET('/v1/apis/{api}/spec', { params: { path: { api }, query: { format } }, ...asText(format) }),
      version: (api: string, version: string, format: DocumentFormat) =>
        registry.GET('/v1/apis/{api}/versions/{version}/document', { params: { path: { api, version }, query: { format } }, ...asText(format) }),
      restore: (api: string, version: string) => registry.POST('/v1/apis/{api}/versions/{version}/restore', { params: { path: { api, version } } }),
      findings: (api: string, version: string) => registry.GET('/v1/apis/{api}/versions/{version}/findings', { params: { path: { api, version } } }),
    },
    schema: {
      read: (schema: string) => registry.GET('/v1/schemas/{schema}', { params: { path: { schema } } }),
      create: (body: { name: string; slug: string }) => registry.POST('/v1/schemas', { body }),
      list: (page: number) => registry.GET('/v1/schemas', { params: { query: { limit: 100, page } } }),
      upload: (schema: string, document: string, dryRun: boolean) =>
        registry.POST('/v1/schemas/{schema}/document', { params: { path: { schema }, query: dryRunQuery(dryRun) }, body: { document } }),
      current: (schema: string, format: DocumentFormat) =>
        registry.GET('/v1/schemas/{schema}/document', { params: { path: { schema }, query: { format } }, ...asText(format) }),
      version: (schema: string, version: string, format: DocumentFormat) =>
        registry.GET('/v1/schemas/{schema}/versions/{version}/document', { params: { path: { schema, version }, query: { format } }, ...asText(format) }),
      restore: (schema: string, version: string) => registry.POST('/v1/schemas/{schema}/versions/{version}/restore', { params: { path: { schema, version } } }),
      findings: undefined,
    },
    ruleset: {
      read: (ruleset: string) => registry.GET('/v1/rulesets/{ruleset}', { params: { path: { ruleset } } }),
      create: (body: { name: string; slug: string }) => registry.POST('/v1/rulesets', { body }),
      list: (page: number) => registry.GET('/v1/rulesets', { params: { query: { limit: 100, page } } }),
      upload: (ruleset: string, document: string, dryRun: boolean) =>
        registry.POST('/v1/rulesets/{ruleset}/document', { params: { path: { ruleset }, query: dryRunQuery(dryRun) }, body: { document } }),
      current: (ruleset: string, format: DocumentFormat) =>
        registry.GET('/v1/rulesets/{ruleset}/document', { params: { path: { ruleset }, query: { format } }, ...asText(format) }),
      version: (ruleset: string, version: string, format: DocumentFormat) =>
        registry.GET('/v1/rulesets/{ruleset}/versions/{version}/document', { params: { path: { ruleset, version }, query: { format } }, ...asText(format) }),
      restore: (ruleset: string, version: string) => registry.POST('/v1/rulesets/{ruleset}/versions/{version}/restore', { params: { path: { ruleset, version } } }),
      findings: undefined,
    },
  }
}
