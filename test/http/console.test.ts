/**
 * The console's files as the registry serves them: the page at /console and under every deep link,
 * with a strict Content-Security-Policy; hashed files cached as immutable and gzipped on request.
 * A temporary build stands in for Vite's output, so these run without `npm run build`.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import Fastify from 'fastify'
import t from 'tap'
import { CONSOLE_CSP, consoleRoutes } from '../../src/http/console-routes.js'
import { registerProblemHandlers } from '../../src/http/problems.js'
import { tempDir } from '../helpers.js'

const PAGE = '<!doctype html><html><head><script type="module" src="/console/assets/index-abc123.js"></script></head><body><div id="app"></div></body></html>'
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(5000))})`

async function consoleApp(directory: string) {
  const app = Fastify()
  registerProblemHandlers(app)
  await app.register(consoleRoutes, { directory })
  return app
}

function fakeBuild(): string {
  const directory = tempDir()
  mkdirSync(join(directory, 'assets'))
  writeFileSync(join(directory, 'index.html'), PAGE)
  writeFileSync(join(directory, 'assets', 'index-abc123.js'), SCRIPT)
  return directory
}

t.test('the page answers /console and every deep link under it, with the console CSP', async (t) => {
  const app = await consoleApp(fakeBuild())
  t.teardown(() => app.close())
  for (const url of ['/console', '/console/', '/console/apis', '/console/apis/01J0000000000000000000000A/versions?page=2']) {
    const response = await app.inject({ url })
    t.equal(response.statusCode, 200, url)
    t.equal(response.body, PAGE, `${url}: the app's page`)
    t.match(response.headers['content-type'], /^text\/html/)
    t.equal(response.headers['content-security-policy'], CONSOLE_CSP)
    t.equal(response.headers['cache-control'], 'no-cache', 'the page is revalidated, so a new build shows at once')
  }
  t.match(CONSOLE_CSP, /script-src 'self'(;|$)/, 'scripts from this host only, no inline script')
  t.match(CONSOLE_CSP, /style-src 'self'(;|$)/, 'no inline style either')
  t.notMatch(CONSOLE_CSP, /unsafe|\*|https?:/, 'nothing unsafe, no other host')
})

t.test('hashed files are immutable and gzipped when asked; unknown files are a 404 problem', async (t) => {
  const app = await consoleApp(fakeBuild())
  t.teardown(() => app.close())
  const plain = await app.inject({ url: '/console/assets/index-abc123.js' })
  t.equal(plain.statusCode, 200)
  t.equal(plain.body, SCRIPT)
  t.match(plain.headers['content-type'], /^text\/javascript/)
  t.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable')
  const gzipped = await app.inject({ url: '/console/assets/index-abc123.js', headers: { 'accept-encoding': 'gzip, br' } })
  t.equal(gzipped.headers['content-encoding'], 'gzip')
  t.ok(gzipped.rawPayload.length < SCRIPT.length / 10, 'compressed')
  t.equal(gunzipSync(gzipped.rawPayload).toString(), SCRIPT)
  const missing = await app.inject({ url: '/console/assets/index-000000.js' })
  t.equal(missing.statusCode, 404)
  t.equal(JSON.parse(missing.body).code, 'not_found')
})

t.test('without a build, /console says how to build it', async (t) => {
  const app = await consoleApp(tempDir())
  t.teardown(() => app.close())
  const response = await app.inject({ url: '/console/apis' })
  t.equal(response.statusCode, 503)
  t.match(response.body, 'npm run build')
})
