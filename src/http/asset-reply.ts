import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Asset } from '../sites/assets.js'

const IMMUTABLE = 'public, max-age=31536000, immutable'

/**
 * Sends a static file whose name changes with its content: cached for a year as immutable, gzipped
 * when the client accepts it (made once per file, on first use).
 */
export async function sendAsset(request: FastifyRequest, reply: FastifyReply, asset: Asset): Promise<FastifyReply> {
  reply.header('cache-control', IMMUTABLE).header('vary', 'accept-encoding').type(asset.type)
  if (/\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) {
    return reply.header('content-encoding', 'gzip').send(await asset.gzipped())
  }
  return reply.send(asset.bytes)
}
