/**
 * What a browser gets (issue 15, item 6): `/` says what the server is and where to go, `/@{org}` is the
 * organization's public index, and unknown paths under a site are its HTML "Page not found". API
 * clients keep getting JSON. Every page is under a strict policy and escapes what users stored.
 */
import { createHash } from 'node:crypto'
import t, { type Test } from 'tap'
import { prefersHtml } from '../../src/http/html-reply.js'
import { json, petstore, startTestServer, type TestServer } from '../helpers.js'

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8'
const HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>"\'&'

const visit = (s: TestServer, url: string, headers: Record<string, string> = {}) =>
  s.call({ method: 'GET', url, key: null, headers: { accept: BROWSER, ...headers } })

async function post(s: TestServer, url: string, payload: object, key?: string) {
  const res = await s.call({ method: 'POST', url, payload, ...(key ? { key } : {}) })
  if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
  return json(res).data
}

/** acme: a public API with a document, a public schema and ruleset, a private API, a public site; quiet: nothing public. */
async function seed(s: TestServer) {
  const api = await post(s, '/v1/apis', { name: `Pets ${HOSTILE}`, slug: 'pets', visibility: 'public', description: `Pets. ${HOSTILE}` })
  await post(s, '/v1/apis/pets/spec', { document: petstore('2.1.0') })
  await post(s, '/v1/apis', { name: 'Secret plans', visibility: 'private' })
  await post(s, '/v1/schemas', { name: 'Pet', visibility: 'public', document: { type: 'object' } })
  await post(s, '/v1/rulesets', { name: 'House rules', visibility: 'public' })
  await post(s, '/v1/sites', { name: 'Docs', title: `Acme ${HOSTILE}`, visibility: 'public', api_ids: [api.id] })
  await post(s, '/v1/sites', { name: 'Internal docs', visibility: 'private' })
  const quiet = await s.registry.organizations.create('quiet', 'Quiet Inc')
  await post(s, '/v1/apis', { name: 'Hidden', visibility: 'private' }, quiet.secret)
}

/** The policy allows the page's one inline stylesheet by its hash, and nothing else runs. */
function checkPageHeaders(t: Test, res: Awaited<ReturnType<typeof visit>>) {
  const csp = String(res.headers['content-security-policy'])
  t.match(res.headers['content-type'], /^text\/html; charset=utf-8/)
  t.match(csp, /default-src 'none'/)
  t.match(csp, /frame-ancestors 'none'/)
  t.notMatch(csp, /script-src|unsafe-inline/, 'no script at all, no inline anything but the hashed style')
  t.equal(res.headers['x-frame-options'], 'DENY')
  t.equal(res.headers['referrer-policy'], 'no-referrer')
  t.match(res.headers.vary, /Accept/)
  const style = /<style>([\s\S]*?)<\/style>/.exec(res.body)![1]
  t.ok(csp.includes(`'sha256-${createHash('sha256').update(style).digest('base64')}'`), 'the stylesheet is allowed by its hash')
  t.notMatch(res.body, /<script/i, 'no script element')
}

// One seeded registry for the tests that only read it (the site test adds a domain to the site).
const s = await startTestServer()
t.teardown(s.close)
await seed(s)

t.test('/ is a page for browsers and JSON for API clients', async (t) => {

  const page = await visit(s, '/')
  t.equal(page.statusCode, 200)
  checkPageHeaders(t, page)
  for (const href of ['/docs', '/openapi.json', '/console', '/@acme']) t.match(page.body, `href="${href}"`, `links ${href}`)
  t.notMatch(page.body, '/@quiet', 'an organization with nothing public is not listed')
  t.match(page.body, '1 API · 1 schema · 1 ruleset · 1 site', 'what acme publishes')

  for (const accept of [undefined, '*/*', 'application/json', 'text/html, application/json']) {
    const res = await s.call({ method: 'GET', url: '/', key: null, headers: accept ? { accept } : {} })
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^application\/json/, `Accept: ${accept ?? 'none'} gets JSON`)
    t.match(json(res).data, {
      name: 'API Registry', links: { docs: '/docs', openapi: '/openapi.json', console: '/console' },
      organizations: [{ slug: 'acme', name: 'Acme', url: '/@acme', public: { apis: 1, schemas: 1, rulesets: 1, sites: 1 } }],
    })
    t.equal(json(res).data.organizations.length, 1)
  }
})

t.test('/@{org} lists the public APIs, schemas, rulesets and sites, escaped', async (t) => {

  const page = await visit(s, '/@acme')
  t.equal(page.statusCode, 200)
  checkPageHeaders(t, page)
  t.match(page.body, '<h1>Acme</h1>')
  for (const href of ['/@acme/apis/pets/latest', '/@acme/apis/pets/latest?format=yaml', '/@acme/apis/pets/versions',
    '/@acme/schemas/pet/latest', '/@acme/rulesets/house-rules/latest', '/@acme/sites/docs/']) {
    t.match(page.body, `href="${href}"`, `links ${href}`)
  }
  t.match(page.body, '2.1.0', "the API's current version")
  t.notMatch(page.body, 'Secret plans', 'no private API')
  t.notMatch(page.body, 'Internal docs', 'no private site')
  t.notMatch(page.body, /<img|<script|onerror=alert\(2\)>/, 'stored markup is never markup')
  t.match(page.body, 'Pets &lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&quot;&#39;&amp;')
  t.match(page.body, 'Acme &lt;script&gt;', 'site titles are escaped too')
  t.equal((await visit(s, '/@acme/')).statusCode, 200, 'with a trailing slash too')

  const data = json(await s.call({ method: 'GET', url: '/@acme', key: null }))
  t.match(data.data, {
    organization: { slug: 'acme', name: 'Acme' },
    apis: [{ slug: 'pets', name: `Pets ${HOSTILE}`, version: '2.1.0', number: 1, latest: '/@acme/apis/pets/latest' }],
    schemas: [{ slug: 'pet', latest: '/@acme/schemas/pet/latest' }],
    rulesets: [{ slug: 'house-rules' }],
    sites: [{ slug: 'docs', url: '/@acme/sites/docs/' }],
    totals: { apis: 1, schemas: 1, rulesets: 1, sites: 1 },
  })
  t.equal(data.data.apis.length, 1)

  const nobody = await visit(s, '/@nobody')
  t.equal(nobody.statusCode, 404)
  t.match(nobody.body, 'Page not found')
  checkPageHeaders(t, nobody)
  const nobodyJson = await s.call({ method: 'GET', url: '/@nobody', key: null })
  t.equal(nobodyJson.statusCode, 404)
  t.equal(json(nobodyJson).code, 'not_found')
  t.match(json(await s.call({ method: 'GET', url: '/@quiet', key: null })).data, { apis: [], totals: { apis: 0 } })
})

t.test("unknown paths under a site answer the site's HTML Page not found", async (t) => {
  await s.call({ method: 'PATCH', url: '/v1/sites/docs', payload: { domains: ['docs.acme.example'] } })

  for (const [url, host] of [['/@acme/sites/docs/no/such/page', undefined], ['/@acme/sites/docs/guides/', undefined],
    ['/@acme/sites/docs/guides/missing', undefined], ['/@acme/sites/docs/apis/pets/extra', undefined], ['/no/such/page', 'docs.acme.example']] as const) {
    const res = await visit(s, url, host ? { host } : {})
    t.equal(res.statusCode, 404, `${host ?? ''}${url}`)
    t.match(res.headers['content-type'], /^text\/html/)
    t.match(res.body, '<h1>Page not found</h1>')
    t.match(res.body, 'Acme &lt;script&gt;', "in the site's layout, with its title")
    t.match(res.body, /href="[^"]*\/apis\/pets"/, 'and its navigation')
    t.match(res.headers['content-security-policy'], /script-src 'self'/, "the site pages' policy")
    t.ok(res.headers['x-frame-options'])
  }
  const privateSite = await visit(s, '/@acme/sites/internal-docs/anything')
  t.equal(privateSite.statusCode, 404)
  t.match(privateSite.body, 'Page not found')
  t.notMatch(privateSite.body, 'Internal docs', 'a private site says nothing about itself')
})

t.test('unknown pages are an HTML Page not found for browsers and problem+json for API clients', async (t) => {
  for (const url of ['/no/such/page', '/@acme/no-such-kind', '/v1/no-such-route', '/docs/extra']) {
    const page = await visit(s, url)
    t.equal(page.statusCode, 404, url)
    checkPageHeaders(t, page)
    t.match(page.body, '<h1>Page not found</h1>')
    t.match(page.body, 'href="/"', 'a way back to the home page')
    for (const accept of [undefined, '*/*', 'application/json']) {
      const res = await s.call({ method: 'GET', url, key: null, headers: accept ? { accept } : {} })
      t.equal(res.statusCode, 404)
      t.match(res.headers['content-type'], /^application\/problem\+json/, `${url} with Accept: ${accept ?? 'none'}`)
      t.match(json(res), { status: 404, code: 'not_found', detail: `no route GET ${url}` })
    }
  }
  const post = await s.call({ method: 'POST', url: '/no/such/page', key: null, payload: {} })
  t.match(post.headers['content-type'], /^application\/problem\+json/, 'a JSON post to nowhere is told in JSON')
})

t.test('with a public host, / on it is the public index and elsewhere links it', async (t) => {
  const hosted = await startTestServer({ config: { publicHost: 'registry.example' } })
  t.teardown(hosted.close)
  await seed(hosted)
  const onPublic = await visit(hosted, '/', { host: 'registry.example' })
  t.equal(onPublic.statusCode, 200)
  t.match(onPublic.body, 'href="/@acme"')
  t.notMatch(onPublic.body, 'href="/console"', 'the console is not served on the public host')
  t.notMatch(json(await hosted.call({ method: 'GET', url: '/', key: null, headers: { host: 'registry.example' } })).data, { links: {} })
  const elsewhere = await visit(hosted, '/', { host: 'api.internal' })
  t.match(elsewhere.body, 'href="//registry.example/@acme"')
  t.match(elsewhere.body, 'href="/console"')
  t.equal((await visit(hosted, '/@acme', { host: 'registry.example' })).statusCode, 200)
  const elsewhereIndex = await visit(hosted, '/@acme', { host: 'api.internal' })
  t.equal(elsewhereIndex.statusCode, 404, 'the index is on the public host only')
  checkPageHeaders(t, elsewhereIndex)
  const docsOnPublic = await visit(hosted, '/docs', { host: 'registry.example' })
  t.equal(docsOnPublic.statusCode, 404, 'the reference is not served on the public host')
  t.match(docsOnPublic.body, 'Page not found')
  t.match(json(await hosted.call({ method: 'GET', url: '/docs', key: null, headers: { host: 'registry.example' } })), { code: 'not_found' })
})

t.test('a browser is told apart from an API client by its Accept header', async (t) => {
  t.ok(prefersHtml(BROWSER))
  t.ok(prefersHtml('text/html'))
  t.notOk(prefersHtml(undefined))
  t.notOk(prefersHtml('*/*'))
  t.notOk(prefersHtml('application/json'))
  t.notOk(prefersHtml('text/html, application/json'), 'a tie goes to JSON')
  t.notOk(prefersHtml('text/html;q=0.5, application/json'))
  t.ok(prefersHtml('application/json;q=0.5, text/html'))
  t.notOk(prefersHtml('text/html;q=0'))
})
