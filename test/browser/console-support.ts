/**
 * What the console's browser tests share: a registry listening on a real port, a page signed in
 * through the form, moving by keyboard (Tab to an element, then a key), accessibility checks with axe,
 * and checks that nothing stored ever became markup that runs.
 */
import { AxeBuilder } from '@axe-core/playwright'
import type { Browser, Locator, Page } from 'playwright-core'
import type { Test } from 'tap'
import { OUTBOUND_LOOPBACK, type TestServer } from '../helpers.js'
import { foreignRequests, screenshotFolder, serveToChromium, watch, type Watch } from './support.js'

/** test-output/console/, or docs/images/console/ (shown in docs/console.md) with UPDATE_SCREENSHOTS=1. */
const SCREENSHOTS = screenshotFolder('console', 'docs/images/console/')

export interface ConsoleSession {
  s: TestServer
  origin: string
  browser: Browser
  page: Page
  seen: Watch
}

export async function openConsole(t: Test): Promise<ConsoleSession> {
  // The journey connects a repository on a loopback port, which the outbound policy refuses by default.
  const { s, origin, browser } = await serveToChromium(t, { outboundHosts: OUTBOUND_LOOPBACK })
  // axe needs a page of a context of its own (browser.newPage() makes one it cannot use).
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const page = await context.newPage()
  page.setDefaultTimeout(30_000)
  return { s, origin, browser, page, seen: watch(page) }
}

/**
 * The console's own API answers that a page shows on purpose (a sign-in check before signing in, a
 * document the dry run refuses, an API with no repository yet, a sync of a repository that cannot be
 * reached, and whatever statuses a test adds): the browser logs each as a failed resource. Anything
 * else in the console is an error of the page.
 */
const EXPECTED_STATUSES = [401, 404, 422, 502]

function pageErrors(seen: Watch, statuses: number[]): string[] {
  const expected = new RegExp(`^Failed to load resource: the server responded with a status of (${statuses.join('|')}) `)
  return seen.errors.filter((message) => !expected.test(message))
}

/** `alsoExpected`: more statuses the test provokes on purpose (a refused URL's 400, a 409). */
export function assertClean(t: Test, c: ConsoleSession, alsoExpected: number[] = []): void {
  t.same(pageErrors(c.seen, [...EXPECTED_STATUSES, ...alsoExpected]), [], 'no error in the browser console (no CSP violation, no exception)')
  t.same(foreignRequests(c.seen.requests, [c.origin]), [], 'no request left the registry')
  t.same(c.seen.dialogs, [], 'no dialog opened')
}

/** The element that has focus, inside shadow roots too (the code editor lives in one). */
async function isFocused(locator: Locator): Promise<boolean> {
  // Runs in the page (the tests compile without the DOM's types, hence `any`).
  return locator.evaluate((element: any) => {
    let active = (globalThis as any).document.activeElement
    while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement
    return active === element
  }, undefined, { timeout: 30_000 })
}

/**
 * Moves focus to `locator` with Tab (forwards, then backwards): fails when the keyboard cannot reach
 * it. Everything the journey does goes through here, so it works with the keyboard alone.
 */
export async function tabTo(page: Page, locator: Locator, limit = 80): Promise<void> {
  await locator.waitFor({ state: 'visible' })
  for (const key of ['Tab', 'Shift+Tab']) {
    for (let i = 0; i < limit; i++) {
      if (await isFocused(locator)) return
      await page.keyboard.press(key)
    }
  }
  if (!(await isFocused(locator))) throw new Error(`the keyboard does not reach ${locator}`)
}

/** Tab to it, then press a key (Enter follows a link or presses a button). */
export async function press(page: Page, locator: Locator, key = 'Enter'): Promise<void> {
  await tabTo(page, locator)
  await page.keyboard.press(key)
}

/** Tab to a field, select what it holds and type over it. */
export async function typeInto(page: Page, locator: Locator, text: string): Promise<void> {
  await tabTo(page, locator)
  await page.keyboard.press('ControlOrMeta+a')
  await page.keyboard.press('Delete')
  await page.keyboard.insertText(text)
}

/** The page's heading once it is the one expected (a navigation has finished). */
export async function heading(page: Page, text: string | RegExp): Promise<void> {
  await page.locator('main h1', { hasText: text }).waitFor()
}

/**
 * axe on the page as it is: no serious or critical violation. The Scalar reference frame is the sites'
 * renderer, checked by its own tests, not the console's markup.
 * Legacy mode runs axe in the page itself: the default finishes each run in a new blank page, which
 * doubled the time of every check (1.4 s against 0.7). What legacy mode gives up, cross-origin frames,
 * the console does not have. Only violations are asked for; the passes are not read.
 */
export async function checkAccessibility(t: Test, page: Page, label: string): Promise<void> {
  const results = await new AxeBuilder({ page }).exclude('iframe.reference-frame')
    .options({ resultTypes: ['violations'] }).setLegacyMode().analyze()
  const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
  t.same(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`), [], `axe: ${label}`)
}

/**
 * Nothing stored became active markup: no element has an `on…` attribute or a `javascript:` URL, no
 * injected script set its marker, and no dialog opened.
 */
export async function checkNoInjectedMarkup(t: Test, page: Page, label: string): Promise<void> {
  const found = await page.evaluate(`(() => {
    const bad = []
    const visit = (root) => {
      for (const element of root.querySelectorAll('*')) {
        for (const attribute of element.attributes) {
          if (/^on/i.test(attribute.name)) bad.push(element.tagName + ' ' + attribute.name)
          if (/^\\s*javascript:/i.test(attribute.value)) bad.push(element.tagName + ' ' + attribute.name + '=' + attribute.value)
        }
        if (element.shadowRoot) visit(element.shadowRoot)
      }
    }
    visit(document)
    return { bad, marker: window.__xss ?? null }
  })()`)
  t.same(found, { bad: [], marker: null }, `nothing stored runs: ${label}`)
}

export async function screenshot(page: Page, name: string): Promise<void> {
  // From the top: scrolled, the sticky sidebar would be drawn halfway down a full-page picture.
  await page.evaluate('window.scrollTo(0, 0)')
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true })
}

/** A payload for every stored string: a script, an image whose error handler runs, a javascript: link. */
export const hostile = (tag: string) =>
  `<script>window.__xss='${tag}'</script><img src=x onerror="window.__xss='${tag}';alert(1)"> [x](javascript:alert('${tag}')) javascript:alert(1)`
