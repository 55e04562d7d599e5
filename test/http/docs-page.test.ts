/**
 * `/docs`: the service's own reference is the sites' Scalar page, self-hosted under the pages' CSP,
 * and the version it shows is the package's.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import t from 'tap'
import { json, startTestServer, type TestServer } from '../helpers.js'

const packageVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version

const get = (s: TestServer, url: string, headers: Record<string, string> = {}) => s.call({ method: 'GET', url, key: null, headers })

/** Every URL a page's tags load (scripts, stylesheets, icons, images). */
const loadedUrls = (body: string) => [...body.matchAll(/<(?:script|link|img)\b[^>]*?\s(?:src|href)="([^"]+)"/g)].map((m) => m[1])

t.test('/docs is Scalar on /openapi.json, from this host only, under the CSP', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)

  for (const url of ['/docs', '/docs/']) {
    const page = await get(s, url)
    t.equal(page.statusCode, 200, url)
    t.match(page.headers['content-type'], /^text\/html; charset=utf-8/)
    const csp = String(page.headers['content-security-policy'])
    for (const directive of ["default-src 'none'", "script-src 'self'", "connect-src 'self'", "font-src 'self'", "frame-ancestors 'self'", "base-uri 'none'"]) {
      t.ok(csp.split('; ').includes(directive), `${url}: CSP has ${directive}`)
    }
    t.equal(page.headers['referrer-policy'], 'no-referrer')
    t.notMatch(page.body, /swagger/i, 'no Swagger UI left')
  }

  const body = (await get(s, '/docs')).body
  const config = JSON.parse(/<script type="application\/json" id="reference-config">(.*?)<\/script>/.exec(body)![1])
  t.match(config, { url: '/openapi.json', withDefaultFonts: false, hideClientButton: true, telemetry: false, agent: { disabled: true } })
  const loaded = loadedUrls(body)
  t.ok(loaded.length >= 4, `the page loads its bundle, start-up script, stylesheet and icon: ${loaded.join(', ')}`)
  for (const url of loaded) {
    t.match(url, /^\/docs\/_assets\/[\w.-]+$/, `same origin, under /docs/_assets: ${url}`)
    const asset = await get(s, url)
    t.equal(asset.statusCode, 200, `${url} is served`)
    t.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable')
  }
  t.notMatch(body, /\/\/[a-z0-9.-]+\.[a-z]{2,}/i, 'no other host is named in the page')

  const bundleUrl = loaded.find((url) => /\/scalar\.[0-9a-f]{12}\.js$/.test(url))!
  const bundle = readFileSync(createRequire(import.meta.url).resolve('@scalar/api-reference/browser/standalone.js'))
  t.ok((await get(s, bundleUrl)).rawPayload.equals(bundle), "the sites' Scalar bundle, byte for byte")
  t.equal((await get(s, '/docs/_assets/other.js')).statusCode, 404)
  t.equal((await get(s, '/docs/static/index.html')).statusCode, 404, "Swagger UI's paths are gone")
})

t.test('the version /docs shows is the package version', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const description = json(await get(s, '/openapi.json'))
  t.equal(description.info.version, packageVersion, 'info.version is package.json\'s version')
  t.match((await get(s, '/openapi.yaml')).body, `version: ${packageVersion}`)
})

t.test('every operation of /openapi.json has an operationId, unique, from its method and path (issue 18, item 8)', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const document = json(await s.app.inject({ method: 'GET', url: '/openapi.json' }))
  const operations = Object.entries(document.paths as Record<string, Record<string, { operationId?: string }>>)
    .flatMap(([path, item]) => Object.entries(item).filter(([method]) => METHODS.has(method)).map(([method, op]) => ({ path, method, id: op.operationId })))
  t.ok(operations.length > 100, `${operations.length} operations`)
  t.same(operations.filter((op) => !op.id), [], 'none without one')
  t.equal(new Set(operations.map((op) => op.id)).size, operations.length, 'no two alike')
  const idOf = (method: string, path: string) => operations.find((op) => op.method === method && op.path === path)?.id
  t.equal(idOf('get', '/v1/apis/{api}/versions'), 'getApiVersions')
  t.equal(idOf('post', '/v1/apis/{api}/versions/{version}/restore'), 'postApiVersionRestore')
  t.equal(idOf('get', '/@{org}/apis/{slug}'), 'getPublicApi')
  t.equal(idOf('post', '/v1/webhooks/{webhook}/deliveries/{delivery}/redeliver'), 'postWebhookDeliveryRedeliver')
})

const METHODS = new Set(['get', 'put', 'post', 'patch', 'delete', 'head', 'options', 'trace'])
