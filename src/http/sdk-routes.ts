/** SDKs, their output repositories and builds under `/v1` (issue 7). Thin: HTTP in, domain calls, views out. */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { toPageRequest } from '../domain/resources/pagination.js'
import type { Registry } from '../domain/registry.js'
import type { RepositoryInput, SdkCreateInput, SdkUpdateInput } from '../domain/sdks/sdks.js'
import type { Secrets } from '../domain/accounts/secrets.js'
import {
  SDK_TARGETS, PROVIDERS, BUILD_STATUSES, outputRepositorySecretRef, type BuildRecord, type OutputRepositoryRecord, type SdkRecord, type SdkTarget,
} from '../storage/records.js'
import { actorOf } from './auth.js'
import { OPTIONAL_BODY } from './description.js'
import { Data, IdOrSlug, KEY_OR_SESSION, List, Name, Nullable, PageQuery, problems, SecretStatus, Slug, Ulid } from './schemas.js'

const strict = { additionalProperties: false }
const Time = Type.String({ format: 'date-time' })
const Checksum = Type.String({ pattern: '^sha256:[0-9a-f]{64}$' })
const Target = Type.Enum([...SDK_TARGETS], { description: 'a language target: typescript (@hey-api/openapi-ts, fetch client) or php (PSR-4 package, no extensions beyond json)' })

const SdkApiAttachment = Type.Object({
  api_id: Ulid,
  version_id: Type.Optional(Nullable(Ulid)),
}, { ...strict, description: 'An API to generate a client for; without version_id a build takes the API’s current version when it is queued' })

export const SdkConfig = Type.Object({
  package_name: Type.Optional(Type.String({ minLength: 1, maxLength: 214, pattern: '^(@[a-z0-9-~][a-z0-9-._~]*/)?[a-z0-9-~][a-z0-9-._~]*$', description: 'npm package name (default: the SDK slug)' })),
  package_version: Type.Optional(Type.String({ maxLength: 64, pattern: '^\\d+\\.\\d+\\.\\d+(?:-[0-9A-Za-z.-]+)?(?:\\+[0-9A-Za-z.-]+)?$', description: 'semantic version of the generated packages (default 0.1.0)' })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  license: Type.Optional(Type.String({ maxLength: 100, description: 'SPDX identifier (default UNLICENSED for npm, proprietary for Composer)' })),
  typescript: Type.Optional(Type.Object({
    package_name: Type.Optional(Type.String({ minLength: 1, maxLength: 214, pattern: '^(@[a-z0-9-~][a-z0-9-._~]*/)?[a-z0-9-~][a-z0-9-._~]*$', description: 'overrides package_name for npm' })),
  }, strict)),
  php: Type.Optional(Type.Object({
    package_name: Type.Optional(Type.String({ maxLength: 214, pattern: '^[a-z0-9]([_.-]?[a-z0-9]+)*/[a-z0-9](([_.]|-{1,2})?[a-z0-9]+)*$', description: 'Composer vendor/name (default registry/<sdk slug>)' })),
    namespace: Type.Optional(Type.String({ maxLength: 200, pattern: '^[A-Za-z_][A-Za-z0-9_]*(\\\\[A-Za-z_][A-Za-z0-9_]*)*$', description: 'root PHP namespace (default: the SDK slug in StudlyCase)' })),
  }, strict)),
}, { ...strict, description: 'SdkConfig: package metadata shared by the targets, and per-target options' })

const OutputRepository = Type.Object({
  sdk_id: Ulid,
  target: Target,
  provider: Type.Enum([...PROVIDERS]),
  url: Type.String(),
  base_branch: Type.String(),
  api_url: Nullable(Type.String()),
  has_token: Type.Boolean({ description: 'a token is stored (tokens are write-only)' }),
  token_status: SecretStatus,
  created_at: Time,
  updated_at: Time,
})

const Sdk = Type.Object({
  id: Ulid,
  organization_id: Ulid,
  name: Type.String(),
  slug: Slug,
  targets: Type.Array(Target),
  apis: Type.Array(Type.Object({ api_id: Ulid, version_id: Nullable(Ulid) })),
  config: SdkConfig,
  repositories: Type.Array(OutputRepository, { description: 'the connected output repositories, one per target at most' }),
  created_at: Time,
  updated_at: Time,
})

const PullRequest = Type.Object({ number: Type.Integer(), url: Type.String(), branch: Type.String(), base: Type.String(), title: Type.String() })

export const Build = Type.Object({
  id: Ulid,
  organization_id: Ulid,
  sdk_id: Ulid,
  number: Type.Integer({ minimum: 1, description: '1, 2, 3… per SDK' }),
  target: Target,
  status: Type.Enum([...BUILD_STATUSES]),
  attempts: Type.Integer({ description: 'runs started; a run interrupted by a crash is retried once' }),
  inputs: Type.Object({
    apis: Type.Array(Type.Object({ api_id: Ulid, slug: Type.String(), name: Type.String(), version_id: Ulid, checksum: Checksum })),
    config_checksum: Checksum,
    generator: Type.Object({ name: Type.String(), version: Type.String() }),
  }),
  repository: Nullable(Type.Object({ provider: Type.Enum([...PROVIDERS]), url: Type.String(), base_branch: Type.String() }, { description: 'where the build delivers; null for an archive-only build' })),
  output: Nullable(Type.Object({
    branch: Nullable(Type.String()),
    commit: Nullable(Type.String()),
    files: Type.Array(Type.String()),
    pull_request: Nullable(PullRequest),
    reason: Nullable(Type.Enum(['unchanged', 'git_provider', 'archive_only'], { description: 'why there is no pull request' })),
  })),
  error: Nullable(Type.String()),
  created_at: Time,
  updated_at: Time,
  started_at: Nullable(Time),
  finished_at: Nullable(Time),
})

const BuildRequest = Type.Object({
  targets: Type.Optional(Type.Array(Target, { minItems: 1, maxItems: SDK_TARGETS.length, description: "some of the SDK's targets (default: all)" })),
  archive_only: Type.Optional(Type.Boolean({ description: 'build the archive (GET /v1/builds/{build}/artifact) and deliver nothing; no output repository needed' })),
}, { additionalProperties: false })

const SdkCreate = Type.Object({
  name: Name,
  slug: Type.Optional(Slug),
  targets: Type.Array(Target, { minItems: 1, maxItems: SDK_TARGETS.length }),
  apis: Type.Array(SdkApiAttachment, { minItems: 1, maxItems: 50 }),
  config: Type.Optional(SdkConfig),
}, strict)

const SdkUpdate = Type.Object({
  name: Type.Optional(Name),
  slug: Type.Optional(Slug),
  targets: Type.Optional(Type.Array(Target, { minItems: 1, maxItems: SDK_TARGETS.length })),
  apis: Type.Optional(Type.Array(SdkApiAttachment, { minItems: 1, maxItems: 50 })),
  config: Type.Optional(SdkConfig),
}, strict)

const RepositoryBody = Type.Object({
  provider: Type.Enum([...PROVIDERS], { description: 'git: the pushed branch is the deliverable; github: a pull request; gitlab: a merge request' }),
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) clone URL, without credentials' }),
  base_branch: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '^(?!/|.*(?:\\.\\.|//|@\\{|\\.lock$|/$))[^\\s~^:?*\\[\\\\]+$', description: 'default main' })),
  api_url: Type.Optional(Nullable(Type.String({ maxLength: 2048, description: 'base URL of the provider REST API; default https://api.github.com for github.com, <origin>/api/v3 for other GitHub hosts, <origin>/api/v4 for GitLab' }))),
  token: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 4096, description: 'write-only: git password (basic auth) and provider API token; omitted keeps the stored one, null removes it' }))),
}, strict)

const errors = problems
const security = KEY_OR_SESSION
const SdkParams = Type.Object({ sdk: IdOrSlug })
const TargetParams = Type.Object({ sdk: IdOrSlug, target: Target })
const BuildParams = Type.Object({ build: Ulid })

export function repositoryView(r: OutputRepositoryRecord, secrets: Secrets) {
  return {
    sdk_id: r.sdk_id, target: r.target, provider: r.provider, url: r.url, base_branch: r.base_branch, api_url: r.api_url,
    has_token: r.token !== null, token_status: secrets.status(outputRepositorySecretRef(r), r.token),
    created_at: r.created_at, updated_at: r.updated_at,
  }
}

export function buildView(b: BuildRecord) {
  // The lease names a replica's runner: storage bookkeeping, not part of the interface.
  const { sdk: _sdk, config: _config, lease: _lease, ...view } = b
  return view
}

export function registerSdkRoutes(app: FastifyInstance, registry: Registry): void {
  const { sdks } = registry
  const sdkView = async (sdk: SdkRecord) => ({
    ...sdk, last_build_number: undefined, repositories: (await sdks.repositories(sdk)).map((r) => repositoryView(r, registry.secrets)),
  })
  const params = <T>(request: FastifyRequest) => request.params as T
  // The SDK's id, also when the path names it by slug.
  const sdkId = async (request: FastifyRequest) => (await sdks.require(actorOf(request), params<{ sdk: string }>(request).sdk)).id
  const page = (request: FastifyRequest) => {
    const { page: p, limit } = request.query as { page?: number; limit?: number }
    return toPageRequest(p, limit)
  }

  app.get('/v1/sdks', {
    schema: { tags: ['SDKs'], security, summary: 'List SDKs, newest first', querystring: PageQuery, response: { 200: List(Sdk), ...errors(400, 401) } },
  }, async (request) => {
    const result = await sdks.list(actorOf(request), page(request))
    return { data: await Promise.all(result.items.map(sdkView)), total: result.total }
  })

  app.post('/v1/sdks', {
    schema: { tags: ['SDKs'], security, summary: 'Create an SDK', body: SdkCreate, response: { 201: Data(Sdk), ...errors(400, 401, 403, 409, 413, 415, 422) } },
  }, async (request, reply) => {
    const sdk = await sdks.create(actorOf(request), request.body as SdkCreateInput)
    return reply.status(201).send({ data: await sdkView(sdk) })
  })

  app.get('/v1/sdks/:sdk', {
    schema: { tags: ['SDKs'], security, summary: 'Get an SDK', params: SdkParams, response: { 200: Data(Sdk), ...errors(400, 401, 404) } },
  }, async (request) => ({ data: await sdkView(await sdks.require(actorOf(request), params<{ sdk: string }>(request).sdk)) }))

  app.patch('/v1/sdks/:sdk', {
    schema: { tags: ['SDKs'], security, summary: 'Update an SDK (a target removed loses its output repository)', params: SdkParams, body: SdkUpdate, response: { 200: Data(Sdk), ...errors(400, 401, 403, 404, 409, 413, 415, 422) } },
  }, async (request) => ({ data: await sdkView(await sdks.update(actorOf(request), await sdkId(request), request.body as SdkUpdateInput)) }))

  app.delete('/v1/sdks/:sdk', {
    schema: { tags: ['SDKs'], security, summary: 'Delete an SDK with its repositories and builds (a running build is aborted)', params: SdkParams, response: { 204: Type.Null(), ...errors(400, 401, 403, 404) } },
  }, async (request, reply) => {
    await sdks.remove(actorOf(request), await sdkId(request))
    return reply.status(204).send()
  })

  const repositoryPath = '/v1/sdks/:sdk/targets/:target/repository'
  app.put(repositoryPath, {
    schema: { tags: ['SDKs'], security, summary: "Connect a target's output repository (the token is write-only)", params: TargetParams, body: RepositoryBody, response: { 200: Data(OutputRepository), 201: Data(OutputRepository), ...errors(400, 401, 403, 404, 413, 415, 422) } },
  }, async (request, reply) => {
    const { target } = params<{ target: SdkTarget }>(request)
    const sdk = await sdkId(request)
    const { repository, created } = await sdks.putRepository(actorOf(request), sdk, target, request.body as RepositoryInput)
    return reply.status(created ? 201 : 200).send({ data: repositoryView(repository, registry.secrets) })
  })

  app.get(repositoryPath, {
    schema: { tags: ['SDKs'], security, summary: "A target's output repository", params: TargetParams, response: { 200: Data(OutputRepository), ...errors(400, 401, 404) } },
  }, async (request) => {
    const { target } = params<{ target: SdkTarget }>(request)
    const sdk = await sdkId(request)
    return { data: repositoryView(await sdks.repository(actorOf(request), sdk, target), registry.secrets) }
  })

  app.delete(repositoryPath, {
    schema: { tags: ['SDKs'], security, summary: "Disconnect a target's output repository", params: TargetParams, response: { 204: Type.Null(), ...errors(400, 401, 403, 404) } },
  }, async (request, reply) => {
    const { target } = params<{ target: SdkTarget }>(request)
    const sdk = await sdkId(request)
    await sdks.removeRepository(actorOf(request), sdk, target)
    return reply.status(204).send()
  })

  app.post('/v1/sdks/:sdk/builds', {
    schema: {
      tags: ['Builds'], security, params: SdkParams, body: BuildRequest, [OPTIONAL_BODY]: true,
      summary: 'Queue an SDK build: one per requested target with an output repository, or archive-only builds',
      response: { 202: Type.Object({ data: Type.Array(Build) }), ...errors(400, 401, 403, 404, 413, 415, 422) },
    },
    // The body is optional: no body asks for the default build.
    preValidation: async (request) => { request.body ??= {} },
  }, async (request, reply) => {
    const body = request.body as { targets?: SdkTarget[]; archive_only?: boolean }
    const builds = await sdks.queue(actorOf(request), await sdkId(request), { targets: body.targets, archiveOnly: body.archive_only })
    return reply.status(202).send({ data: builds.map(buildView) })
  })

  app.get('/v1/sdks/:sdk/builds', {
    schema: { tags: ['Builds'], security, summary: "An SDK's builds, newest first", params: SdkParams, querystring: PageQuery, response: { 200: List(Build), ...errors(400, 401, 404) } },
  }, async (request) => {
    const result = await sdks.listBuilds(actorOf(request), page(request), await sdkId(request))
    return { data: result.items.map(buildView), total: result.total }
  })

  app.get('/v1/builds', {
    schema: { tags: ['Builds'], security, summary: "List builds: the organization's, newest first", querystring: PageQuery, response: { 200: List(Build), ...errors(400, 401) } },
  }, async (request) => {
    const result = await sdks.listBuilds(actorOf(request), page(request))
    return { data: result.items.map(buildView), total: result.total }
  })

  app.get('/v1/builds/:build', {
    schema: { tags: ['Builds'], security, summary: 'Get a build', params: BuildParams, response: { 200: Data(Build), ...errors(400, 401, 404) } },
  }, async (request) => ({ data: buildView(await sdks.requireBuild(actorOf(request), params<{ build: string }>(request).build)) }))

  app.get('/v1/builds/:build/logs', {
    schema: { tags: ['Builds'], security, summary: "A build's log (text, at most 64 KB)", params: BuildParams, response: { 200: { description: 'the log', content: { 'text/plain': { schema: Type.String() } } }, ...errors(400, 401, 404) } },
  }, async (request, reply) =>
    reply.type('text/plain; charset=utf-8').send(await sdks.log(actorOf(request), params<{ build: string }>(request).build)))

  app.get('/v1/builds/:build/artifact', {
    schema: { tags: ['Builds'], security, summary: 'The generated files as a .tar.gz (deterministic: the same inputs give the same bytes)', params: BuildParams, response: {
        200: {
          description: 'the archive (Content-Disposition names it <sdk>-<target>-<number>.tar.gz)',
          content: { 'application/gzip': { schema: Type.String({ format: 'binary' }) } },
        },
        ...errors(400, 401, 404),
      }, },
  }, async (request, reply) => {
    const build = await sdks.requireBuild(actorOf(request), params<{ build: string }>(request).build)
    const artifact = await sdks.artifact(actorOf(request), build.id)
    return reply
      .type('application/gzip')
      .header('content-disposition', `attachment; filename="${build.sdk.slug}-${build.target}-${build.number}.tar.gz"`)
      .send(artifact)
  })

  app.post('/v1/builds/:build/cancel', {
    schema: { tags: ['Builds'], security, summary: 'Cancel a queued or running build', params: BuildParams, response: { 200: Data(Build), ...errors(400, 401, 403, 404, 409) } },
  }, async (request) => ({ data: buildView(await sdks.cancel(actorOf(request), params<{ build: string }>(request).build)) }))
}
