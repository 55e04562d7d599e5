/**
 * Request bodies sent with `Content-Encoding: gzip` (what git sends for large fetch negotiations, and
 * what any client may send to an upload route): the one place that inflates a request body. It
 * inflates as the bytes arrive, on zlib's thread pool, and stops the moment the inflated body passes
 * the route's body limit (413), so a few hundred compressed bytes can never become gigabytes in
 * memory. A body that is not gzip is a 400; other codings are a 415 (RFC 9110 §15.5.16).
 */
import { Transform, type Readable, type TransformCallback } from 'node:stream'
import { createGunzip } from 'node:zlib'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { RegistryError } from '../errors.js'

/** What Fastify's body reader needs of a replaced payload: the bytes actually received on the wire. */
type DecodedPayload = Readable & { receivedEncodedLength: number }

function tooLarge(limit: number): RegistryError {
  return new RegistryError('payload_too_large', `the request body inflates to more than ${limit} bytes (the body limit)`)
}

/** Passes inflated bytes on until they exceed `limit`, then fails with a 413 instead. */
class BoundedBody extends Transform {
  #length = 0
  constructor(private readonly limit: number) {
    super()
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#length += chunk.length
    if (this.#length > this.limit) return callback(tooLarge(this.limit))
    callback(null, chunk)
  }
}

const hasBody = (request: FastifyRequest): boolean =>
  request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0

/** The codings of a Content-Encoding header, outermost last; `identity` is no coding at all. */
function codings(header: string): string[] {
  return header.split(',').map((coding) => coding.trim().toLowerCase()).filter((coding) => coding !== '' && coding !== 'identity')
}

/**
 * Replaces the payload of a gzip request with its inflated bytes, bounded by `limit`. The compressed
 * bytes count against the limit too (a stream of empty gzip members inflates to nothing). On any
 * failure the inflater is stopped at once and the connection is closed after the answer, so the rest
 * of the body is neither inflated nor waited for.
 */
function inflated(raw: Readable, reply: FastifyReply, limit: number): DecodedPayload {
  const gunzip = createGunzip()
  const body = new BoundedBody(limit) as BoundedBody & DecodedPayload
  body.receivedEncodedLength = 0
  let failed = false
  const fail = (error: Error) => {
    if (failed) return
    failed = true
    raw.unpipe(gunzip)
    gunzip.destroy()
    reply.header('connection', 'close')
    body.destroy(error)
  }
  raw.on('data', (chunk: Buffer) => {
    body.receivedEncodedLength += chunk.length
    if (body.receivedEncodedLength > limit) fail(tooLarge(limit))
  })
  gunzip.on('error', () => fail(new RegistryError('invalid_request', 'the request body is not valid gzip (Content-Encoding: gzip)')))
  body.on('error', () => {
    raw.unpipe(gunzip)
    gunzip.destroy()
  })
  raw.pipe(gunzip).pipe(body)
  return body
}

/** Decodes request bodies by their Content-Encoding for every route of `app` (register it at the root). */
export function decodeRequestBodies(app: FastifyInstance): void {
  app.addHook('preParsing', (request, reply, payload, done) => {
    const header = request.headers['content-encoding']
    if (header === undefined || !hasBody(request)) return done(null, payload)
    const list = codings(String(header))
    if (list.length === 0) return done(null, payload)
    // Multipart bodies are read from the raw request by their own parser, past this hook.
    const multipart = /^multipart\//i.test(request.headers['content-type'] ?? '')
    if (list.length > 1 || (list[0] !== 'gzip' && list[0] !== 'x-gzip') || multipart) {
      return done(new RegistryError('unsupported_media_type',
        `Content-Encoding '${String(header)}' is not supported${multipart ? ' for multipart bodies' : ''}: send the body as it is${multipart ? '' : ', or gzip it (Content-Encoding: gzip)'}`))
    }
    done(null, inflated(payload, reply, request.routeOptions.bodyLimit ?? app.initialConfig.bodyLimit ?? 1024 * 1024))
  })
}
