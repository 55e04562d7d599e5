/** TypeBox schemas shared by the routes; they validate requests and describe the service in /openapi.json. */
import { STATUS_CODES } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { Type, type TSchema } from 'typebox'
import { CONVERTED_FROM } from '../documents/import-formats.js'
import { ULID_PATTERN } from '../domain/resources/ids.js'
import { DEFAULT_LIMIT, MAX_LIMIT } from '../domain/resources/pagination.js'
import { SLUG_MAX_LENGTH, SLUG_PATTERN } from '../domain/resources/slugs.js'
import { ERROR_STATUS, type ErrorCode } from '../errors.js'

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

export const Ulid = Type.String({ pattern: ULID_PATTERN, description: 'ULID: 26 Crockford base32 characters' })
export const Slug = Type.String({ pattern: SLUG_PATTERN, maxLength: SLUG_MAX_LENGTH })

const inner = (pattern: string) => pattern.slice(1, -1)

/** A resource in a path (docs/api.md, "Ids and slugs"): its id, or its slug within the key's organization. */
export const IdOrSlug = Type.String({
  pattern: `^(?:${inner(ULID_PATTERN)}|${inner(SLUG_PATTERN)})$`, maxLength: SLUG_MAX_LENGTH,
  description: 'the id (ULID) or the slug; a ULID-shaped value is looked up as an id first',
})

/** A version in a path: its id, or its number. */
export const VersionRef = Type.String({
  pattern: `^(?:${inner(ULID_PATTERN)}|[1-9][0-9]{0,14})$`,
  description: 'the version id (ULID) or its number (1, 2, 3…)',
})
export const Visibility = Type.Enum(['private', 'public'])
export const BlockingSeverity = Type.Enum(['off', 'error', 'warn', 'info'])
export const Compatibility = Type.Enum(['none', 'backward', 'forward', 'full', 'backward_transitive', 'forward_transitive', 'full_transitive'], {
  description: 'the compatibility gate for new versions (docs/changes.md); none by default',
})
export const Name = Type.String({ minLength: 1, maxLength: 200 })
export const Description = Type.String({ maxLength: 10_000 })
export const LogoUrl = Type.String({ maxLength: 2048 })
/** A write-only secret as views show it (docs/security.md). */
export const SecretStatus = Type.Enum(['none', 'stored', 'needs_reentry'], {
  description: "none: not set; stored: set (it is never returned); needs_reentry: stored under a secret key this server does not hold (a backup restored without its key): set it again",
})

export const PageQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000, default: 1, description: '1-based page' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT })),
})

/** A resource list's query: its page, a name search and the order. */
export const ListQuery = Type.Object({
  ...PageQuery.properties,
  q: Type.Optional(Type.String({ maxLength: 200, description: 'only resources whose name contains this text, ignoring case' })),
  sort: Type.Optional(Type.Enum(['name', '-name'], { default: 'name', description: 'by name, A to Z (default) or Z to A (-name); ties by id' })),
})

export const FormatQuery = Type.Object({
  format: Type.Optional(Type.Enum(['json', 'yaml'], { description: 'JSON by default; YAML also with Accept: application/yaml' })),
  bundle: Type.Optional(Type.Boolean({
    description: "APIs: the document with the registry schemas its $refs name (/@{org}/schemas/{slug}/latest or …/versions/{n}) placed under components/schemas; the ETag is the bundled document's checksum",
  })),
})

export const DocumentValue = Type.Unknown({
  description: 'The document: a JSON object, or a string holding JSON or YAML',
})

export const DocumentEnvelope = Type.Object({ document: DocumentValue }, { additionalProperties: false })

const RawJson = Type.Object({}, { additionalProperties: true, description: 'the document itself, stored as sent' })
const RawText = Type.String({ description: 'the document itself (JSON or YAML), stored as sent' })

/**
 * Upload bodies (docs/api.md, "Uploading a document"): JSON that is the document itself or a
 * `{ document }` envelope (an object with a `document` member), the document in its own media type, or
 * a multipart field named `document`. Without a Content-Type, the body is read as JSON when it is JSON.
 */
export const UploadBody = {
  content: {
    'application/json': {
      schema: Type.Union([DocumentEnvelope, RawJson], {
        description: 'an object with a `document` member (and no other) is the envelope; any other object is the document itself',
      }),
    },
    'application/vnd.oai.openapi+json': { schema: RawJson },
    'application/schema+json': { schema: RawJson },
    'application/vnd.oai.openapi': { schema: RawText },
    'application/yaml': { schema: RawText },
    'application/x-yaml': { schema: RawText },
    'text/yaml': { schema: RawText },
    'multipart/form-data': {
      schema: Type.Object({ document: Type.String({ format: 'binary', description: 'the document file (curl -F document=@openapi.yaml), at most the body limit' }) }, { required: ['document'] }),
    },
  },
}

const Counts = Type.Object({ error: Type.Integer(), warn: Type.Integer(), info: Type.Integer(), hint: Type.Integer() })

export const Finding = Type.Object({
  code: Type.String(),
  message: Type.String(),
  severity: Type.Enum(['error', 'warn', 'info', 'hint']),
  path: Type.Array(Type.Union([Type.String(), Type.Integer()])),
})

/** Where a finding about a document just sent is, in the text sent (docs/api.md, "Findings"). */
const findingPosition = {
  line: Type.Optional(Type.Integer({
    minimum: 1,
    description: "1-based line, in the text sent, of the member the path names (its key) or the item; of the deepest part of the path the text has when it goes further. Absent when the document was sent as a JSON object in { \"document\": … }",
  })),
  column: Type.Optional(Type.Integer({ minimum: 1, description: '1-based column of the same place in that line (UTF-16 code units)' })),
}

/** A finding in an answer about a document just sent (a dry run, the lint route): placed in its text. */
export const SentFinding = Type.Object({ ...Finding.properties, ...findingPosition })

/** One part of a large document's reference (domain/sites/reference-parts.ts). */
export const ReferencePartView = Type.Object({
  slug: Type.String(),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  piece: Type.Union([Type.Object({ index: Type.Integer(), of: Type.Integer() }), Type.Null()]),
  operations: Type.Integer(),
})

/** What an API's document was converted from (docs/api.md, "Uploading a document"). */
const ConvertedFrom = Nullable(Type.Enum([...CONVERTED_FROM], {
  description: 'the document was sent as this and is stored as its OpenAPI 3 conversion (Swagger 2.0: OpenAPI 3.0; Postman: OpenAPI 3.1); null: as sent. Its findings in an answer then have no line or column',
}))

const versionFields = {
  id: Ulid,
  organization_id: Ulid,
  number: Type.Integer({ minimum: 1 }),
  checksum: Type.String({ pattern: '^sha256:[0-9a-f]{64}$' }),
  source: Type.Enum(['upload', 'github', 'gitlab', 'restore']),
  restored_from: Nullable(Ulid),
  size: Type.Integer({ description: 'bytes of the stored document' }),
  format: Type.Enum(['json', 'yaml']),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}

export const SpecVersion = Type.Object({
  ...versionFields,
  api_id: Ulid,
  openapi: Nullable(Type.String()),
  title: Nullable(Type.String()),
  version: Nullable(Type.String()),
  lint: Nullable(Type.Object({ ruleset_id: Ulid, ruleset_version_id: Ulid, counts: Counts })),
  converted_from: ConvertedFrom,
})
export const SchemaVersion = Type.Object({ ...versionFields, schema_id: Ulid })
export const RulesetVersion = Type.Object({ ...versionFields, ruleset_id: Ulid })

const resourceFields = {
  id: Ulid,
  organization_id: Ulid,
  name: Type.String(),
  slug: Slug,
  visibility: Visibility,
  description: Nullable(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}

export const Api = Type.Object({
  ...resourceFields,
  logo_url: Nullable(Type.String()),
  ruleset_id: Nullable(Ulid),
  blocking_severity: Nullable(BlockingSeverity),
  compatibility: Compatibility,
  effective_blocking_severity: BlockingSeverity,
  current: Nullable(SpecVersion),
})
export const Schema = Type.Object({ ...resourceFields, compatibility: Compatibility, current: Nullable(SchemaVersion) })
export const Ruleset = Type.Object({ ...resourceFields, blocking_severity: BlockingSeverity, current: Nullable(RulesetVersion) })

export const Classification = Type.Enum(['breaking', 'non-breaking', 'annotation'])

const ChangeOperation = Type.Object({
  method: Type.String({ description: 'lower case' }),
  path: Type.String({ description: "the path as the document writes it (`webhooks/{name}` for an OpenAPI 3.1 webhook)" }),
}, { description: 'OpenAPI: the operation the change belongs to' })

export const Change = Type.Object({
  kind: Type.Enum(['added', 'removed', 'changed']),
  pointer: Type.String({ description: 'RFC 6901 JSON pointer into the `to` document (into the `from` document for `removed`)' }),
  operation: Nullable(ChangeOperation),
  component: Nullable(Type.String({ description: 'OpenAPI: the component (`schemas/Pet`) of a change that belongs to no operation' })),
  classification: Classification,
  check: Type.String({ description: 'the check that found it (docs/changes.md)' }),
  message: Type.String(),
}, { description: 'One change between two versions (docs/changes.md)' })

export const ChangeSummary = Type.Object({ breaking: Type.Integer(), non_breaking: Type.Integer(), annotation: Type.Integer() })

const ListedChange = Type.Object({
  check: Type.String(),
  message: Type.String(),
  operations: Type.Array(Type.Object({ method: Type.String(), path: Type.String() }), { description: 'every operation the change is reported at' }),
  component: Nullable(Type.String()),
})

/** One version in a changelog (`…/changelog`, docs/changes.md). */
export const ChangelogEntry = (version: TSchema) => Type.Object({
  version,
  previous: Nullable(Type.Integer({ description: 'the number of the version compared with (the one before); null for the first' })),
  summary: Nullable(ChangeSummary),
  breaking: Type.Array(ListedChange, { description: 'at most 50; summary counts them all, once per operation' }),
  non_breaking: Type.Array(ListedChange, { description: 'at most 50' }),
})

/** What a dry run answers (`?dry_run=true`), with the diff against the current version of APIs and schemas. */
export const DryRun = (version: TSchema) => Type.Object({
  checksum: Type.String({ pattern: '^sha256:[0-9a-f]{64}$' }),
  unchanged: Type.Boolean({ description: "the document is the current version's" }),
  findings: Type.Array(SentFinding),
  diff: Type.Optional(Type.Object({
    from: version,
    summary: ChangeSummary,
    changes: Type.Array(Change, { description: 'the first 100, breaking first' }),
    total: Type.Integer(),
  }, { description: 'APIs and schemas whose current version the document differs from: what the upload would change (docs/changes.md)' })),
  converted_from: Type.Optional(ConvertedFrom),
}, { description: 'a dry run: nothing stored' })

export const Data = <T extends TSchema>(schema: T) => Type.Object({ data: schema })
export const List = <T extends TSchema>(schema: T) => Type.Object({ data: Type.Array(schema), total: Type.Integer() })

/** Where a breaking change of a `422 incompatible` refusal is, and what it breaks (docs/changes.md). */
const breakingChangePlace = {
  pointer: Type.Optional(Type.String({
    description: "422 incompatible: RFC 6901 JSON pointer to the change: into the document sent for `direction` `backward`, into version `version` for `forward` (the other way round for a removal); `path` holds the same pointer's segments",
  })),
  operation: Type.Optional(Type.Union([ChangeOperation, Type.Null()], {
    description: '422 incompatible, OpenAPI: the operation the change belongs to; null for a change that belongs to none',
  })),
  component: Type.Optional(Type.Union([Type.String(), Type.Null()], {
    description: '422 incompatible, OpenAPI: the component (`schemas/Pet`) of a change that belongs to no operation; else null',
  })),
  version: Type.Optional(Type.Integer({ minimum: 1, description: '422 incompatible: the number of the version the document breaks' })),
  direction: Type.Optional(Type.Enum(['backward', 'forward'], {
    description: "422 incompatible: `backward`, the change from that version to the document breaks that version's clients; `forward`, the change from the document back to that version breaks the document's clients",
  })),
}

export const Problem = Type.Object({
  type: Type.String({ description: 'about:blank' }),
  title: Type.String({ description: "the status's reason phrase" }),
  status: Type.Integer(),
  code: Type.Enum(Object.keys(ERROR_STATUS), { description: 'what went wrong, stable across releases (docs/api.md, "Errors")' }),
  detail: Type.String(),
  errors: Type.Optional(Type.Array(Type.Object({
    message: Type.String(),
    path: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Integer()]))),
    code: Type.Optional(Type.String()),
    severity: Type.Optional(Type.String()),
    ...findingPosition,
    ...breakingChangePlace,
  }))),
}, { description: 'application/problem+json (RFC 9457)' })

/**
 * Schemas /openapi.json names in `components.schemas` (by their `$id`) and the routes reference as
 * `{ $ref: '<id>#' }`. Response schemas only: request schemas are compiled by validation.ts's own Ajv,
 * which does not know them.
 */
export function registerSharedSchemas(app: FastifyInstance): void {
  app.addSchema({ ...Problem, $id: 'Problem' })
}

/** The media type of every error answer. */
const PROBLEM_JSON = 'application/problem+json'

/** The Problem schema where a route's answer names it beside another media type (an HTML page, say). */
export const ProblemRef = { $ref: 'Problem#' }

const problemResponse = (description: string) => ({ description, content: { [PROBLEM_JSON]: { schema: ProblemRef } } })

/** The error codes one status carries, from errors.ts: what `code` can be in such an answer. */
const codesOf = (status: number) => (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => ERROR_STATUS[code] === status)

/**
 * What any route may answer besides the statuses it lists: the service's own conditions, and a body
 * sent to a route that takes none (docs/api.md, "The service's own description").
 */
const OTHER_PROBLEMS = problemResponse(
  'Any other status, as problem+json: 429 rate_limited (REGISTRY_RATE_LIMIT, or too many failed authentications from the address; '
  + 'Retry-After says when to retry), 500 internal, 503 unavailable (the server is shutting down), 507 storage_full (nothing was stored), '
  + 'and 400, 413 or 415 for a body sent to a route that takes none',
)

/**
 * The problem+json answers of a route: the statuses its own rules answer, each described by the codes
 * it can carry, and `default` for the rest (OTHER_PROBLEMS).
 */
export function problems(...statuses: number[]) {
  const listed = statuses.map((status) => [status, problemResponse(`${STATUS_CODES[status]}: ${codesOf(status).join(', ')}`)])
  return { ...Object.fromEntries(listed), default: OTHER_PROBLEMS }
}

/**
 * Who may call a route (each operation's `security`). Keyed routes (`/v1`) take an organization key as
 * `Authorization: Bearer`, or a console session's cookie; public routes take no key, or a key whose
 * organization may also see its private resources there; the rest take none at all.
 */
export const KEY_OR_SESSION: Record<string, string[]>[] = [{ bearer: [] }, { session: [] }]
export const OPTIONAL_KEY: Record<string, string[]>[] = [{}, { bearer: [] }]
export const NO_KEY: Record<string, string[]>[] = []

const ETag = Type.String({ description: 'the quoted checksum of what is sent: If-None-Match with it answers 304 while it is unchanged' })

/**
 * A stored document as the document routes send it (document-reply.ts): JSON by default, YAML on
 * request, with an ETag; 304 when If-None-Match names it.
 */
export const DocumentResponses = {
  200: {
    description: 'the document: JSON by default; YAML with ?format=yaml, or an Accept that ranks a YAML type above JSON',
    headers: { etag: ETag },
    content: {
      'application/json': { schema: Type.Unknown({ description: 'the document as JSON' }) },
      'application/yaml': { schema: Type.String({ description: 'the document as YAML: the text as uploaded (comments included) when it was uploaded as YAML' }) },
    },
  },
  304: { type: 'null', description: 'Not Modified: If-None-Match names the current ETag', headers: { etag: ETag } },
}

/** A complete OpenAPI document kept gzipped (a reference part): gzip when accepted, ETag and 304. */
export const GzippedJsonResponses = {
  200: {
    description: 'the document as JSON (Content-Encoding: gzip when the request accepts it)',
    headers: { etag: ETag },
    content: { 'application/json': { schema: Type.Object({}, { additionalProperties: true, description: 'a complete OpenAPI document' }) } },
  },
  304: DocumentResponses[304],
}

/** An HTML page (Content-Security-Policy and the other page headers: html-reply.ts). */
export const HtmlPage = (description: string) => ({ description, content: { 'text/html': { schema: Type.String() } } })
