import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { ErrorCode } from '../errors.js'

/**
 * Node's HTTP parser refuses some requests before Fastify sees them: headers (request line and query
 * string included) over Node's `--max-http-header-size` (16 KB), a request that took too long to
 * arrive, or one that is not HTTP. They are answered in problem+json like every other error, then the
 * connection is closed (Fastify's `clientErrorHandler`).
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has no one left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const [status, code, detail]: [number, ErrorCode, string] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'headers_too_large', 'the request line and headers are larger than the server accepts (16 KB)']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'the request did not arrive in time']
        : [400, 'invalid_request', 'the request is not valid HTTP']
  const title = STATUS_CODES[status] ?? 'Error'
  const body = JSON.stringify({ type: 'about:blank', title, status, code, detail })
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy(error)
}
