import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type, type TSchema } from 'typebox'
import type { DocumentInput } from '../domain/documents.js'
import { countFindings } from '../domain/resources/lint-gate.js'
import { toPageRequest } from '../domain/resources/pagination.js'
import type { Registry } from '../domain/registry.js'
import type { CreateInput, UpdateInput } from '../domain/resources/resources.js'
import { resourceView, versionView } from '../domain/resources/views.js'
import { invalidRequest, notFound } from '../errors.js'
import type { ResourceKind, ResourceRecord } from '../storage/registry-records.js'
import { actorOf, tenantOfRequest } from './auth.js'
import { registerUploadRoutes, type RawDocumentBody } from './body-parsers.js'
import { sendDocument, sendGzippedJson } from './document-reply.js'
import { registerChangeRoutes } from './change-routes.js'
import { resourceJson } from './resource-json.js'
import { uploadValidatorCompiler } from './validation.js'
import {
  Api, BlockingSeverity, Compatibility, Data, DocumentResponses, DryRun, Description, DocumentValue, Finding, FormatQuery, GzippedJsonResponses, KEY_OR_SESSION,
  List, ListQuery, LogoUrl, Name, Nullable, PageQuery, problems, ReferencePartView, Ruleset, RulesetVersion, Schema, SchemaVersion, SentFinding, Slug, SpecVersion,
  Ulid, UploadBody, Visibility, IdOrSlug, VersionRef,
} from './schemas.js'

/** What differs between APIs, schemas and rulesets on the wire. */
interface KindRoutes {
  kind: ResourceKind
  plural: string
  param: string
  /** Path segment of the current document: `spec` for APIs, `document` otherwise. */
  documentPath: string
  tag: string
  object: TSchema
  version: TSchema
  create: TSchema
  update: TSchema
}

/** Fields every kind accepts on create, and on update (where the description may be null). */
const base = { name: Name, slug: Type.Optional(Slug), visibility: Type.Optional(Visibility), description: Type.Optional(Description) }
const baseUpdate = {
  name: Type.Optional(Name), slug: Type.Optional(Slug), visibility: Type.Optional(Visibility),
  description: Type.Optional(Nullable(Description)),
}
const strict = { additionalProperties: false }

export const KINDS: KindRoutes[] = [
  {
    kind: 'api', plural: 'apis', param: 'api', documentPath: 'spec', tag: 'APIs', object: Api, version: SpecVersion,
    create: Type.Object({
      ...base, ruleset_id: Type.Optional(Ulid), blocking_severity: Type.Optional(BlockingSeverity), compatibility: Type.Optional(Nullable(Compatibility)),
    }, strict),
    update: Type.Object({
      ...baseUpdate, logo_url: Type.Optional(Nullable(LogoUrl)),
      ruleset_id: Type.Optional(Nullable(Ulid)), blocking_severity: Type.Optional(Nullable(BlockingSeverity)),
      compatibility: Type.Optional(Nullable(Compatibility)),
    }, strict),
  },
  {
    kind: 'schema', plural: 'schemas', param: 'schema', documentPath: 'document', tag: 'Schemas', object: Schema,
    version: SchemaVersion,
    create: Type.Object({ ...base, compatibility: Type.Optional(Nullable(Compatibility)), document: Type.Optional(DocumentValue) }, strict),
    update: Type.Object({ ...baseUpdate, compatibility: Type.Optional(Nullable(Compatibility)) }, strict),
  },
  {
    kind: 'ruleset', plural: 'rulesets', param: 'ruleset', documentPath: 'document', tag: 'Rulesets', object: Ruleset,
    version: RulesetVersion,
    create: Type.Object({ ...base, blocking_severity: Type.Optional(BlockingSeverity), document: Type.Optional(DocumentValue) }, strict),
    update: Type.Object({ ...baseUpdate, blocking_severity: Type.Optional(BlockingSeverity) }, strict),
  },
]

const errors = problems
const security = KEY_OR_SESSION


export function documentInput(body: unknown): DocumentInput {
  const raw = body as RawDocumentBody | undefined
  if (!raw || !(raw.raw instanceof Uint8Array) || raw.raw.byteLength === 0) {
    throw invalidRequest('the upload has no body: send the document (JSON or YAML), or { "document": … }')
  }
  return { body: raw.raw, shape: raw.shape }
}

/** The body limit of a route whose JSON body carries a document as an object. */
function documentBodyLimit(app: FastifyInstance, registry: Registry): number | undefined {
  const max = registry.documents.maxDocumentBytes
  const limit = app.initialConfig.bodyLimit
  return max === undefined || limit === undefined ? limit : Math.min(limit, max)
}

/** The routes every registry resource kind has under `/v1`. */
export function registerResourceRoutes(app: FastifyInstance, registry: Registry, k: KindRoutes): void {
  const { kind } = k
  const collection = `/v1/${k.plural}`
  const item = `${collection}/:${k.param}`
  const Params = Type.Object({ [k.param]: IdOrSlug })
  const VersionParams = Type.Object({ [k.param]: IdOrSlug, version: VersionRef })
  const tags = [k.tag]
  const resourceOf = (request: FastifyRequest): Promise<ResourceRecord> =>
    registry.resources.require(actorOf(request), kind, (request.params as Record<string, string>)[k.param])
  // Reads under `item` (these routes and any registered later, e.g. the changes') name the resource in
  // `k.param`: the key's read brings it along (auth.ts), one round trip instead of two on PostgreSQL.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const under = route.url === item || route.url.startsWith(`${item}/`)
    if (under && methods.every((method) => method === 'GET' || method === 'HEAD')) {
      route.config = { ...route.config, resourceParam: { kind, param: k.param } }
    }
  })

  app.get(collection, {
    schema: { tags, security, summary: `List ${kind === 'api' ? 'APIs' : k.plural}: by name, paged, optionally searched by name`, querystring: ListQuery, response: { 200: List(k.object), ...errors(400, 401) } },
  }, async (request) => {
    const { page, limit, q, sort } = request.query as { page?: number; limit?: number; q?: string; sort?: string }
    const result = await registry.resources.list(actorOf(request), kind, toPageRequest(page, limit), { nameContains: q?.trim() || undefined, descending: sort === '-name' })
    return { data: await Promise.all(result.items.map((r) => resourceView(registry.storage.read, r))), total: result.total }
  })

  app.post(collection, {
    // A schema's or ruleset's `document` arrives parsed, as an object a worker's heap must hold whole:
    // its body is bounded like a document's text (heap-budget.ts). An API's create takes no document.
    bodyLimit: kind === 'api' ? undefined : documentBodyLimit(app, registry),
    schema: { tags, security, summary: `Create ${kind === 'api' ? 'an API' : `a ${kind}`}`, body: k.create, response: { 201: Data(k.object), ...errors(400, 401, 403, 409, 413, 415, 422) } },
  }, async (request, reply) => {
    const { resource } = await registry.resources.create(actorOf(request), kind, request.body as CreateInput)
    return reply.status(201).send({ data: await resourceView(registry.storage.read, resource) })
  })

  app.get(item, {
    schema: { tags, security, summary: `Get ${kind === 'api' ? 'an API' : `a ${kind}`}`, params: Params, response: { 200: Data(k.object), ...errors(400, 401, 404) } },
  }, async (request, reply) =>
    reply.type('application/json; charset=utf-8').send(await resourceJson(registry.storage.read, (await resourceOf(request)))))

  app.patch(item, {
    schema: { tags, security, summary: `Update ${kind === 'api' ? 'an API' : `a ${kind}`}`, params: Params, body: k.update, response: { 200: Data(k.object), ...errors(400, 401, 403, 404, 409, 413, 415, 422) } },
  }, async (request) => {
    const resource = await resourceOf(request)
    const updated = await registry.resources.update(actorOf(request), kind, resource.id, request.body as UpdateInput)
    return { data: await resourceView(registry.storage.read, updated) }
  })

  app.delete(item, {
    schema: { tags, security, summary: `Delete ${kind === 'api' ? 'an API' : `a ${kind}`}`, params: Params, response: { 204: Type.Null(), ...errors(400, 401, 403, 404, 409) } },
  }, async (request, reply) => {
    await registry.resources.remove(actorOf(request), kind, (await resourceOf(request)).id)
    return reply.status(204).send()
  })

  app.get(`${item}/${k.documentPath}`, {
    schema: { tags, security, summary: 'The current document (JSON, or YAML on request), with ETag', params: Params, querystring: FormatQuery, response: { ...DocumentResponses, ...errors(400, 401, 404, 422) } },
  }, async (request, reply) => {
    const resource = await resourceOf(request)
    return sendDocument(request, reply, registry.versions, await registry.versions.current(resource), { organizationId: resource.organization_id })
  })

  app.get(`${item}/versions`, {
    schema: { tags, security, summary: 'Versions, newest first', params: Params, querystring: PageQuery, response: { 200: List(k.version), ...errors(400, 401, 404) } },
  }, async (request) => {
    const { page, limit } = request.query as { page?: number; limit?: number }
    const result = await registry.versions.list((await resourceOf(request)), toPageRequest(page, limit))
    return { data: result.items.map(versionView), total: result.total }
  })

  app.get(`${item}/versions/:version`, {
    schema: { tags, security, summary: 'One version', params: VersionParams, response: { 200: Data(k.version), ...errors(400, 401, 404) } },
  }, async (request) => ({
    data: versionView(await registry.versions.byRef((await resourceOf(request)), (request.params as { version: string }).version)),
  }))

  app.get(`${item}/versions/:version/document`, {
    schema: { tags, security, summary: "A version's document", params: VersionParams, querystring: FormatQuery, response: { ...DocumentResponses, ...errors(400, 401, 404, 422) } },
  }, async (request, reply) => {
    const resource = await resourceOf(request)
    const version = await registry.versions.byRef(resource, (request.params as { version: string }).version)
    return sendDocument(request, reply, registry.versions, version, { organizationId: resource.organization_id })
  })

  app.post(`${item}/versions/:version/restore`, {
    schema: { tags, security, summary: 'Make a previous version current again (source restore)', params: VersionParams, response: { 200: Data(k.version), 201: Data(k.version), ...errors(400, 401, 403, 404, 409, 422) } },
  }, async (request, reply) => {
    const resource = await resourceOf(request)
    const source = await registry.versions.byRef(resource, (request.params as { version: string }).version)
    const { version, created } = await registry.versions.restore(resource, source.id, tenantOfRequest(request))
    return reply.status(created ? 201 : 200).send({ data: versionView(version) })
  })

  if (kind === 'api' || kind === 'schema') registerChangeRoutes(app, registry, { item, params: Params, tags, version: k.version, resourceOf })

  if (kind === 'api') {
    app.get(`${item}/versions/:version/findings`, {
      schema: { tags, security, summary: "A version's lint findings", params: VersionParams, response: { 200: Data(Type.Array(Finding)), ...errors(400, 401, 404) } },
    }, async (request) => {
      const version = await registry.versions.byRef((await resourceOf(request)), (request.params as { version: string }).version)
      return { data: await registry.versions.findings(version) }
    })

    // A large document's reference in parts, as the sites serve it (domain/sites/reference-parts.ts), for the
    // console's reference frame: the parts in reading order ([] when the document is not split), and
    // one part's document.
    app.get(`${item}/versions/:version/reference-parts`, {
      schema: { tags, security, summary: "A large version's reference parts (empty when it is shown whole)", params: VersionParams, response: { 200: Data(Type.Array(ReferencePartView)), ...errors(400, 401, 404) } },
    }, async (request) => {
      const version = await registry.versions.byRef(await resourceOf(request), (request.params as { version: string }).version)
      return { data: registry.referenceParts.isSplit(version) ? await registry.referenceParts.parts(version) : [] }
    })

    app.get(`${item}/versions/:version/reference-parts/:part`, {
      schema: {
        tags, security, summary: "One reference part's document (a complete OpenAPI document), with ETag",
        params: Type.Object({ ...VersionParams.properties, part: Type.String({ maxLength: 200 }) }),
        response: { ...GzippedJsonResponses, ...errors(400, 401, 404) },
      },
    }, async (request, reply) => {
      const { version: ref, part: slug } = request.params as { version: string; part: string }
      const version = await registry.versions.byRef(await resourceOf(request), ref)
      if (!registry.referenceParts.isSplit(version)) throw notFound('part')
      const { gzipped } = await registry.referenceParts.part(version, slug)
      return sendGzippedJson(request, reply, `"${version.checksum}/${slug}"`, gzipped)
    })
  }

  // Uploads (and lint, which takes a document the same way) in their own scope, which reads multipart.
  registerUploadRoutes(app, (uploads) => {
    uploads.post(`${item}/${k.documentPath}`, {
      config: { rawDocument: true },
      validatorCompiler: uploadValidatorCompiler,
      schema: {
        tags, security, summary: `Upload a document: a new version unless the checksum is unchanged`, params: Params,
        querystring: Type.Object({ dry_run: Type.Optional(Type.Boolean({ description: 'validate, lint (APIs) and check compatibility (APIs, schemas) only, store nothing' })) }),
        body: UploadBody,
        response: {
          200: Type.Union([Data(k.version), Data(DryRun(k.version))], { description: 'the current version, unchanged (nothing written); with ?dry_run=true, what the upload would do' }),
          201: Data(k.version),
          ...errors(400, 401, 403, 404, 409, 413, 415, 422, 503),
        },
      },
    }, async (request, reply) => {
      const resource = await resourceOf(request)
      const input = documentInput(request.body)
      if ((request.query as { dry_run?: boolean } | undefined)?.dry_run) {
        return { data: await registry.uploads.dryRun(resource, input, tenantOfRequest(request)) }
      }
      const { version, created } = await registry.uploads.upload(resource, input, 'upload', undefined, tenantOfRequest(request))
      return reply.status(created ? 201 : 200).send({ data: versionView(version) })
    })

    if (kind === 'ruleset') {
      uploads.post(`${item}/lint`, {
        config: { rawDocument: true },
        validatorCompiler: uploadValidatorCompiler,
        schema: {
          tags, security, summary: "Lint any document with the ruleset's current version", params: Params, body: UploadBody,
          response: { 200: Data(Type.Object({ findings: Type.Array(SentFinding), counts: Type.Record(Type.String(), Type.Integer()) })), ...errors(400, 401, 403, 404, 413, 415, 422, 503) },
        },
      }, async (request) => {
        const findings = await registry.uploads.lintWith(await resourceOf(request), documentInput(request.body), tenantOfRequest(request))
        return { data: { findings, counts: countFindings(findings) } }
      })
    }
  })
}
