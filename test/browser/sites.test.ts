/**
 * Documentation sites in a real browser (Debian's chromium, driven headless by playwright-core) against
 * a real listening server: pages render, navigation works by clicking, the console stays clean, no
 * request leaves the server, and injected markup runs nothing. Screenshots go to test-output/sites/.
 */
import { mkdirSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import type { Browser } from 'playwright-core'
import t from 'tap'
import { json, petstore, startTestServer, type TestServer } from '../helpers.js'
import { foreignRequests, launchChromium, skipWithoutChromium, watch } from './support.js'

const DOMAIN = 'docs.example.test'
const SCREENSHOTS = fileURLToPath(new URL('../../test-output/sites/', import.meta.url))

function petstoreWithMoreOperations(version: string, title: string): Record<string, unknown> {
  const doc = petstore(version, { title })
  ;(doc.paths as Record<string, unknown>)['/pets/{petId}'] = {
    get: {
      operationId: 'showPet', summary: 'Show one pet',
      parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'integer' } }],
      responses: { '200': { description: 'the pet', content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } } },
    },
  }
  return doc
}

async function setUp(s: TestServer) {
  const api = json(await s.call({
    method: 'POST', url: '/v1/apis', payload: { name: 'Petstore', visibility: 'public', description: 'Everything about **pets**: list them, look one up.' },
  })).data
  await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstoreWithMoreOperations('1.0.0', 'Petstore') } })
  const site = json(await s.call({
    method: 'POST', url: '/v1/sites',
    payload: { name: 'Docs', slug: 'docs', title: 'Acme Developers', visibility: 'public', api_ids: [api.id], domains: [DOMAIN] },
  })).data
  await s.call({
    method: 'PUT', url: `/v1/sites/${site.id}/guides/getting-started`,
    payload: {
      title: 'Getting started',
      markdown: 'Welcome to the **Petstore** API.\n\n## Authentication\n\nSend your key as a bearer token:\n\n```sh\ncurl -H "Authorization: Bearer sk_..." https://api.example.com/pets\n```\n\n| Status | Meaning |\n|---|---|\n| 200 | the pets |\n| 401 | no key |\n',
    },
  })
  await s.call({ method: 'PUT', url: `/v1/sites/${site.id}/guides/errors`, payload: { title: 'Errors', markdown: 'Errors are `application/problem+json`.' } })
  return { api, site }
}

t.test('documentation sites in a real browser', { skip: skipWithoutChromium }, async (t) => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const s = await startTestServer()
  t.teardown(s.close)
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = s.app.server.address() as AddressInfo
  const domainOrigin = `http://${DOMAIN}:${port}`
  const pathOrigin = `http://127.0.0.1:${port}`
  const { api, site } = await setUp(s)

  const browser: Browser = await launchChromium([`--host-resolver-rules=MAP ${DOMAIN} 127.0.0.1`])
  t.teardown(() => browser.close())

  t.test('landing → guide → reference by clicking, on the site domain', async (t) => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
    t.teardown(() => page.close())
    const seen = watch(page)

    await page.goto(`${domainOrigin}/`)
    t.equal(await page.locator('main h1').textContent(), 'Acme Developers')
    t.equal(await page.title(), 'Acme Developers')
    await page.screenshot({ path: `${SCREENSHOTS}landing.png`, fullPage: true })

    await page.locator('main .card', { hasText: 'Getting started' }).click()
    await page.waitForURL(`${domainOrigin}/guides/getting-started`)
    t.equal(await page.locator('main h1').textContent(), 'Getting started')
    t.equal(await page.locator('article h2').textContent(), 'Authentication', 'the Markdown renders')
    t.equal(await page.locator('article table td').first().textContent(), '200')
    await page.screenshot({ path: `${SCREENSHOTS}guide.png`, fullPage: true })

    await page.locator('nav.pager a', { hasText: 'Errors' }).click()
    await page.waitForURL(`${domainOrigin}/guides/errors`)
    t.match(await page.locator('article').textContent(), 'application/problem+json')

    await page.locator('.sidebar a', { hasText: 'Petstore' }).click()
    await page.waitForURL(`${domainOrigin}/apis/petstore`)
    const reference = page.locator('#reference')
    await reference.getByText('Show one pet').first().waitFor({ timeout: 30_000 })
    t.equal((await reference.locator('h1').first().textContent())?.trim(), 'Petstore', "Scalar shows the API's title")
    t.ok(await reference.getByText('List pets').first().isVisible(), 'and its operations')
    await page.screenshot({ path: `${SCREENSHOTS}reference.png` })

    await page.locator('header a', { hasText: 'Overview' }).click()
    await page.waitForURL(`${domainOrigin}/`)

    t.ok(seen.requests.includes(`${domainOrigin}/apis/petstore/openapi.json`), 'Scalar loaded the document from our host')
    t.ok(seen.requests.some((url) => /\/_assets\/scalar\.[0-9a-f]+\.js$/.test(url)), "and its bundle from our host")
    t.same(foreignRequests(seen.requests, [domainOrigin]), [], 'no request left the server')
    t.same(seen.errors, [], 'the console has no errors')
    t.same(seen.dialogs, [])
  })

  t.test('a new version shows on the next load; the /@{org}/sites path works too', async (t) => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
    t.teardown(() => page.close())
    const seen = watch(page)
    const url = `${pathOrigin}/@acme/sites/docs/apis/petstore`
    await page.goto(url)
    await page.locator('#reference').getByText('Show one pet').first().waitFor({ timeout: 30_000 })

    const next = petstoreWithMoreOperations('2.0.0', 'Petstore Two')
    ;(next.paths as Record<string, any>)['/pets'].post = { operationId: 'createPet', summary: 'Adopt a pet', responses: { '201': { description: 'adopted' } } }
    t.equal((await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: next } })).statusCode, 201)
    await page.reload()
    await page.locator('#reference').getByText('Adopt a pet').first().waitFor({ timeout: 30_000 })
    t.equal((await page.locator('#reference h1').first().textContent())?.trim(), 'Petstore Two')
    t.equal(await page.title(), 'Petstore Two · Acme Developers')

    await page.locator('header a.brand').click()
    await page.waitForURL(`${pathOrigin}/@acme/sites/docs/`)
    t.match(await page.locator('main .card').first().textContent(), 'Version 2.0.0')
    t.same(foreignRequests(seen.requests, [pathOrigin]), [], 'no request left the server')
    t.same(seen.errors, [], 'the console has no errors')
  })

  t.test('injected markup runs nothing: guide Markdown, API descriptions, titles', async (t) => {
    const payload = (tag: string) =>
      `<script>window.__xss='${tag}-script';alert('${tag}')</script><img src="nope.png" onerror="window.__xss='${tag}-img';alert('${tag}')">`
    const evil = json(await s.call({
      method: 'POST', url: '/v1/apis',
      payload: { name: 'Evil', visibility: 'public', description: `${payload('api-description')} [click me](javascript:alert('api-link'))` },
    })).data
    const doc = petstore('1.0.0', {
      title: `Evil ${payload('info-title')}`,
      description: `${payload('info-description')}\n\n[click me](javascript:alert('scalar-link'))`,
    })
    ;(doc.paths as Record<string, any>)['/pets'].get.description = payload('operation')
    await s.call({ method: 'POST', url: `/v1/apis/${evil.id}/spec`, payload: { document: doc } })
    await s.call({ method: 'PATCH', url: `/v1/sites/${site.id}`, payload: { api_ids: [api.id, evil.id], title: `Acme ${payload('site-title')}` } })
    await s.call({
      method: 'PUT', url: `/v1/sites/${site.id}/guides/evil`,
      payload: { title: `Evil ${payload('guide-title')}`, markdown: `${payload('guide')}\n\n[click me](javascript:alert('guide-link'))\n\n<a href="javascript:alert('raw')">raw link</a>` },
    })

    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
    t.teardown(() => page.close())
    const seen = watch(page)
    for (const path of ['/', '/guides/evil', '/apis/evil']) {
      await page.goto(`${domainOrigin}${path}`)
      if (path === '/apis/evil') {
        await page.locator('#reference').getByText('List pets').first().waitFor({ timeout: 30_000 })
        await page.screenshot({ path: `${SCREENSHOTS}xss-reference.png` })
      }
      for (const link of await page.getByText('click me').all()) await link.click({ timeout: 2_000 }).catch(() => undefined)
      t.equal(await page.evaluate('window.__xss'), undefined, `nothing injected ran on ${path}`)
    }
    t.same(seen.dialogs, [], 'no dialog opened')
    t.same(foreignRequests(seen.requests, [domainOrigin]), [], 'no request left the server')
  })
})
