/**
 * Issue 14, finding 2: a request body sent with `Content-Encoding: gzip` is inflated as it arrives and
 * stops at the body limit (413), whatever route it goes to; a body that is not gzip is a 400, never a
 * 500; codings the server does not speak are a 415. What the server itself reads inflated (a git
 * provider's API answers, which fetch inflates) is bounded the same way.
 */
import { readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createGzip, gzipSync } from 'node:zlib'
import t from 'tap'
import { openPullRequest } from '../../src/sdk/providers.js'
import { json, petstore, startTestServer } from '../helpers.js'
import { startServer } from '../process/spawn.js'
import { tempDir } from '../temp.js'

const MB = 1024 * 1024

/** `size` zero bytes, gzipped as a stream (the test never holds the inflated bytes either). */
async function gzipBomb(size: number): Promise<Buffer> {
  const gzip = createGzip({ level: 9 })
  const chunks: Buffer[] = []
  gzip.on('data', (chunk: Buffer) => chunks.push(chunk))
  const done = new Promise((resolve) => gzip.on('end', resolve))
  const zeros = Buffer.alloc(MB)
  for (let written = 0; written < size; written += MB) {
    if (!gzip.write(zeros)) await new Promise((resolve) => gzip.once('drain', resolve))
  }
  gzip.end()
  await done
  return Buffer.concat(chunks)
}

/** The peak resident memory of a process so far (VmHWM), in bytes. */
function peakMemory(pid: number): number {
  const kb = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  return Number(kb) * 1024
}

const basic = (key: string) => `Basic ${Buffer.from(`x:${key}`).toString('base64')}`

/** A protocol v2 `ls-refs` request, as git sends it. */
const LS_REFS = Buffer.from('0014command=ls-refs\n0001000csymrefs\n0000')

t.test('a gzip bomb to git-upload-pack answers 413 and the server does not inflate it', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const server = await startServer(storage, { REGISTRY_BODY_LIMIT: '4mb' })
  t.teardown(() => server.stop('SIGKILL'))
  const url = `${server.url}/git/default.git/git-upload-pack`
  const post = (body: Buffer, headers: Record<string, string> = {}) => fetch(url, {
    method: 'POST', body,
    headers: { authorization: basic(server.key!), 'content-type': 'application/x-git-upload-pack-request', 'git-protocol': 'version=2', ...headers },
  })

  const plain = await post(LS_REFS)
  t.equal(plain.status, 200, 'an ls-refs request is served')
  const gzipped = await post(gzipSync(LS_REFS), { 'content-encoding': 'gzip' })
  t.equal(gzipped.status, 200, 'the same request gzipped is served')
  t.same(Buffer.from(await gzipped.arrayBuffer()), Buffer.from(await plain.arrayBuffer()))

  const bomb = await gzipBomb(512 * MB)
  t.ok(bomb.length < 1 * MB, `the bomb is small on the wire (${bomb.length} bytes)`)
  const before = peakMemory(server.child.pid!)
  const answer = await post(bomb, { 'content-encoding': 'gzip' })
  t.equal(answer.status, 413)
  t.match(await answer.json(), { code: 'payload_too_large', detail: /inflates to more than 4194304 bytes/ })
  const grown = peakMemory(server.child.pid!) - before
  t.ok(grown < 64 * MB, `the server's peak memory grew by ${Math.round(grown / MB)} MB, not by the 512 MB the body inflates to`)

  const garbage = await post(Buffer.from('this is not gzip at all'), { 'content-encoding': 'gzip' })
  t.equal(garbage.status, 400)
  t.match(await garbage.json(), { code: 'invalid_request', detail: /not valid gzip/ })
  t.equal((await post(LS_REFS)).status, 200, 'the server keeps serving')
})

t.test('every route inflates gzip bodies within its own limit', async (t) => {
  const s = await startTestServer({ config: { bodyLimit: 1 * MB } })
  t.teardown(s.close)
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Pets' } })).data
  const upload = (payload: Buffer, headers: Record<string, string>) =>
    s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload, headers: { 'content-type': 'application/json', ...headers } })

  const document = Buffer.from(JSON.stringify({ document: petstore() }))
  const created = await upload(gzipSync(document), { 'content-encoding': 'gzip' })
  t.equal(created.statusCode, 201, 'a gzipped upload is stored')
  t.equal(json(created).data.number, 1)

  const bomb = await gzipBomb(64 * MB)
  const tooLarge = await upload(bomb, { 'content-encoding': 'gzip' })
  t.equal(tooLarge.statusCode, 413)
  t.equal(json(tooLarge).code, 'payload_too_large')

  const truncated = await upload(gzipSync(document).subarray(0, 40), { 'content-encoding': 'gzip' })
  t.equal(truncated.statusCode, 400, 'a gzip stream cut short')
  t.equal(json(truncated).code, 'invalid_request')

  const garbage = await upload(Buffer.from('{"document":{}}'), { 'content-encoding': 'x-gzip' })
  t.equal(garbage.statusCode, 400)

  const brotli = await upload(document, { 'content-encoding': 'br' })
  t.equal(brotli.statusCode, 415)
  t.match(json(brotli), { code: 'unsupported_media_type', detail: /Content-Encoding 'br' is not supported/ })
  const twice = await upload(gzipSync(gzipSync(document)), { 'content-encoding': 'gzip, gzip' })
  t.equal(twice.statusCode, 415, 'one coding at most')
  t.equal((await upload(document, { 'content-encoding': 'identity' })).statusCode, 200, 'identity is no coding (unchanged: 200)')
  const form = await s.call({
    method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: gzipSync('--b\r\ncontent-disposition: form-data; name="document"\r\n\r\n{}\r\n--b--\r\n'),
    headers: { 'content-type': 'multipart/form-data; boundary=b', 'content-encoding': 'gzip' },
  })
  t.equal(form.statusCode, 415, 'a gzipped multipart body is refused, not left half read')

  // The webhook routes have a smaller limit of their own (5 MB): a bomb stops there too.
  const hook = await s.call({
    method: 'POST', url: '/webhooks/github', key: null, payload: bomb,
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'x-github-event': 'push' },
  })
  t.equal(hook.statusCode, 413)
  t.equal(json(hook).code, 'payload_too_large')
})

t.test("a provider's API answering a gzip bomb is read up to a bound, not inflated whole", async (t) => {
  const bomb = await gzipBomb(256 * MB)
  const server = createServer((_request, response) => {
    response.writeHead(201, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': bomb.length })
    response.end(bomb)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const { port } = server.address() as AddressInfo
  const before = process.memoryUsage().arrayBuffers
  await t.rejects(openPullRequest({
    provider: 'github', url: 'https://github.com/acme/sdk.git', api_url: `http://127.0.0.1:${port}`, token: 't',
    branch: 'registry/x', base: 'main', title: 'x', body: 'x', signal: AbortSignal.timeout(60_000),
  }), { name: 'OutboundFailure', reason: /DownloadTooLarge: .*larger than 1048576 bytes/ })
  const grown = process.memoryUsage().arrayBuffers - before
  t.ok(grown < 64 * MB, `buffers grew by ${Math.round(grown / MB)} MB while reading an answer that inflates to 256 MB`)
})
