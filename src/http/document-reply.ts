import { promisify } from 'node:util'
import { gunzip } from 'node:zlib'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { DocumentFormat } from '../documents/types.js'
import { tenantOfRequest } from './auth.js'
import type { Reader } from '../domain/resources/registry-refs.js'
import type { Versions } from '../domain/resources/versions.js'
import type { VersionRecord } from '../storage/registry-records.js'
import { YAML_TYPES } from './body-parsers.js'

const gunzipAsync = promisify(gunzip)

const CONTENT_TYPE: Record<DocumentFormat, string> = {
  json: 'application/json; charset=utf-8',
  yaml: 'application/yaml; charset=utf-8',
}

/** `?format=` wins; else an Accept header that prefers a YAML type; else JSON. */
export function requestedFormat(request: FastifyRequest): DocumentFormat {
  const explicit = (request.query as { format?: DocumentFormat } | undefined)?.format
  if (explicit) return explicit
  const accept = request.headers.accept
  if (!accept) return 'json'
  let best: { format: DocumentFormat; q: number } = { format: 'json', q: 0 }
  for (const part of accept.split(',')) {
    const [type, ...params] = part.trim().toLowerCase().split(';')
    const q = Number(params.map((p) => p.trim()).find((p) => p.startsWith('q='))?.slice(2) ?? 1)
    const format: DocumentFormat | undefined = YAML_TYPES.includes(type) ? 'yaml' : type === 'application/json' ? 'json' : undefined
    if (format && q > best.q) best = { format, q }
  }
  return best.format
}

function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim().replace(/^W\//, '')
    return t === '*' || t === etag || t === etag.slice(1, -1)
  })
}

/**
 * Sends a stored document with its checksum as ETag; a matching If-None-Match answers 304. With
 * `?bundle=true`, the document as bundled for `reader` (see Versions.bundled), with its own checksum.
 */
export async function sendDocument(request: FastifyRequest, reply: FastifyReply, versions: Versions, version: VersionRecord, reader: Reader) {
  const format = requestedFormat(request)
  if ((request.query as { bundle?: boolean } | undefined)?.bundle === true) {
    const bundled = await versions.bundled(version, format, reader, tenantOfRequest(request))
    return sendBytes(request, reply, format, bundled.checksum, async () => bundled.bytes)
  }
  return sendBytes(request, reply, format, version.checksum, async () => (await versions.read(version, format, tenantOfRequest(request))).bytes)
}

async function sendBytes(request: FastifyRequest, reply: FastifyReply, format: DocumentFormat, checksum: string, bytes: () => Promise<Buffer>) {
  const etag = `"${checksum}"`
  reply.header('etag', etag).header('vary', 'Accept').header('cache-control', 'no-cache')
  if (matches(request.headers['if-none-match'], etag)) return reply.status(304).send()
  return reply.type(CONTENT_TYPE[format]).send(await bytes())
}

/**
 * Sends JSON kept gzipped (a reference part): as it is to a client that accepts gzip, unzipped
 * otherwise; `etag` names the content, a matching If-None-Match answers 304.
 */
export async function sendGzippedJson(request: FastifyRequest, reply: FastifyReply, etag: string, gzipped: Uint8Array) {
  reply.header('etag', etag).header('vary', 'accept-encoding').header('cache-control', 'no-cache')
  if (matches(request.headers['if-none-match'], etag)) return reply.status(304).send()
  reply.type(CONTENT_TYPE.json)
  const bytes = Buffer.from(gzipped.buffer, gzipped.byteOffset, gzipped.byteLength)
  if (/\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) return reply.header('content-encoding', 'gzip').send(bytes)
  return reply.send(await gunzipAsync(bytes))
}
