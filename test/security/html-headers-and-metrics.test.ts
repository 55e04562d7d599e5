/**
 * Issue 14, finding 9: every HTML response of the server (`/docs` whatever renders it, the console,
 * site pages, their 404 pages) carries a Content-Security-Policy that forbids framing by others and an
 * X-Frame-Options header; `/metrics` without REGISTRY_METRICS_TOKEN answers clients on the server's
 * own host only, and the start-up log says how to expose it.
 */
import { rmSync } from 'node:fs'
import { networkInterfaces } from 'node:os'
import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { json, petstore, startTestServer, type TestServer } from '../helpers.js'
import { startServer } from '../process/spawn.js'
import { tempDir } from '../temp.js'

/** GET, following redirects (as a browser would) up to three times. */
async function browse(s: TestServer, url: string, host?: string): Promise<LightMyRequestResponse> {
  let response = await s.call({ method: 'GET', url, key: null, headers: host ? { host } : {} })
  for (let hops = 0; hops < 3 && response.statusCode >= 300 && response.statusCode < 400; hops++) {
    const next = new URL(String(response.headers.location), `http://localhost${url}`)
    url = next.pathname + next.search
    response = await s.call({ method: 'GET', url, key: null, headers: host ? { host } : {} })
  }
  return response
}

const isHtml = (response: LightMyRequestResponse) => /^text\/html/.test(String(response.headers['content-type'] ?? ''))

function assertProtected(t: Test, response: LightMyRequestResponse, what: string): void {
  const policy = String(response.headers['content-security-policy'] ?? '')
  const ancestors = /frame-ancestors ([^;]+)/.exec(policy)?.[1]
  t.ok(ancestors === "'none'" || ancestors === "'self'", `${what}: a CSP with frame-ancestors 'none' or 'self' (${policy || 'none'})`)
  t.match(policy, /script-src 'self'(;|$)/, `${what}: scripts from this host only, never inline`)
  t.equal(response.headers['x-frame-options'], ancestors === "'self'" ? 'SAMEORIGIN' : 'DENY', `${what}: X-Frame-Options`)
}

t.test('every HTML response has a Content-Security-Policy and framing protection', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Petstore', visibility: 'public' } })).data
  await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore() } })
  const site = await s.call({
    method: 'POST', url: '/v1/sites',
    payload: { name: 'Docs', slug: 'docs', visibility: 'public', api_ids: [api.id], domains: ['docs.acme.example'] },
  })
  t.equal(site.statusCode, 201)

  const docs = await browse(s, '/docs')
  t.equal(docs.statusCode, 200, '/docs serves a page')
  t.ok(isHtml(docs), '/docs is HTML')
  assertProtected(t, docs, '/docs')

  const pages: [string, string?][] = [
    ['/'], ['/docs/'], ['/console'], ['/console/apis'],
    ['/@acme/sites/docs/'], ['/@acme/sites/docs/apis/petstore'], ['/@acme/sites/docs/guides/missing'],
    ['/', 'docs.acme.example'], ['/nothing-here', 'docs.acme.example'],
  ]
  let html = 0
  for (const [url, host] of pages) {
    const response = await browse(s, url, host)
    if (!isHtml(response)) continue
    html += 1
    assertProtected(t, response, `${host ?? ''}${url} (${response.statusCode})`)
  }
  t.ok(html >= 5, `the site pages and their 404 pages are among them (${html} HTML responses)`)
  const jsonAnswer = await s.call({ method: 'GET', url: '/v1/apis' })
  t.equal(jsonAnswer.headers['x-frame-options'], undefined, 'JSON answers need no framing header')
})

t.test('/metrics without a token answers loopback clients only', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  for (const remoteAddress of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) {
    const local = await s.app.inject({ method: 'GET', url: '/metrics', remoteAddress })
    t.equal(local.statusCode, 200, `${remoteAddress} is on this host`)
  }
  for (const remoteAddress of ['192.0.2.10', '10.0.0.1', '::ffff:10.1.2.3', 'fd00::1']) {
    const remote = await s.app.inject({ method: 'GET', url: '/metrics', remoteAddress })
    t.equal(remote.statusCode, 403, `${remoteAddress} is refused`)
    t.match(json(remote), { code: 'forbidden', detail: /REGISTRY_METRICS_TOKEN/ })
    t.notMatch(remote.body, /registry_http_requests_total/)
  }

  const withToken = await startTestServer({ config: { metricsToken: 'scrape-token-123' } })
  t.teardown(withToken.close)
  const remote = (authorization?: string) => withToken.app.inject({
    method: 'GET', url: '/metrics', remoteAddress: '192.0.2.10', headers: authorization ? { authorization } : {},
  })
  t.equal((await remote()).statusCode, 401, 'with a token set, another host needs it')
  t.equal((await remote('Bearer scrape-token-123')).statusCode, 200, 'and is served with it')
})

/** An address of this machine that is not loopback, when it has one. */
const externalAddress = Object.values(networkInterfaces()).flat()
  .find((address) => address && address.family === 'IPv4' && !address.internal)?.address

t.test('a real server: /metrics refuses another interface, and the start-up log says how to expose it', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const server = await startServer(storage, { HOST: '0.0.0.0' })
  t.teardown(() => server.stop('SIGKILL'))
  t.match(server.output(), /GET \/metrics answers clients on this host only; set REGISTRY_METRICS_TOKEN to expose it/)
  const port = new URL(server.url).port
  t.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 200, 'served on loopback')
  if (!externalAddress) {
    t.comment('no non-loopback interface on this machine: the remote case is covered by the test above')
    return
  }
  const remote = await fetch(`http://${externalAddress}:${port}/metrics`)
  t.equal(remote.status, 403, `refused to a client connecting through ${externalAddress}`)
  t.equal(((await remote.json()) as { code: string }).code, 'forbidden')

  const docs = await fetch(`http://127.0.0.1:${port}/docs`)
  t.equal(docs.status, 200)
  t.match(docs.headers.get('content-security-policy'), /frame-ancestors '(none|self)'/)
  t.ok(docs.headers.get('x-frame-options'), 'the real process sends X-Frame-Options on /docs')
})
