/**
 * Issue 14, finding 8: failed authentications are counted per client address; past
 * REGISTRY_AUTH_FAILURE_LIMIT a minute, every request from that address that presents credentials
 * answers 429 rate_limited with Retry-After (a right key included), on /v1, the git routes, the
 * webhooks and /metrics alike. Behind a proxy the address is the one the trusted proxy forwards for,
 * and X-Forwarded-For is never believed by default.
 */
import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { ConfigError, loadConfig } from '../../src/config.js'
import { json, startTestServer } from '../helpers.js'

const LIMIT = 20
const unknownKey = (i: number) => `sk_${String(i).padStart(40, 'x')}`
const basic = (key: string) => `Basic ${Buffer.from(`x:${key}`).toString('base64')}`

function assertThrottled(t: Test, response: LightMyRequestResponse, what: string): void {
  t.equal(response.statusCode, 429, `${what}: 429`)
  t.equal(json(response).code, 'rate_limited')
  const retryAfter = Number(response.headers['retry-after'])
  t.ok(retryAfter >= 1 && retryAfter <= 60, `${what}: Retry-After ${response.headers['retry-after']}`)
}

t.test('300 unknown keys from one address: 401 up to the limit, then 429 for that address only', async (t) => {
  const s = await startTestServer({ config: { rateLimitPerMinute: 100, authFailureLimit: LIMIT } })
  t.teardown(s.close)
  const from = (remoteAddress: string, authorization?: string) =>
    s.app.inject({ method: 'GET', url: '/v1/apis', remoteAddress, headers: authorization ? { authorization } : {} })

  const statuses: number[] = []
  let last: LightMyRequestResponse | undefined
  for (let i = 0; i < 300; i++) {
    last = await from('198.51.100.7', `Bearer ${unknownKey(i)}`)
    statuses.push(last.statusCode)
  }
  t.same(statuses.slice(0, LIMIT), Array(LIMIT).fill(401), `the first ${LIMIT} failures are 401`)
  t.same(statuses.slice(LIMIT), Array(300 - LIMIT).fill(429), 'every later attempt is 429, even with REGISTRY_RATE_LIMIT=100')
  assertThrottled(t, last!, 'an unknown key')
  assertThrottled(t, await from('198.51.100.7', `Bearer ${s.key}`), 'the right key from the same address')
  t.equal((await from('198.51.100.7')).statusCode, 401, 'a request without credentials is not throttled (nothing to guess)')
  t.equal((await from('198.51.100.8', `Bearer ${s.key}`)).statusCode, 200, 'another address is served')
  t.equal((await s.app.inject({ method: 'GET', url: '/healthz', remoteAddress: '198.51.100.7' })).statusCode, 200, 'probes answer')
})

t.test('git clones with wrong credentials are counted; git asking for credentials is not', async (t) => {
  const s = await startTestServer({ config: { authFailureLimit: LIMIT } })
  t.teardown(s.close)
  const refs = (remoteAddress: string, authorization?: string) => s.app.inject({
    method: 'GET', url: '/git/acme.git/info/refs?service=git-upload-pack', remoteAddress,
    headers: { 'git-protocol': 'version=2', ...(authorization ? { authorization } : {}) },
  })
  for (let i = 0; i < LIMIT * 2; i++) t.equal((await refs('203.0.113.5')).statusCode, 401)
  t.equal((await refs('203.0.113.5', basic(s.key))).statusCode, 200, 'bare requests (the challenge) do not count')

  for (let i = 0; i < LIMIT; i++) t.equal((await refs('203.0.113.6', basic(unknownKey(i)))).statusCode, 401)
  assertThrottled(t, await refs('203.0.113.6', basic(unknownKey(999))), 'a wrong git password past the limit')
  assertThrottled(t, await refs('203.0.113.6', basic(s.key)), 'the right git password from that address')
  t.equal((await refs('203.0.113.7', basic(s.key))).statusCode, 200)
})

t.test('webhooks with bad signatures and wrong metrics tokens are counted too', async (t) => {
  const s = await startTestServer({ config: { authFailureLimit: LIMIT, metricsToken: 'scrape-token-123' } })
  t.teardown(s.close)
  const hook = (remoteAddress: string) => s.app.inject({
    method: 'POST', url: '/webhooks/github', remoteAddress,
    headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': 'd1', 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` },
    payload: JSON.stringify({ ref: 'refs/heads/main', repository: { clone_url: 'https://github.com/acme/pets.git' } }),
  })
  for (let i = 0; i < LIMIT; i++) t.equal((await hook('192.0.2.50')).statusCode, 401)
  assertThrottled(t, await hook('192.0.2.50'), 'a webhook past the limit')

  const scrape = (token: string) =>
    s.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '192.0.2.60', headers: { authorization: `Bearer ${token}` } })
  for (let i = 0; i < LIMIT; i++) t.equal((await scrape(`guess-${i}`)).statusCode, 401)
  assertThrottled(t, await scrape('scrape-token-123'), 'the metrics token past the limit')
})

t.test('behind a trusted proxy the forwarded client is counted; X-Forwarded-For is ignored otherwise', async (t) => {
  const proxied = await startTestServer({ config: { authFailureLimit: LIMIT, trustProxy: ['127.0.0.1'] } })
  t.teardown(proxied.close)
  const via = (server: typeof proxied, forwardedFor: string, key: string) => server.app.inject({
    method: 'GET', url: '/v1/apis', remoteAddress: '127.0.0.1',
    headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': forwardedFor },
  })
  for (let i = 0; i < LIMIT; i++) t.equal((await via(proxied, '198.51.100.20', unknownKey(i))).statusCode, 401)
  assertThrottled(t, await via(proxied, '198.51.100.20', proxied.key), 'the client behind the proxy that failed')
  t.equal((await via(proxied, '198.51.100.21', proxied.key)).statusCode, 200, 'another client behind the same proxy')

  const direct = await startTestServer({ config: { authFailureLimit: LIMIT } })
  t.teardown(direct.close)
  for (let i = 0; i < LIMIT; i++) t.equal((await via(direct, `198.51.100.${i}`, unknownKey(i))).statusCode, 401)
  assertThrottled(t, await via(direct, '198.51.100.99', direct.key), 'a made-up X-Forwarded-For does not escape the count')
})

t.test('REGISTRY_AUTH_FAILURE_LIMIT and REGISTRY_TRUST_PROXY', async (t) => {
  const defaults = loadConfig({})
  t.equal(defaults.authFailureLimit, 30, 'on by default: 30 failures a minute')
  t.equal(defaults.trustProxy, false, 'no proxy is trusted by default')
  t.equal(loadConfig({ REGISTRY_AUTH_FAILURE_LIMIT: '0' }).authFailureLimit, 0)
  t.equal(loadConfig({ REGISTRY_TRUST_PROXY: 'true' }).trustProxy, true)
  t.equal(loadConfig({ REGISTRY_TRUST_PROXY: '2' }).trustProxy, 2)
  t.same(loadConfig({ REGISTRY_TRUST_PROXY: '10.0.0.0/8, ::1, loopback' }).trustProxy, ['10.0.0.0/8', '::1', 'loopback'])
  for (const bad of ['proxy.example.com', '10.0.0.0/33', '10.0.0.1/8/1']) {
    t.throws(() => loadConfig({ REGISTRY_TRUST_PROXY: bad }), ConfigError, `'${bad}' is refused`)
  }
})
