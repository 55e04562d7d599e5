/**
 * Figure 10: how long a large API's reference page takes to become usable in headless Chromium, served
 * in parts (the registry's default above REGISTRY_REFERENCE_SPLIT) against the whole document on one
 * Scalar page (the same registry with splitting off), in the same run. Usable means Scalar shows an
 * operation: its section is rendered and visible.
 */
import { existsSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'

const CHROMIUM = '/usr/bin/chromium'
/** A page not usable after this long is reported at this value (the whole Stripe document took 148 s). */
export const USABLE_CAP_MS = 600_000

/** The bench's HTTP helper, bound to one registry and its key. */
type Call = (method: string, path: string, body?: string, contentType?: string) => Promise<{ json: () => any }>

export const hasChromium = () => existsSync(CHROMIUM)

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  })
}

/** Publishes `document` as an API on a public site; answers the path of its reference page. */
export async function publishReference(call: Call, document: { body: string; contentType: string }, name: string): Promise<string> {
  const api = (await call('POST', '/v1/apis', JSON.stringify({ name, visibility: 'public' }))).json().data
  await call('POST', `/v1/apis/${api.id}/spec`, document.body, document.contentType)
  const site = (await call('POST', '/v1/sites', JSON.stringify({
    name: `${name} docs`, slug: `${api.slug}-docs`, title: `${name} docs`, visibility: 'public', api_ids: [api.id],
  }))).json().data
  const { organization } = (await call('GET', '/v1/session')).json().data
  return `/@${organization.slug}/sites/${site.slug}/apis/${api.slug}`
}

/** Milliseconds from `began` until Scalar shows an operation on `page`, or USABLE_CAP_MS. */
async function operationShown(page: Page, began: number): Promise<number> {
  const remaining = Math.max(1, USABLE_CAP_MS - (performance.now() - began))
  try {
    await page.locator('#reference section.section h3').first().waitFor({ state: 'visible', timeout: remaining })
    return performance.now() - began
  } catch {
    return USABLE_CAP_MS
  }
}

/** The whole document on one Scalar page: navigation to an operation shown. */
export async function wholeUsableMs(browser: Browser, url: string): Promise<number> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
  try {
    const began = performance.now()
    await page.goto(url, { timeout: USABLE_CAP_MS })
    return await operationShown(page, began)
  } finally {
    await page.close()
  }
}

/**
 * The reference in parts: the overview (the list of sections) shown, then its first section opened by
 * clicking, to an operation shown; and the last section opened directly (a deep link).
 */
export async function splitUsableMs(browser: Browser, url: string): Promise<{ overviewMs: number; firstMs: number; lastMs: number; parts: number }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
  try {
    const began = performance.now()
    await page.goto(url, { timeout: USABLE_CAP_MS })
    const links = page.locator('.part-list a')
    await links.first().waitFor({ state: 'visible', timeout: USABLE_CAP_MS })
    const overviewMs = performance.now() - began
    const hrefs = await links.evaluateAll((anchors) => anchors.map((a) => (a as unknown as { href: string }).href))
    await links.first().click()
    const firstMs = await operationShown(page, began)
    const last = performance.now()
    await page.goto(hrefs[hrefs.length - 1], { timeout: USABLE_CAP_MS })
    const lastMs = await operationShown(page, last)
    return { overviewMs, firstMs, lastMs, parts: new Set(hrefs).size }
  } finally {
    await page.close()
  }
}
