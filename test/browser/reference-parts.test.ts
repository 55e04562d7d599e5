/**
 * A large API's reference in parts, in a real browser (Debian's chromium, headless, through
 * playwright-core) against a real listening server: the overview lists the sections, a click opens
 * one, Scalar renders that section's operations and not the others', the bar leads on and back, the
 * console stays clean and no request leaves the server. Screenshots: test-output/sites/parts-*.png.
 */
import { mkdirSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { json, startTestServer } from '../helpers.js'
import { shopApi } from '../support/shop-api.js'
import { foreignRequests, launchChromium, skipWithoutChromium, watch } from './support.js'

const SCREENSHOTS = fileURLToPath(new URL('../../test-output/sites/', import.meta.url))

t.test('overview → section → next section in chromium', { skip: skipWithoutChromium }, async (t) => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  // The shop document is about 9 KB: split above 2 KB, it shows as a large API does.
  const s = await startTestServer({ referenceSplitBytes: 2000 })
  t.teardown(s.close)
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Shop', visibility: 'public' } })).data
  await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: shopApi() } })
  await s.call({ method: 'POST', url: '/v1/sites', payload: { name: 'Docs', slug: 'docs', title: 'Shop Developers', visibility: 'public', api_ids: [api.id] } })
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}`
  const base = `${origin}/@acme/sites/docs/apis/shop`

  const browser = await launchChromium()
  t.teardown(() => browser.close())
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
  const seen = watch(page)

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
