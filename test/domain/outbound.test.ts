/**
 * The outbound policy (REGISTRY_OUTBOUND_HOSTS): its matching rules, the default (any public host, no
 * internal one), the entries it refuses at start-up, and `OutboundConnections`, which checks every
 * request, follows redirects itself and checks the address it connects to (loopback servers answering
 * 30x, `127.0.0.1` vs `localhost` as the two host names, and lookups that answer what a test needs).
 */
import type { LookupFunction } from 'node:net'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { MAX_REDIRECTS, OutboundPolicy, OutboundRefused, parseOutboundHosts } from '../../src/domain/outbound/outbound.js'
import { OutboundConnections, type OutboundOptions } from '../../src/domain/outbound/outbound-fetch.js'
import { RegistryError } from '../../src/errors.js'

/** A fetch under the policy, its connections closed when the test ends. */
function outboundFetch(policy: OutboundPolicy, options?: OutboundOptions) {
  const connections = new OutboundConnections(policy, options)
  t.teardown(() => connections.close())
  return connections.fetch
}

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

t.test('unset or empty allows any public host and no internal one', async (t) => {
  for (const value of [undefined, '', ' , ']) {
    const policy = OutboundPolicy.of(parseOutboundHosts(value))
    t.equal(policy, OutboundPolicy.DEFAULT)
    t.notOk(policy.restricted)
    t.ok(policy.allows('https://github.com/acme/x.git'))
    t.ok(policy.allows('http://140.82.112.3/x.git'), 'a public address')
    t.ok(policy.allows('http://[2606:4700::1111]/x'), 'a public IPv6 address')
    t.notOk(policy.allows('http://169.254.169.254/'))
  }
  t.same(loadConfig({}).outboundHosts, [], 'the default configuration')
})

t.test('internal addresses and names, in every spelling, are refused by default and say why', async (t) => {
  const policy = OutboundPolicy.DEFAULT
  const cases: [string, RegExp][] = [
    ['http://127.0.0.1/', /a loopback address/], ['http://127.255.0.9/', /loopback/], ['http://2130706433/', /loopback/],
    ['http://[::1]/', /loopback/], ['http://[::ffff:127.0.0.1]/', /loopback/], ['http://[::ffff:7f00:1]/', /loopback/],
    ['http://[::127.0.0.1]/', /IPv4-compatible/], ['http://[64:ff9b::7f00:1]/', /loopback \(as IPv6\)/], ['http://[2002:7f00:1::]/', /loopback \(as IPv6\)/],
    ['http://0.0.0.0/', /unspecified/], ['http://[::]/', /unspecified/],
    ['http://169.254.169.254/', /link-local/], ['http://[fe80::1]/', /link-local/], ['http://[::ffff:a9fe:a9fe]/', /link-local/],
    ['http://10.0.0.1/', /private/], ['http://172.31.255.255/', /private/], ['http://192.168.0.1/', /private/],
    ['http://100.100.100.200/', /carrier-grade NAT/], ['http://[fd00:ec2::254]/', /unique-local/], ['http://[fc00::1]/', /unique-local/],
    ['http://192.0.0.192/', /reserved/], ['http://224.0.0.1/', /multicast/], ['http://255.255.255.255/', /reserved/],
    ['http://localhost/', /an internal name/], ['http://LOCALHOST./', /an internal name/], ['http://api.localhost/', /internal name/],
    ['http://metadata.google.internal/', /internal name/], ['http://metadata/', /internal name/], ['http://instance-data/', /internal name/],
    ['http://metadata.goog/', /internal name/], ['http://printer.local/', /internal name/], ['http://nas.home.arpa/', /internal name/],
  ]
  for (const [url, why] of cases) t.match(policy.refusal(url), why, url)
  for (const address of ['140.82.112.3', '2606:4700::1111', '::ffff:8.8.8.8']) t.ok(policy.allowsAddress(address), address)
  for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '10.9.8.7', 'fd00:ec2::254', 'fe80::1%eth0', 'not an address']) {
    t.notOk(policy.allowsAddress(address), address)
  }
})

t.test('entries: * for any public host, address and range entries opt in to internal addresses, names do not', async (t) => {
  const policy = OutboundPolicy.of(parseOutboundHosts('*, 10.0.0.0/8, [fd00::]/16, ::ffff:192.168.1.1, git.corp.example'))
  t.same(policy.hosts, ['*', '10.0.0.0/8', 'fd00::/16', '192.168.1.1', 'git.corp.example'], 'normalized entries')
  t.notOk(policy.restricted, '* keeps every public host')
  t.ok(policy.allows('https://github.com/x.git'))
  t.ok(policy.allows('http://10.20.30.40/x.git'), 'in a listed range')
  t.ok(policy.allows('http://[fd00:1::1]/x.git'))
  t.ok(policy.allows('http://192.168.1.1/x.git'), 'a listed address, written IPv4-mapped in the entry')
  t.ok(policy.allows('http://[::ffff:10.1.1.1]/x.git'), 'an IPv4-mapped spelling of a listed range')
  t.notOk(policy.allows('http://192.168.1.2/x.git'))
  t.notOk(policy.allows('http://127.0.0.1/x.git'))
  t.ok(policy.allowsAddress('10.1.2.3'), 'what a listed name resolves to, inside a listed range')
  t.notOk(policy.allowsAddress('172.16.0.1'), 'a name entry does not allow the internal addresses it resolves to')
  const restricted = OutboundPolicy.of(parseOutboundHosts('github.com,10.0.0.0/8'))
  t.ok(restricted.restricted)
  t.notOk(restricted.allows('https://gitlab.com/x.git'), 'without *, only what is listed')
  t.notOk(restricted.allows('http://140.82.112.3/x.git'), 'a public address that is not listed')
  t.ok(restricted.allows('http://10.1.1.1/x.git'))
  t.throws(() => parseOutboundHosts('10.0.0.0/33'), { message: /not a host name, IP address or CIDR range/ })
  t.throws(() => parseOutboundHosts('example.com/8'), { message: /not a host name, IP address or CIDR range/ })
})

t.test('invalid entries fail start-up with a clear error', async (t) => {
  const cases: [string, RegExp][] = [
    ['https://github.com', /'https:\/\/github\.com' is a URL/],
    ['github.com:443', /has a port/],
    ['[::1]:8080', /has a port/],
    ['git*.example.com', /'\*' that is not the first label/],
    ['*.*.example.com', /'\*' that is not the first label/],
    ['**', /'\*' that is not the first label/],
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
  await t.rejects(fetcher(`${redirector.url}/repo.git/info/refs`), { name: 'OutboundRefused', message: /redirected to http:\/\/localhost:\d+: the host 'localhost' is not in this server's REGISTRY_OUTBOUND_HOSTS/ })
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
  await t.rejects(outboundFetch(OutboundPolicy.of(['127.0.0.1']))(`${loop.url}/?n=0`), { name: 'OutboundRefused', message: /more than 5 redirects/ })
  t.equal(loop.seen.length, MAX_REDIRECTS + 1, 'the first request and five redirects')
})

t.test('a redirect to another scheme is refused', async (t) => {
  const server = await loopback((_, response) => response.writeHead(301, { location: 'file:///etc/passwd' }).end())
  t.teardown(() => server.close())
  await t.rejects(outboundFetch(OutboundPolicy.of(['127.0.0.1']))(server.url), { name: 'OutboundRefused', message: /file: URL/ })
})

/** A lookup that answers `addresses` for any name, as a DNS server under someone else's control might. */
function resolvingTo(...addresses: string[]): LookupFunction {
  return (_hostname, options, callback) => {
    const answer = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
    if (options.all) callback(null, answer)
    else callback(null, answer[0].address, answer[0].family)
  }
}

t.test('a name is checked on the addresses it resolves to, when connecting (DNS rebinding)', async (t) => {
  const server = await loopback((_, response) => response.end('internal'))
  t.teardown(() => server.close())
  const url = `http://git.example.test:${server.port}/x.git`
  t.ok(OutboundPolicy.DEFAULT.allows(url), 'the name itself is allowed')

  await t.rejects(outboundFetch(OutboundPolicy.DEFAULT, { lookup: resolvingTo('127.0.0.1') })(url),
    { name: 'OutboundRefused', message: /'git\.example\.test' resolved to 127\.0\.0\.1, which the outbound policy refuses/ })
  await t.rejects(outboundFetch(OutboundPolicy.DEFAULT, { lookup: resolvingTo('::ffff:127.0.0.1') })(url), OutboundRefused, 'an IPv4-mapped answer')
  t.equal(server.seen.length, 0, 'never connected')

  // An answer with a public and an internal address: only the public one may be connected to (it
  // answers nothing here, a documentation address), never the internal one.
  const mixed = outboundFetch(OutboundPolicy.of(['*', '198.51.100.0/24']), { lookup: resolvingTo('127.0.0.1', '198.51.100.7') })
  await t.rejects(mixed(url, { signal: AbortSignal.timeout(1500) }))
  t.equal(server.seen.length, 0, 'the internal address was dropped from the answer')

  const optedIn = outboundFetch(OutboundPolicy.of(['*', '127.0.0.1']), { lookup: resolvingTo('127.0.0.1') })
  t.equal(await (await optedIn(url)).text(), 'internal', 'an address entry opts in')
  t.equal(server.seen.length, 1)
})

t.test('an internal IP literal is refused before connecting', async (t) => {
  const server = await loopback((_, response) => response.end('x'))
  t.teardown(() => server.close())
  await t.rejects(outboundFetch(OutboundPolicy.DEFAULT)(server.url), { name: 'OutboundRefused', message: /loopback address/ })
  t.equal(server.seen.length, 0)
})
