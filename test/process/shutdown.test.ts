import { connect } from 'node:net'
import { rmSync } from 'node:fs'
import t from 'tap'
import { petstore } from '../helpers.js'
import { tempDir } from '../temp.js'
import { api, startServer } from './spawn.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** True when a new TCP connection to the port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve(false) })
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'))
  })
}

/** The HTTP responses on one raw connection, read until the server closes it. */
function rawConnection(port: number) {
  const socket = connect(port, '127.0.0.1')
  let received = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => { received += chunk })
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(received)))
  socket.on('error', () => {})
  return { socket, closed }
}

t.test('SIGTERM: new connections are refused, the upload in flight is answered and kept, exit 0 within 10 s', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const key = `sk_${'s'.repeat(40)}`
  const server = await startServer(storage, { REGISTRY_BOOTSTRAP_KEY: key })
  t.teardown(() => server.stop('SIGKILL'))
  const port = Number(new URL(server.url).port)
  const id = (await api(server.url, key, 'POST', '/v1/apis', { name: 'pets' })).json().data.id

  // An upload whose body is still arriving when the signal comes, and a second request behind it on
  // the same keep-alive connection.
  const body = JSON.stringify({ document: petstore('2.0.0') })
  const upload = `POST /v1/apis/${id}/spec HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`
  const next = `GET /v1/apis HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`
  const connection = rawConnection(port)
  await new Promise((resolve) => connection.socket.once('connect', resolve))
  connection.socket.write(upload + body.slice(0, 20))
  await sleep(300)

  const signalled = Date.now()
  const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)))
  server.child.kill('SIGTERM')
  let refusedAt = 0
  while (!refusedAt && Date.now() - signalled < 5_000) {
    if (await refused(port)) refusedAt = Date.now()
    else await sleep(25)
  }
  t.ok(refusedAt > 0, `new connections are refused ${refusedAt - signalled} ms after SIGTERM, while the upload is in flight`)

  connection.socket.write(body.slice(20) + next)
  const responses = await connection.closed
  const statuses = [...responses.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]))
  t.equal(statuses[0], 201, 'the upload in flight is answered 201')
  t.match(responses, /^connection: close\r$/im, 'the connection is closed after that answer')
  // Node closes the connection instead of reading the next request; were it read, it would get a 503.
  t.ok(statuses.length === 1 || statuses[1] === 503, `the request behind it is not served: ${statuses.join(', ')}`)
  t.equal(await exited, 0, 'exit code 0')
  t.ok(Date.now() - signalled < 10_000, `exited ${Date.now() - signalled} ms after SIGTERM`)
  t.match(server.output(), /shutting down/)

  const restarted = await startServer(storage)
  t.teardown(() => restarted.stop('SIGKILL'))
  const versions = (await api(restarted.url, key, 'GET', `/v1/apis/${id}/versions`)).json()
  t.equal(versions.total, 1, 'the upload answered during shutdown is kept')
  const latest = (await api(restarted.url, key, 'GET', `/v1/apis/${id}/spec`)).json()
  t.equal(latest.info.version, '2.0.0')
  t.equal(await restarted.stop('SIGINT'), 0)
})
