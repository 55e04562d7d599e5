/**
 * Issue 14, item 10: a document too large for a document worker's heap is refused with a 413
 * problem+json before it reaches a worker, and the server keeps serving. Before, a 16 MB upload to a
 * server with REGISTRY_LINT_MEMORY_MB=64 (or a 40 MB schema sent as a JSON object) aborted the whole
 * process: V8 cannot interrupt one large parse or structured clone at a worker's heap limit. Webhook
 * payloads, read on the event loop before their signature can be checked, are bounded in size and depth.
 */
import { rmSync } from 'node:fs'
import { connect } from 'node:net'
import t from 'tap'
import { json, petstore, startTestServer } from '../helpers.js'
import { startServer } from '../process/spawn.js'
import { tempDir } from '../temp.js'

const MB = 1024 * 1024

/** A valid OpenAPI document of about `size` bytes of JSON: one long array of zeros in an extension. */
function bigOpenApi(size: number): string {
  const head = JSON.stringify(petstore()).slice(0, -1)
  return `${head},"x-padding":[${'0,'.repeat(Math.floor(size / 2))}0]}`
}

/**
 * POST over a bare socket that sends the headers, waits for an answer to them, and only then writes the
 * body piece by piece, a few milliseconds apart, stopping once the server has answered, as a client does
 * that reads while it sends (curl's Expect: 100-continue waits the same way). The server answers a 413 from
 * Content-Length and closes; a client that went on writing at full speed (Node's HTTP client, fetch) gets
 * EPIPE, and the reset that follows drops the answer it had not yet read.
 */
function postEarlyAnswer(url: string, key: string, body: string): Promise<{ status: number; body: string }> {
  const { hostname, port, pathname } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    let received = ''
    const answer = () => {
      const [head = '', text = ''] = received.split('\r\n\r\n', 2)
      return { head, text, length: Number(/content-length: (\d+)/i.exec(head)?.[1] ?? -1) }
    }
    const finish = () => {
      const { head, text } = answer()
      socket.destroy()
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), body: text })
    }
    socket.setEncoding('utf8').on('data', (chunk) => {
      received += chunk
      const { length, text } = answer()
      if (length >= 0 && Buffer.byteLength(text) >= length) finish()
    })
    socket.on('close', finish)
    socket.on('error', (error: NodeJS.ErrnoException) => { if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error) })
    const bytes = Buffer.from(body)
    const writeFrom = (offset: number): void => {
      if (received !== '' || offset >= bytes.length || socket.destroyed) return
      socket.write(bytes.subarray(offset, offset + 64 * 1024), () => setTimeout(() => writeFrom(offset + 64 * 1024), 5))
    }
    socket.write(`POST ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${key}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${bytes.length}\r\n\r\n`, () => {
      // The body only if no answer came from the headers alone: a server that answers from
      // Content-Length and closes with a body still unread resets the connection, and the reset can
      // arrive before the answer is read (status 0 in a CI run). A server that reads the body gets it.
      setTimeout(() => writeFrom(0), 5_000).unref()
    })
  })
}

t.test('an upload too large for the worker heap is a 413 and the server keeps serving', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const server = await startServer(storage, { REGISTRY_LINT_MEMORY_MB: '64' })
  t.teardown(() => server.stop('SIGKILL'))
  const call = (method: string, path: string, body?: string, type = 'application/json') => fetch(`${server.url}${path}`, {
    method, body, headers: { authorization: `Bearer ${server.key}`, ...(body === undefined ? {} : { 'content-type': type }) },
  })

  const created = await call('POST', '/v1/apis', JSON.stringify({ name: 'Pets' }))
  t.equal(created.status, 201)
  const api = ((await created.json()) as { data: { id: string } }).data.id

  const big = await call('POST', `/v1/apis/${api}/spec`, bigOpenApi(16 * MB))
  t.equal(big.status, 413, 'a 16 MB document is refused')
  t.match(big.headers.get('content-type'), /^application\/problem\+json/)
  t.match(await big.json(), { code: 'payload_too_large', detail: /at most 2\.0 MB .*64 MB heap, REGISTRY_LINT_MEMORY_MB/ })

  const schema = `{"name":"Huge","document":{"type":"object","x-padding":[${'{},'.repeat(14 * MB)}{}]}}`
  t.ok(schema.length > 40 * MB, `the schema body is ${Math.round(schema.length / MB)} MB of JSON`)
  const bigSchema = await postEarlyAnswer(`${server.url}/v1/schemas`, server.key!, schema)
  t.equal(bigSchema.status, 413, 'a schema sent as a large JSON object is refused')
  t.match(JSON.parse(bigSchema.body), { code: 'payload_too_large', detail: /larger than the 2097152 bytes this route takes/ })

  t.equal(server.child.exitCode, null, 'the server process is still running')
  t.equal((await call('GET', '/readyz')).status, 200, 'the server is ready')
  const fits = await call('POST', `/v1/apis/${api}/spec`, bigOpenApi(64 * 1024))
  t.equal(fits.status, 201, 'a document within the heap budget is stored')
  t.equal((await call('POST', '/v1/schemas', JSON.stringify({ name: 'Small', document: { type: 'object' } }))).status, 201)
})

t.test('webhook payloads are bounded in size and depth before they are read', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const deliver = (payload: string) => s.app.inject({
    method: 'POST', url: '/webhooks/github', payload, headers: { 'content-type': 'application/json', 'x-github-event': 'push' },
  })
  const large = await deliver(JSON.stringify({ ref: 'refs/heads/main', padding: 'x'.repeat(2 * MB) }))
  t.equal(large.statusCode, 413, 'a 2 MB payload is refused (push payloads are tens of KB)')
  t.equal(json(large).code, 'payload_too_large')

  const deep = await deliver(`{"ref":"refs/heads/main","x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`)
  t.equal(deep.statusCode, 400, 'a payload nested 100,000 levels deep is refused')
  t.match(json(deep), { code: 'invalid_request', detail: /nested deeper than 32 levels/ })

  const brackets = await deliver(JSON.stringify({ ref: 'refs/heads/main', message: '[[[[{{{{'.repeat(1000) }))
  t.not(brackets.statusCode, 400, 'brackets inside strings do not count as nesting')
  t.equal((await s.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200)
})
