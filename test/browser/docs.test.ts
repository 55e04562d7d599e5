/**
 * `/docs` in a real browser (Debian's chromium, headless, through playwright-core) against a real
 * listening server: Scalar renders the registry's own operations, its navigation works, the version
 * badge is the package's, every request goes to our own host and the console stays clean.
 * Screenshot: test-output/docs/reference.png.
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { foreignRequests, screenshotFolder, serveToChromium, skipWithoutChromium, watch } from './support.js'

const packageVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version

t.test("/docs renders the registry's own reference with Scalar", { skip: skipWithoutChromium }, async (t) => {
  const SCREENSHOTS = screenshotFolder('docs')
  const { origin, browser } = await serveToChromium(t)
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
  const seen = watch(page)

  await page.goto(`${origin}/docs`)
  const reference = page.locator('#reference')
  // The first tag (APIs) opens with the page; the others are listed in the sidebar.
  await reference.getByText('Create an API').first().waitFor({ timeout: 60_000 })
  t.equal((await reference.locator('h1').first().textContent())?.trim(), 'API Registry', "the service's title")
  t.ok(await reference.getByText(`v${packageVersion}`, { exact: true }).first().isVisible(), `the version badge is package.json's (v${packageVersion})`)
  await page.screenshot({ path: `${SCREENSHOTS}reference.png` })

  // The sidebar opens another tag and jumps to one of its operations.
  const sidebar = reference.locator('aside').first()
  await sidebar.getByText('Sites', { exact: true }).first().click()
  await sidebar.getByText('Create a site', { exact: true }).first().click()
  const heading = reference.locator('h3', { hasText: 'Create a site' }).first()
  await heading.waitFor({ timeout: 30_000 })
  t.ok(await heading.isVisible(), 'the navigation shows the operation')
  t.match(page.url(), /\/docs#/, 'and puts it in the address')

  t.ok(seen.requests.includes(`${origin}/openapi.json`), 'Scalar loaded the service description from our host')
  t.same(foreignRequests(seen.requests, [origin]), [], 'no request left the server')
  t.same(seen.errors, [], 'the console has no errors')
  t.same(seen.dialogs, [])
})
