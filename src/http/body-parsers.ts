import { isUtf8 } from 'node:buffer'
import multipart from '@fastify/multipart'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { BodyShape } from '../documents/types.js'
import { RegistryError, invalidRequest } from '../errors.js'

export const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml']

/**
 * Upload routes also take the raw document under these types: the OpenAPI media types (IANA:
 * `application/vnd.oai.openapi` is YAML, `…+json` JSON) and JSON Schema's. JSON or YAML, as its text says.
 */
const DOCUMENT_TYPES = ['application/vnd.oai.openapi', 'application/vnd.oai.openapi+json', 'application/schema+json', ...YAML_TYPES]

/** What a 415 on an upload route lists (and its Accept-Post header). */
export const UPLOAD_TYPES = ['application/json', ...DOCUMENT_TYPES, 'multipart/form-data']

/**
 * The body of an upload route: its bytes, checked to be UTF-8 and left for a worker to decode and
 * parse (documents are data). Bytes, not text: they move to the worker without a copy, where a
 * decoded string would be decoded and then copied again on the thread that serves requests.
 */
export interface RawDocumentBody {
  raw: Buffer
  /** How the worker reads it: see BodyShape. */
  shape: BodyShape
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Upload routes take their body as raw text instead of parsed JSON. */
    rawDocument?: boolean
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

function checkedUtf8(body: Buffer): Buffer {
  if (!isUtf8(body)) throw invalidRequest('the request body is not valid UTF-8')
  return body
}

function decode(body: Buffer): string {
  try {
    return utf8.decode(body)
  } catch {
    throw invalidRequest('the request body is not valid UTF-8')
  }
}

const isUploadRoute = (request: FastifyRequest): boolean => request.routeOptions.config?.rawDocument === true

/**
 * Deepest nesting a parsed JSON body may have: a document's own limit (256) plus the body around it.
 * Deeper values would reach recursive code (validation, the worker hand-off) on the request thread.
 */
export const MAX_BODY_DEPTH = 258

/** Iterative, so a hostile body cannot overflow the stack while it is measured. */
function tooDeep(value: unknown, limit: number): boolean {
  const nodes: unknown[] = [value]
  const depths: number[] = [1]
  while (nodes.length > 0) {
    const node = nodes.pop()
    const depth = depths.pop()!
    if (node === null || typeof node !== 'object') continue
    if (depth > limit) return true
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') {
        nodes.push(child)
        depths.push(depth + 1)
      }
    }
  }
  return false
}

/** A 415 that says what the route takes. */
export function unsupportedMediaType(request: FastifyRequest): RegistryError {
  const given = request.headers['content-type'] ?? 'none'
  if (!isUploadRoute(request)) {
    return new RegistryError('unsupported_media_type', `request bodies are application/json (Content-Type: ${given})`, undefined,
      { 'accept-post': 'application/json' })
  }
  return new RegistryError('unsupported_media_type',
    `a document is uploaded as application/json (the document itself, or { "document": … }), as its own text with `
    + `Content-Type ${DOCUMENT_TYPES.join(', ')}, or as multipart/form-data with a field named 'document' `
    + `(curl -F document=@openapi.yaml); Content-Type: ${given}`,
    undefined, { 'accept-post': UPLOAD_TYPES.join(', ') })
}

const rawBody = (body: Buffer, shape: BodyShape): RawDocumentBody => ({ raw: checkedUtf8(body), shape })

/**
 * JSON bodies are decoded strictly (invalid UTF-8 is a 400, never replaced) and parsed with JSON.parse,
 * which makes `__proto__` an own property, never a prototype. Upload routes keep the bytes for a worker,
 * and also take the document's own media types, and a body without a Content-Type (read as JSON when
 * it is JSON, else as YAML). Anything else is a 415 that lists what the route takes.
 */
export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      if (isUploadRoute(request)) return done(null, rawBody(body as Buffer, 'json'))
      const text = decode(body as Buffer)
      if (text.trim() === '') return done(null, undefined)
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch (error) {
        return done(invalidRequest(`malformed JSON: ${(error as Error).message}`))
      }
      if (tooDeep(parsed, MAX_BODY_DEPTH)) return done(invalidRequest(`the request body is nested deeper than ${MAX_BODY_DEPTH} levels`))
      done(null, parsed)
    } catch (error) {
      done(error as Error)
    }
  })
  app.addContentTypeParser(DOCUMENT_TYPES, { parseAs: 'buffer' }, (request, body, done) => {
    try {
      if (!isUploadRoute(request)) throw unsupportedMediaType(request)
      done(null, rawBody(body as Buffer, 'document'))
    } catch (error) {
      done(error as Error)
    }
  })
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      if (!isUploadRoute(request) || request.headers['content-type'] !== undefined) throw unsupportedMediaType(request)
      done(null, rawBody(body as Buffer, 'untyped'))
    } catch (error) {
      done(error as Error)
    }
  })
}

/**
 * Registers upload routes in a scope of their own where multipart/form-data is parsed: the document is
 * one field named `document` (a file, or a text field), at most the body limit. Elsewhere a multipart
 * body is a 415 like any other type a route does not take.
 */
export function registerUploadRoutes(app: FastifyInstance, routes: (scope: FastifyInstance) => void): void {
  app.register(async (scope) => {
    const limit = scope.initialConfig.bodyLimit ?? 1024 * 1024
    await scope.register(multipart, { limits: { fileSize: limit, fieldSize: limit, files: 1, fields: 1, parts: 2 } })
    scope.addHook('preValidation', async (request) => {
      if (request.isMultipart()) request.body = await multipartDocument(request)
    })
    routes(scope)
  })
}

async function multipartDocument(request: FastifyRequest): Promise<RawDocumentBody> {
  try {
    return await readMultipartDocument(request)
  } catch (error) {
    if (error instanceof RegistryError) throw error
    const { statusCode, message } = error as { statusCode?: number; message?: string }
    // Limits (413) keep their status; anything busboy could not read is the client's malformed body.
    if (statusCode === 413) throw new RegistryError('payload_too_large', `the multipart body is over the limit: ${message}`)
    throw invalidRequest(`malformed multipart/form-data body: ${message ?? 'unreadable'}`)
  }
}

async function readMultipartDocument(request: FastifyRequest): Promise<RawDocumentBody> {
  let document: Buffer | undefined
  for await (const part of request.parts()) {
    if (part.fieldname !== 'document' || document !== undefined) {
      throw invalidRequest(`unexpected multipart field '${part.fieldname.slice(0, 100)}': send one field named 'document' (curl -F document=@openapi.yaml)`,
        [{ message: 'unknown field', path: [part.fieldname.slice(0, 100)] }])
    }
    if (part.type === 'file') {
      document = await part.toBuffer()
    } else {
      if (part.valueTruncated) throw new RegistryError('payload_too_large', 'the document field is larger than the body limit')
      document = Buffer.from(String(part.value), 'utf8')
    }
  }
  if (document === undefined) {
    throw invalidRequest("the multipart body has no field named 'document' (curl -F document=@openapi.yaml)", [{ message: 'required field', path: ['document'] }])
  }
  return rawBody(document, 'document')
}
