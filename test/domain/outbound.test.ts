/**
 * The outbound host policy (REGISTRY_OUTBOUND_HOSTS): its matching rules, the entries it refuses at
 * start-up, and `outboundFetch`, which checks every request and follows redirects itself (loopback
 * servers answering 30x, `127.0.0.1` vs `localhost` as the two host names).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { MAX_REDIRECTS, OutboundPolicy, OutboundRefused, outboundFetch, parseOutboundHosts } from '../../src/domain/outbound.js'
import { RegistryError } from '../../src/errors.js'

t.test('exact hosts, *.subdomains, case, ports and IP literals', async (t) => {
  const policy = OutboundPolicy.of(parseOutboundHosts(' GitHub.com, *.Example.COM ,10.0.0.7,::1,, git.internal. '))
  t.same(policy.hosts, ['github.com', '*.example.com', '10.0.0.7', '[::1]', 'git.internal'], 'normalized entries')
  const allowed = [
    'https://github.com/acme/x.git', 'https://GITHUB.COM:8443/acme/x.git', 'http://github.com./x',
    'https://api.example.com/v3', 'https://a.b.example.com/x', 'http://10.0.0.7:3000/r.git', 'http://[::1]:9/x',
    'http://git.internal/r.git',
  ]
  const refused = [
    'https://api.github.com/repos', 'https://example.com/x', 'https://notexample.com/x', 'https://example.com.evil.net/x',
    'https://github.com.evil.net/x', 'http://10.0.0.8/x', 'http://169.254.169.254/latest/meta-data/', 'http://[::2]/x',
    'http://localhost/x', 'not a url',
  ]
  for (const url of allowed) t.ok(policy.allows(url), `allows ${url}`)
  for (const url of refused) t.notOk(policy.allows(url), `refuses ${url}`)
})

t.test('hosts are compared as URL parsing normalizes them', async (t) => {
  const loopback = OutboundPolicy.of(parseOutboundHosts('127.0.0.1'))
  for (const url of ['http://127.1/x', 'http://0x7f.0.0.1/x', 'http://2130706433/x']) t.ok(loopback.allows(url), `${url} is 127.0.0.1`)
  const written = OutboundPolicy.of(parseOutboundHosts('127.1'))
  t.same(written.hosts, ['127.0.0.1'], 'an entry is normalized the same way')
  const idn = OutboundPolicy.of(parseOutboundHosts('BÜCHER.de'))
  t.ok(idn.allows('https://xn--bcher-kva.de/x'))
  t.ok(idn.allows('https://bücher.de/x'))
})

t.test('unset or empty allows any host', async (t) => {
  for (const value of [undefined, '', ' , ']) {
    const policy = OutboundPolicy.of(parseOutboundHosts(value))
    t.equal(policy, OutboundPolicy.ANY)
    t.notOk(policy.restricted)
    t.ok(policy.allows('http://169.254.169.254/'))
  }
  t.same(loadConfig({}).outboundHosts, [], 'the default configuration')
})

t.test('invalid entries fail start-up with a clear error', async (t) => {
  const cases: [string, RegExp][] = [
    ['https://github.com', /'https:\/\/github\.com' is a URL/],
    ['github.com:443', /has a port/],
    ['[::1]:8080', /has a port/],
    ['git*.example.com', /'\*' that is not the first label/],
    ['*', /'\*' that is not the first label/],
    ['*.10.0.0.1', /IP address|not a host name/],
    ['github.com/acme', /not a host name/],
    ['user@github.com', /not a host name/],
    ['a..com', /empty label/],
    ['exa mple.com', /not a host name/],
  ]
  for (const [entry, message] of cases) {
    t.throws(() => parseOutboundHosts(`github.com, ${entry}`), { message }, entry)
    t.throws(() => loadConfig({ REGISTRY_OUTBOUND_HOSTS: entry }), { message: /^REGISTRY_OUTBOUND_HOSTS: / }, `loadConfig: ${entry}`)
  }
})

t.test('check names the field and the host (400 invalid_request)', async (t) => {
  const policy = OutboundPolicy.of(['github.com'])
  t.doesNotThrow(() => policy.check('https://github.com/a/b.git', 'url'))
  try {
    policy.check('http://169.254.169.254/latest', 'api_url')
    t.fail('refused')
  } catch (error) {
    t.ok(error instanceof RegistryError)
    const e = error as RegistryError
    t.equal(e.code, 'invalid_request')
    t.equal(e.status, 400)
    t.match(e.message, /^api_url: the host '169\.254\.169\.254' is not in this server's REGISTRY_OUTBOUND_HOSTS/)
    t.match(e.errors, [{ path: ['api_url'], message: /169\.254\.169\.254.*REGISTRY_OUTBOUND_HOSTS/ }])
  }
})

// ---------------------------------------------------------------- outboundFetch and redirects

interface Seen { method: string; url: string; authorization?: string; body: string }

/** A loopback server; `answer` decides each response. */
async function loopback(answer: (request: IncomingMessage, response: ServerResponse, seen: Seen) => void) {
  const seen: Seen[] = []
  const server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk) => { body += chunk })
    request.on('end', () => {
      const entry = { method: request.method ?? '', url: request.url ?? '', authorization: request.headers.authorization, body }
      seen.push(entry)
      answer(request, response, entry)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    port, seen, url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}

t.test('a redirect to a host not allowed is not followed', async (t) => {
  const target = await loopback((_, response) => response.end('target'))
  const redirector = await loopback((request, response) => response.writeHead(302, { location: `http://localhost:${target.port}${request.url}` }).end())
  t.teardown(async () => { await redirector.close(); await target.close() })
  const fetcher = outboundFetch(OutboundPolicy.of(['127.0.0.1']))
  await t.rejects(fetcher(`${redirector.url}/repo.git/info/refs`), { name: 'OutboundRefused', message: /redirected to 'localhost', which is not in REGISTRY_OUTBOUND_HOSTS/ })
  t.equal(redirector.seen.length, 1)
  t.equal(target.seen.length, 0, 'the other host was never contacted')
  await t.rejects(fetcher(`http://localhost:${target.port}/x`), OutboundRefused, 'nor directly')
  t.equal(target.seen.length, 0)
})

t.test('allowed redirects are followed: 307 resends the request, 303 turns it into a GET, credentials stay with their origin', async (t) => {
  const target = await loopback((_, response) => response.end('target'))
  const redirector = await loopback((request, response) => {
    // `/hop` stays on this origin; everything else goes to the target (another port: another origin).
    if (request.url === '/hop') return response.writeHead(307, { location: '/push' }).end()
    const status = request.url?.startsWith('/see-other') ? 303 : 307
    response.writeHead(status, { location: `http://127.0.0.1:${target.port}${request.url}` }).end()
  })
  t.teardown(async () => { await redirector.close(); await target.close() })
  const fetcher = outboundFetch(OutboundPolicy.of(['127.0.0.1']))

  const resent = await fetcher(`${redirector.url}/hop`, { method: 'POST', body: 'pack-bytes', headers: { authorization: 'Basic c2VjcmV0' } })
  t.equal(await resent.text(), 'target')
  t.equal(resent.url, `${target.url}/push`, 'the response says where it came from')
  t.same(redirector.seen.map((r) => [r.method, r.url, r.authorization, r.body]), [
    ['POST', '/hop', 'Basic c2VjcmV0', 'pack-bytes'], ['POST', '/push', 'Basic c2VjcmV0', 'pack-bytes'],
  ], 'a redirect on the same origin keeps the request as it was')
  t.match(target.seen.at(-1), { method: 'POST', url: '/push', body: 'pack-bytes' })
  t.equal(target.seen.at(-1)!.authorization, undefined, 'another port is another origin: the Authorization header is dropped')

  const seeOther = await fetcher(`${redirector.url}/see-other`, { method: 'POST', body: 'form' })
  t.equal(seeOther.status, 200)
  t.match(target.seen.at(-1), { method: 'GET', url: '/see-other', body: '' })
})

t.test('at most five redirects', async (t) => {
  const loop = await loopback((request, response) => {
    const n = Number(new URL(request.url ?? '/', 'http://x').searchParams.get('n') ?? 0)
    response.writeHead(302, { location: `/?n=${n + 1}` }).end()
  })
  t.teardown(() => loop.close())
  await t.rejects(outboundFetch(OutboundPolicy.ANY)(`${loop.url}/?n=0`), { name: 'OutboundRefused', message: /more than 5 redirects/ })
  t.equal(loop.seen.length, MAX_REDIRECTS + 1, 'the first request and five redirects')
})

t.test('a redirect to another scheme is refused', async (t) => {
  const server = await loopback((_, response) => response.writeHead(301, { location: 'file:///etc/passwd' }).end())
  t.teardown(() => server.close())
  await t.rejects(outboundFetch(OutboundPolicy.ANY)(server.url), { name: 'OutboundRefused', message: /file: URL/ })
})
