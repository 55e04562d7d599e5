/** What the browser tests share: Debian's chromium driven by playwright-core, and what a page did. */
import { existsSync, mkdirSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type Page } from 'playwright-core'
import type { Test } from 'tap'
import { startTestServer, type TestServer } from '../helpers.js'

export const CHROMIUM = '/usr/bin/chromium'

/** tap's `skip` option: false when chromium is there, else the reason. */
export const skipWithoutChromium = existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed: browser test skipped (.ci/run installs it)`

/** Headless chromium with nothing of its own going out (no sync, updates or background fetches). */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', ...extraArgs,
    ],
  })
}

type TestServerOptions = Parameters<typeof startTestServer>[0]

/** A test registry listening on a loopback port, and chromium: both closed when the test ends. */
export async function serveToChromium(t: Test, options: TestServerOptions = {}, extraArgs: string[] = []): Promise<{ s: TestServer; origin: string; browser: Browser }> {
  const s = await startTestServer(options)
  t.teardown(s.close)
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}`
  const browser = await launchChromium(extraArgs)
  t.teardown(() => browser.close())
  return { s, origin, browser }
}

/**
 * Where a test's screenshots go: test-output/{name}/ (ignored by git), so a run never changes the
 * clone. The console's screenshots in docs/ are refreshed on purpose, with UPDATE_SCREENSHOTS=1.
 */
export function screenshotFolder(name: string, documented?: string): string {
  const folder = documented && process.env.UPDATE_SCREENSHOTS === '1' ? documented : `test-output/${name}/`
  const path = fileURLToPath(new URL(`../../${folder}`, import.meta.url))
  mkdirSync(path, { recursive: true })
  return path
}

/** What a page did while a test looked at it. */
export interface Watch {
  requests: string[]
  errors: string[]
  dialogs: string[]
}

export function watch(page: Page): Watch {
  const seen: Watch = { requests: [], errors: [], dialogs: [] }
  page.on('request', (request) => seen.requests.push(request.url()))
  page.on('console', (message) => { if (message.type() === 'error') seen.errors.push(message.text()) })
  page.on('pageerror', (error) => seen.errors.push(`uncaught: ${error.message}`))
  page.on('dialog', (dialog) => {
    seen.dialogs.push(dialog.message())
    void dialog.dismiss()
  })
  return seen
}

/** The requests that did not go to one of `origins` (data: URLs never leave the page). */
export function foreignRequests(requests: string[], origins: string[]): string[] {
  return requests.filter((url) => !url.startsWith('data:') && !origins.some((origin) => url.startsWith(`${origin}/`)))
}

/**
 * A test server listening on a port of its own, and a page in chromium watched from its start (the
 * browser closes with the test). Answers the server's origin, the page and what it did.
 */
export async function browseServer(t: { teardown: (fn: () => unknown) => void }, app: { listen: (options: { port: number; host: string }) => Promise<unknown>; server: { address: () => unknown } }): Promise<{ origin: string; page: Page; seen: Watch }> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const browser = await launchChromium()
  t.teardown(() => browser.close())
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
  return { origin, page, seen: watch(page) }
}
