import { isUtf8 } from 'node:buffer'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { RegistryError, invalidRequest } from '../errors.js'

export const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml']

/**
 * The body of an upload route: its bytes, checked to be UTF-8 and left for a worker to decode and
 * parse (documents are data). Bytes, not text: they move to the worker without a copy, where a
 * decoded string would be decoded and then copied again on the thread that serves requests.
 */
export interface RawDocumentBody {
  raw: Buffer
  /** JSON bodies are `{ "document": … }`; YAML bodies are the document itself. */
  envelope: boolean
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

/**
 * JSON bodies are decoded strictly (invalid UTF-8 is a 400, never replaced) and parsed with JSON.parse,
 * which makes `__proto__` an own property, never a prototype. Upload routes keep the text for a worker.
 */
export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      if (isUploadRoute(request)) return done(null, { raw: checkedUtf8(body as Buffer), envelope: true } satisfies RawDocumentBody)
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
  app.addContentTypeParser(YAML_TYPES, { parseAs: 'buffer' }, (request, body, done) => {
    try {
      if (!isUploadRoute(request)) {
        throw new RegistryError('unsupported_media_type', 'YAML bodies are accepted only by document upload routes')
      }
      done(null, { raw: checkedUtf8(body as Buffer), envelope: false } satisfies RawDocumentBody)
    } catch (error) {
      done(error as Error)
    }
  })
}
