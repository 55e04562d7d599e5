import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { gunzipSync } from 'node:zlib'
import t, { type Test } from 'tap'
import { json, petstore, startTestServer, type TestServer } from '../helpers.js'

const BASE = '/@acme/sites/docs'

/** A public API with a document, a public site listing it (with a domain), and one guide. */
async function publishedSite(s: TestServer, site: Record<string, unknown> = {}) {
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Petstore', visibility: 'public', description: 'All about **pets**.' } })).data
  await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore() } })
  const created = json(await s.call({
    method: 'POST', url: '/v1/sites',
    payload: { name: 'Docs', slug: 'docs', title: 'Acme Developers', visibility: 'public', api_ids: [api.id], domains: ['docs.acme.example'], ...site },
  })).data
  await s.call({ method: 'PUT', url: `/v1/sites/${created.id}/guides/intro`, payload: { title: 'Getting started', markdown: '## Install\n\nRun `npm i`.' } })
  return { api, site: created }
}

const page = (s: TestServer, url: string, host?: string) =>
  s.call({ method: 'GET', url, key: null, headers: host ? { host } : {} })

t.test('landing, guide and reference pages at /@{org}/sites/{slug}/', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const { site } = await publishedSite(s)

  const landing = await page(s, `${BASE}/`)
  t.equal(landing.statusCode, 200)
  t.match(landing.headers['content-type'], /^text\/html; charset=utf-8/)
  t.match(landing.headers['content-security-policy'], /default-src 'none'; script-src 'self';/)
  t.match(landing.body, '<h1>Acme Developers</h1>')
  t.match(landing.body, `<a class="card" href="${BASE}/apis/petstore">`)
  t.match(landing.body, 'All about <strong>pets</strong>.', "the API's description, as Markdown")
  t.match(landing.body, `<a href="${BASE}/guides/intro">Getting started</a>`)
  t.notMatch(landing.body, '<script', 'the landing page runs no script')

  const guide = await page(s, `${BASE}/guides/intro`)
  t.equal(guide.statusCode, 200)
  t.match(guide.body, '<h1>Getting started</h1>')
  t.match(guide.body, '<h2>Install</h2>')
  t.match(guide.body, '<code>npm i</code>')

  const reference = await page(s, `${BASE}/apis/petstore`)
  t.equal(reference.statusCode, 200)
  t.match(reference.body, '<title>Petstore · Acme Developers</title>')
  const config = JSON.parse(/<script type="application\/json" id="reference-config">(.*?)<\/script>/.exec(reference.body)![1])
  t.match(config, { url: `${BASE}/apis/petstore/openapi.json`, withDefaultFonts: false, hideClientButton: true, telemetry: false })
  const scripts = [...reference.body.matchAll(/<script src="([^"]+)"><\/script>/g)].map((m) => m[1])
  t.equal(scripts.length, 2)
  for (const src of scripts) t.match(src, new RegExp(`^${BASE}/_assets/`), 'scripts come from this host')

  await s.call({ method: 'PATCH', url: `/v1/sites/${site.id}`, payload: { title: null } })
  t.match((await page(s, `${BASE}/`)).body, '<h1>Docs</h1>', 'without a title, the name is shown')

  const redirect = await page(s, BASE)
  t.equal(redirect.statusCode, 301)
  t.equal(redirect.headers.location, `${BASE}/`)

  for (const missing of [`${BASE}/guides/nope`, `${BASE}/apis/nope`, '/@acme/sites/nope/', '/@nobody/sites/docs/']) {
    const res = await page(s, missing)
    t.equal(res.statusCode, 404, missing)
    t.match(res.body, 'Page not found')
  }
})

t.test('the document is served with ETag and a new version shows on the next load', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const { api } = await publishedSite(s)
  const url = `${BASE}/apis/petstore/openapi.json`

  const first = await page(s, url)
  t.equal(first.statusCode, 200)
  t.equal(json(first).info.title, 'Petstore')
  t.match(first.headers.etag, /^"sha256:[0-9a-f]{64}"$/)
  t.equal(first.headers['cache-control'], 'no-cache')
  const same = await s.call({ method: 'GET', url, key: null, headers: { 'if-none-match': first.headers.etag as string } })
  t.equal(same.statusCode, 304)

  await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('2.0.0', { title: 'Petstore Two' }) } })
  const next = await s.call({ method: 'GET', url, key: null, headers: { 'if-none-match': first.headers.etag as string } })
  t.equal(next.statusCode, 200, 'the old ETag no longer matches')
  t.equal(json(next).info.version, '2.0.0')
  t.match((await page(s, `${BASE}/apis/petstore`)).body, '<title>Petstore Two · Acme Developers</title>')
  t.match((await page(s, `${BASE}/`)).body, 'Version 2.0.0')
})

t.test('private sites, private APIs and APIs without a document are not served', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const { api, site } = await publishedSite(s)
  const hidden = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Internal', visibility: 'private' } })).data
  await s.call({ method: 'POST', url: `/v1/apis/${hidden.id}/spec`, payload: { document: petstore() } })
  const empty = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Empty', visibility: 'public' } })).data
  const unlisted = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Unlisted', visibility: 'public' } })).data
  await s.call({ method: 'POST', url: `/v1/apis/${unlisted.id}/spec`, payload: { document: petstore() } })
  await s.call({ method: 'PATCH', url: `/v1/sites/${site.id}`, payload: { api_ids: [api.id, hidden.id, empty.id] } })

  const landing = (await page(s, `${BASE}/`)).body
  t.match(landing, '/apis/petstore"')
  t.notMatch(landing, 'Internal', 'a private API is not listed')
  t.notMatch(landing, 'Empty', 'an API without a document is not listed')
  for (const slug of ['internal', 'empty', 'unlisted']) {
    t.equal((await page(s, `${BASE}/apis/${slug}`)).statusCode, 404, slug)
    t.equal((await page(s, `${BASE}/apis/${slug}/openapi.json`)).statusCode, 404, `${slug} document`)
  }

  await s.call({ method: 'PATCH', url: `/v1/apis/${api.id}`, payload: { visibility: 'private' } })
  t.equal((await page(s, `${BASE}/apis/petstore`)).statusCode, 404, 'an API made private disappears at once')

  await s.call({ method: 'PATCH', url: `/v1/sites/${site.id}`, payload: { visibility: 'private' } })
  for (const url of [`${BASE}/`, `${BASE}/guides/intro`]) {
    t.equal((await page(s, url)).statusCode, 404, `private site: ${url}`)
    t.equal((await page(s, url.replace(BASE, ''), 'docs.acme.example')).statusCode, 404, `private site on its domain: ${url}`)
  }
  const withKey = await s.call({ method: 'GET', url: `${BASE}/` })
  t.equal(withKey.statusCode, 404, 'a private site is not served, key or not')
})

t.test("a site's domain serves the site's pages at its root, and nothing else", async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const { site } = await publishedSite(s)
  const host = 'docs.acme.example'

  const landing = await page(s, '/', host)
  t.equal(landing.statusCode, 200)
  t.match(landing.body, '<a class="brand" href="/">Acme Developers</a>')
  t.match(landing.body, '<a href="/guides/intro">Getting started</a>', 'links are relative to the domain root')
  t.match(landing.headers['content-security-policy'], /script-src 'self'/)
  t.equal((await page(s, '/guides/intro', host)).statusCode, 200)
  const reference = await page(s, '/apis/petstore', host)
  t.equal(reference.statusCode, 200)
  t.match(reference.body, '"url":"/apis/petstore/openapi.json"')
  t.equal(json(await page(s, '/apis/petstore/openapi.json', host)).info.title, 'Petstore')
  t.equal((await page(s, '/', 'Docs.Acme.Example:8080')).statusCode, 200, 'any case, any port')

  for (const url of ['/v1/apis', '/@acme/apis', '/@acme/sites/docs/', '/openapi.json', '/docs', '/metrics', '/nope']) {
    const res = await s.call({ method: 'GET', url, headers: { host } })
    t.equal(res.statusCode, 404, `${url} is not served on a site's domain`)
  }
  t.equal((await s.call({ method: 'POST', url: '/v1/apis', headers: { host }, payload: { name: 'x' } })).statusCode, 404)
  t.equal((await page(s, '/healthz', host)).statusCode, 200, 'health checks answer on every host')

  t.equal((await page(s, '/_site-host/')).statusCode, 404, 'the internal prefix is not reachable directly')
  t.equal((await s.call({ method: 'GET', url: '/v1/apis' })).statusCode, 200, 'other hosts serve the registry')

  await s.call({ method: 'PATCH', url: `/v1/sites/${site.id}`, payload: { domains: ['developers.acme.example'] } })
  t.equal((await page(s, '/', 'developers.acme.example')).statusCode, 200, 'a new domain answers at once')
  t.equal((await s.call({ method: 'GET', url: '/v1/apis', headers: { host } })).statusCode, 200, 'a dropped domain is an ordinary host again')
  await s.call({ method: 'DELETE', url: `/v1/sites/${site.id}` })
  const gone = await page(s, '/', 'developers.acme.example')
  t.notMatch(gone.body, 'Acme Developers', "a deleted site's domain no longer serves it")
  t.equal(json(gone).data.name, 'API Registry', "its / is the registry's own, as on any host")
  t.equal((await s.call({ method: 'GET', url: '/v1/apis', headers: { host: 'developers.acme.example' } })).statusCode, 200)
})

t.test('with REGISTRY_PUBLIC_HOST: path pages on the public host, domain pages on their domains', async (t) => {
  const s = await startTestServer({ config: { publicHost: 'registry.example.com' } })
  t.teardown(s.close)
  await publishedSite(s)
  t.equal((await page(s, `${BASE}/`, 'registry.example.com')).statusCode, 200)
  const reference = await page(s, `${BASE}/apis/petstore`, 'registry.example.com')
  const asset = /src="([^"]+scalar[^"]+)"/.exec(reference.body)![1]
  t.equal((await page(s, asset, 'registry.example.com')).statusCode, 200, "the pages' assets are served on the public host too")
  t.equal((await page(s, `${BASE}/`, 'api.internal.example')).statusCode, 404, 'not on other hosts')
  t.equal((await page(s, '/', 'docs.acme.example')).statusCode, 200)
  t.equal((await page(s, '/apis/petstore/openapi.json', 'docs.acme.example')).statusCode, 200)
  t.equal((await page(s, '/@acme/apis', 'docs.acme.example')).statusCode, 404)

  const site = json(await s.call({ method: 'POST', url: '/v1/sites', payload: { name: 'greedy', visibility: 'public', domains: ['registry.example.com'] } })).data
  t.ok(site.id)
  t.equal((await page(s, '/@acme/apis', 'registry.example.com')).statusCode, 200, 'a site never takes the public host')
})

t.test('assets: Scalar from our own host, content-hashed names, long cache, gzip when asked', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  await publishedSite(s)
  const reference = (await page(s, `${BASE}/apis/petstore`)).body
  const scalarUrl = /src="([^"]+\/scalar\.[0-9a-f]{12}\.js)"/.exec(reference)![1]
  const cssUrl = /href="([^"]+\/site\.[0-9a-f]{12}\.css)"/.exec(reference)![1]
  const bundle = readFileSync(createRequire(import.meta.url).resolve('@scalar/api-reference/browser/standalone.js'))

  const plain = await page(s, scalarUrl)
  t.equal(plain.statusCode, 200)
  t.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable')
  t.match(plain.headers['content-type'], /^text\/javascript/)
  t.notOk(plain.headers['content-encoding'])
  t.ok(plain.rawPayload.equals(bundle), "the package's browser bundle, byte for byte")

  const zipped = await s.call({ method: 'GET', url: scalarUrl, key: null, headers: { 'accept-encoding': 'gzip, deflate, br' } })
  t.equal(zipped.headers['content-encoding'], 'gzip')
  t.ok(zipped.rawPayload.length < bundle.length / 2, 'compressed')
  t.ok(gunzipSync(zipped.rawPayload).equals(bundle))

  const css = await page(s, cssUrl)
  t.match(css.headers['content-type'], /^text\/css/)
  t.notMatch(css.body, /https?:\/\//, 'the stylesheet loads nothing from elsewhere')
  t.equal((await page(s, `${BASE}/_assets/other.js`)).statusCode, 404)
  t.equal((await page(s, '/@acme/sites/nope/_assets/' + scalarUrl.split('/').pop())).statusCode, 404)
})

/** Every tag of a page, as written. */
const tags = (body: string) => [...body.matchAll(/<[a-zA-Z][^>]*>/g)].map((m) => m[0])

/** The page's markup runs nothing it did not bring itself: no inline handler, no script URL, no foreign script. */
function assertInert(t: Test, body: string, base: string) {
  for (const tag of tags(body)) {
    t.notMatch(tag, /\son[a-z]+\s*=/i, `no event handler attribute: ${tag}`)
    t.notMatch(tag, /(?:href|src)\s*=\s*["']?\s*(?:javascript|data|vbscript):/i, `no script URL: ${tag}`)
    if (/^<script/i.test(tag)) {
      t.ok(tag === '<script type="application/json" id="reference-config">' || tag.startsWith(`<script src="${base}/_assets/`), `only our scripts: ${tag}`)
    }
    t.notMatch(tag, /^<(?:iframe|object|embed|style|form|base|meta http-equiv)/i, `no active element: ${tag}`)
  }
}

t.test('XSS: guide Markdown, API descriptions and titles render inert', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const evil = '<script>alert(1)</script><img src=x onerror=alert(2)>"><svg onload=alert(3)>'
  const api = json(await s.call({
    method: 'POST', url: '/v1/apis',
    payload: { name: `Evil ${evil}`, slug: 'evil', visibility: 'public', description: `${evil}\n\n[click](javascript:alert(4)) [data](data:text/html;base64,PHNjcmlwdD5hbGVydCg1KTwvc2NyaXB0Pg==) <a href="javascript:alert(6)">a</a>` },
  })).data
  await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('1.0.0', { title: `Title ${evil}`, description: evil }) } })
  const site = json(await s.call({
    method: 'POST', url: '/v1/sites',
    payload: { name: 'docs', slug: 'docs', title: `Site ${evil}`, visibility: 'public', api_ids: [api.id] },
  })).data
  const markdown = [
    '# Heading <script>alert(7)</script>',
    '<img src="x" onerror="alert(8)">',
    '[x](javascript:alert(9)) [y](JaVaScRiPt:alert(10)) [z](  javascript:alert(11)) [w](vbscript:msgbox(1))',
    '[d](data:text/html,<script>alert(12)</script>) ![i](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMTMpPg==)',
    '<a href="javascript:alert(14)" onclick="alert(15)">html link</a>',
    '<iframe src="https://evil.example"></iframe><style>body{display:none}</style>',
    '![remote](https://evil.example/track.png) [ok](https://example.com/docs)',
    '```html\n<script>alert(16)</script>\n```',
  ].join('\n\n')
  await s.call({ method: 'PUT', url: `/v1/sites/${site.id}/guides/evil`, payload: { title: `Guide ${evil}`, markdown } })

  for (const url of [`${BASE}/`, `${BASE}/guides/evil`, `${BASE}/apis/evil`]) {
    const res = await page(s, url)
    t.equal(res.statusCode, 200, url)
    assertInert(t, res.body, BASE)
    t.match(res.body, 'Site &lt;script&gt;alert(1)&lt;/script&gt;', 'the title is shown as text')
  }
  const guide = (await page(s, `${BASE}/guides/evil`)).body
  t.match(guide, '<h1>Guide &lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&quot;&gt;&lt;svg onload=alert(3)&gt;</h1>')
  t.match(guide, '&lt;img src="x" onerror="alert(8)"&gt;', 'raw HTML in Markdown is text')
  t.match(guide, '<a href="https://example.com/docs" rel="noopener noreferrer nofollow">ok</a>', 'ordinary links stay')
  t.notMatch(guide, 'evil.example/track.png', 'no image from another host')
  t.match(guide, '<pre><code class="language-html">&lt;script&gt;alert(16)&lt;/script&gt;', 'code stays code')
  const landing = (await page(s, `${BASE}/`)).body
  t.match(landing, '&lt;script&gt;alert(1)&lt;/script&gt;', "the API's description is shown as text")
  t.notOk(tags(landing).some((tag) => /^<a [^>]*href="(?:javascript|data):/i.test(tag)), 'no link with a script URL')
})
