/**
 * A real git server on loopback for tests: `git http-backend` (the git CLI's own smart-HTTP CGI program)
 * behind a small Node HTTP server. Repositories are bare repositories under `root`; clone URLs are
 * `${url}/<name>.git`. Pushes are allowed. With `auth`, every request must carry HTTP basic credentials
 * whose password is `auth.password` (any user name) or `Authorization: Bearer <auth.password>`.
 *
 * The server runs in the test's own process: drive the git CLI asynchronously (`execFile` promisified),
 * never with `execFileSync`, which blocks the event loop this server answers on.
 */
import { spawn, execFileSync } from 'node:child_process'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'

export interface GitHttpServer {
  url: string
  root: string
  /** Every request seen: method and path with query, for asserting what a client asked for. */
  requests: { method: string; url: string }[]
  /** Creates a bare repository `<name>.git` whose HEAD is `branch`; answers its path. */
  createBare(name: string, branch?: string): string
  close(): Promise<void>
}

export async function startGitHttpServer(root: string, options: { auth?: { password: string } } = {}): Promise<GitHttpServer> {
  mkdirSync(root, { recursive: true })
  const requests: { method: string; url: string }[] = []
  const server: Server = createServer((request, response) => {
    requests.push({ method: request.method ?? 'GET', url: request.url ?? '/' })
    if (options.auth && !authorized(request, options.auth.password)) {
      response.writeHead(401, { 'www-authenticate': 'Basic realm="test"' }).end('unauthorized')
      return
    }
    const url = new URL(request.url ?? '/', 'http://localhost')
    const backend = spawn('git', ['http-backend'], {
      env: {
        ...process.env,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: request.method ?? 'GET',
        CONTENT_TYPE: request.headers['content-type'] ?? '',
        // http-backend refuses receive-pack (push) to anonymous users; any name enables it.
        REMOTE_USER: 'test',
        REMOTE_ADDR: '127.0.0.1',
        GIT_HTTP_MAX_REQUEST_BUFFER: '100M',
        ...(request.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(request.headers['content-encoding']) } : {}),
        ...(request.headers['git-protocol'] ? { GIT_PROTOCOL: String(request.headers['git-protocol']) } : {}),
      },
    })
    request.pipe(backend.stdin)
    relayCgi(backend.stdout, response)
    backend.stderr.resume()
    backend.on('error', () => { if (!response.headersSent) response.writeHead(500).end() })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    root,
    requests,
    createBare(name, branch = 'main') {
      const path = join(root, `${name}.git`)
      execFileSync('git', ['init', '--quiet', '--bare', `--initial-branch=${branch}`, path])
      return path
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}

function authorized(request: IncomingMessage, password: string): boolean {
  const header = request.headers.authorization ?? ''
  if (header === `Bearer ${password}`) return true
  if (!header.startsWith('Basic ')) return false
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8')
  return decoded.slice(decoded.indexOf(':') + 1) === password
}

/** Copies a CGI response (headers, blank line, body) to an HTTP response. */
function relayCgi(output: NodeJS.ReadableStream, response: import('node:http').ServerResponse): void {
  let head = Buffer.alloc(0)
  let headersDone = false
  output.on('data', (chunk: Buffer) => {
    if (headersDone) {
      response.write(chunk)
      return
    }
    head = Buffer.concat([head, chunk])
    const end = head.indexOf('\r\n\r\n')
    const endLf = head.indexOf('\n\n')
    const at = end >= 0 && (endLf < 0 || end < endLf) ? { index: end, size: 4 } : endLf >= 0 ? { index: endLf, size: 2 } : undefined
    if (!at) return
    headersDone = true
    let status = 200
    const headers: Record<string, string> = {}
    for (const line of head.subarray(0, at.index).toString('latin1').split(/\r?\n/)) {
      const colon = line.indexOf(':')
      if (colon < 0) continue
      const name = line.slice(0, colon).trim().toLowerCase()
      const value = line.slice(colon + 1).trim()
      if (name === 'status') status = Number.parseInt(value, 10)
      else headers[name] = value
    }
    response.writeHead(status, headers)
    response.write(head.subarray(at.index + at.size))
  })
  output.on('end', () => {
    if (!headersDone) response.writeHead(502)
    response.end()
  })
}
