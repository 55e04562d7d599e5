/**
 * A large API's reference in parts, in a real browser (Debian's chromium, headless, through
 * playwright-core) against a real listening server: the overview lists the sections, a click opens
 * one, Scalar renders that section's operations and not the others', the bar leads on and back, the
 * console stays clean and no request leaves the server. Screenshots: test-output/sites/parts-*.png.
 */
import { mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { json, startTestServer } from '../helpers.js'
import { shopApi } from '../support/shop-api.js'
import { browseServer, foreignRequests, skipWithoutChromium } from './support.js'

const SCREENSHOTS = fileURLToPath(new URL('../../test-output/sites/', import.meta.url))

t.test('overview → section → next section in chromium', { skip: skipWithoutChromium }, async (t) => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  // The shop document is about 9 KB: split above 2 KB, it shows as a large API does.
  const s = await startTestServer({ referenceSplitBytes: 2000 })
  t.teardown(s.close)
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Shop', visibility: 'public' } })).data
  await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: shopApi() } })
  await s.call({ method: 'POST', url: '/v1/sites', payload: { name: 'Docs', slug: 'docs', title: 'Shop Developers', visibility: 'public', api_ids: [api.id] } })
  const { origin, page, seen } = await browseServer(t, s.app)
  const base = `${origin}/@acme/sites/docs/apis/shop`

  await page.goto(base)
  t.equal(await page.locator('main h1').textContent(), 'Shop')
  t.same(await page.locator('.part-list .part-name').allTextContents(), ['orders', 'customers', 'products'])
  await page.screenshot({ path: `${SCREENSHOTS}parts-overview.png`, fullPage: true })

  await page.locator('.part-list a', { hasText: 'orders' }).click()
  await page.waitForURL(`${base}/parts/orders`)
  const reference = page.locator('#reference')
  await reference.getByText('Place an order').first().waitFor({ timeout: 60_000 })
  t.equal((await reference.locator('h1').first().textContent())?.trim(), 'Shop', "Scalar shows the API's title")
  t.ok(await reference.getByText('List orders').first().isVisible(), "and the section's operations")
  t.equal(await reference.getByText('/products').count(), 0, "not another section's")
  t.equal(await page.locator('.reference-bar-current').textContent(), 'orders')
  await page.screenshot({ path: `${SCREENSHOTS}parts-section.png` })

  await page.locator('.reference-bar a[rel="next"]').click()
  await page.waitForURL(`${base}/parts/customers`)
  await reference.getByText('/customers/{customerId}').first().waitFor({ timeout: 60_000 })
  await page.locator('.reference-bar a', { hasText: 'all sections' }).click()
  await page.waitForURL(base)

  t.ok(seen.requests.includes(`${base}/parts/orders/openapi.json`), "Scalar loaded the section's document from our host")
  t.notOk(seen.requests.includes(`${base}/openapi.json`), 'and never the whole document')
  t.same(foreignRequests(seen.requests, [origin]), [], 'no request left the server')
  t.same(seen.errors, [], 'the console has no errors')
  t.same(seen.dialogs, [])
})

t.test("the console's reference of a large API: a section picker, one section in the frame", { skip: skipWithoutChromium }, async (t) => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const s = await startTestServer({ referenceSplitBytes: 2000 })
  t.teardown(s.close)
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Shop' } })).data
  await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: shopApi() } })
  const { origin, page, seen } = await browseServer(t, s.app)
  await page.goto(`${origin}/console/`)
  await page.getByLabel('API key').fill(s.key)
  await page.keyboard.press('Enter')
  await page.locator('h1', { hasText: 'Overview' }).waitFor({ timeout: 60_000 })

  await page.goto(`${origin}/console/apis/${api.slug}/reference`)
  const picker = page.getByLabel('Section')
  await picker.waitFor({ timeout: 60_000 })
  t.same((await picker.locator('option').allTextContents()).map((text) => text.split(' · ')[0]), ['orders', 'customers', 'products'])
  const frame = page.frameLocator('iframe.reference-frame')
  await frame.getByText('Place an order').first().waitFor({ timeout: 60_000 })
  t.equal(await frame.getByText('/products').count(), 0, 'the first section only')

  await picker.selectOption({ label: (await picker.locator('option').last().textContent())! })
  await frame.getByText('/products').first().waitFor({ timeout: 60_000 })
  t.equal(await frame.getByText('Place an order').count(), 0, 'the chosen section replaces it')
  await page.screenshot({ path: `${SCREENSHOTS}parts-console.png` })

  const documents = seen.requests.filter((url) => url.includes(`/v1/apis/${api.id}/versions/`))
  t.ok(documents.some((url) => /\/reference-parts\/products$/.test(url)), 'the frame loaded the section through /v1')
  t.notOk(documents.some((url) => url.endsWith('/document')), 'and never the whole document')
  t.same(foreignRequests(seen.requests, [origin]), [], 'no request left the server')
  t.same(seen.errors.filter((message) => !/status of 401/.test(message)), [], 'no error but the sign-in check before signing in')
})
