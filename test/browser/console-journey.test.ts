/**
 * The console's whole journey in a real browser (Debian's chromium, headless, through playwright-core),
 * through the UI alone and with the keyboard alone (every step Tabs to its control and presses a key):
 * sign in, create an API, upload, see a 422 with its findings, fix and publish, restore, compare, see
 * the reference, write a ruleset and attach it, connect a repository, build a site with a guide, create
 * an SDK and build it, create and revoke a key, sign out. axe checks every page; the browser console
 * stays clean and no request leaves the registry. Screenshots: docs/images/console/ (shown in docs/console.md).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { skipWithoutChromium } from './support.js'
import {
  assertClean, checkAccessibility, checkNoInjectedMarkup, heading, hostile, openConsole, press, screenshot, tabTo, typeInto,
} from './console-support.js'

const INVALID = `openapi: 3.1.0
info:
  title: Orders
  version: 1.0.0
paths:
  /orders:
    get:
      summary: List orders
      responses: 42
`

const V1 = `openapi: 3.1.0
info:
  title: Orders
  version: 1.0.0
  description: Orders of the shop.
paths:
  /orders:
    get:
      operationId: listOrders
      summary: List orders
      responses:
        '200':
          description: the orders
`

const V2 = `${V1}    post:
      operationId: createOrder
      summary: Place an order
      responses:
        '201':
          description: placed
`.replace('version: 1.0.0', 'version: 1.1.0')

const RULESET_INVALID = `extends: https://rules.example.com/house.yaml
`
const RULESET = `extends: [[spectral:oas, recommended]]
rules:
  operation-tags: error
`

const GUIDE = `# Getting started

Send your key as a bearer token:

| Status | Meaning |
|:--|--:|
| 200 | the orders |
`

/** A URL nothing listens on: the repository sync fails there, deterministically and at once. */
async function closedUrl(): Promise<string> {
  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const { port } = closed.address() as AddressInfo
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  return `http://127.0.0.1:${port}/acme/orders.git`
}

// Building an SDK and starting Scalar take their time on a loaded machine.
t.setTimeout(600_000)

t.test('the console journey, by keyboard', { skip: skipWithoutChromium }, async (t) => {
  const c = await openConsole(t)
  const { page, origin } = c
  const main = page.locator('main')
  const nav = (name: string) => page.locator('nav.nav a', { hasText: name })
  const button = (name: string | RegExp) => main.getByRole('button', { name, exact: typeof name === 'string' })

  // Sign in.
  await page.goto(`${origin}/console/`)
  await page.locator('h1', { hasText: 'Sign in to the registry' }).waitFor()
  await checkAccessibility(t, page, 'sign-in')
  await screenshot(page, 'sign-in')
  await typeInto(page, page.getByLabel('API key'), c.s.key)
  await page.keyboard.press('Enter')
  await heading(page, 'Overview')
  t.equal(await page.locator('.org strong').textContent(), 'Acme', "the key's organization")
  await checkAccessibility(t, page, 'overview')

  // Create an API.
  await press(page, nav('APIs'))
  await heading(page, 'APIs')
  await checkAccessibility(t, page, 'APIs, empty')
  await press(page, main.getByRole('link', { name: 'New API' }))
  await heading(page, 'New API')
  await checkAccessibility(t, page, 'new API')
  await typeInto(page, page.getByLabel('Name', { exact: true }), 'Orders')
  // Every stored string is hostile: none of it may become markup that runs.
  await typeInto(page, page.getByLabel(/^Description/), `Orders of the shop. ${hostile('description')}`)
  await press(page, button('Create API'))
  await heading(page, 'Orders: Upload')
  t.match(page.url(), /\/console\/apis\/orders\/upload$/, 'addressed by its slug')

  // Upload: the dry run refuses the document with its findings, with their lines.
  await typeInto(page, page.getByLabel('Or paste it'), INVALID)
  await press(page, button('Check (dry run)'))
  const result = page.locator('#check-result')
  await result.getByText('The document was refused').waitFor()
  t.match(await result.locator('.notice').textContent(), '422 invalid_document')
  const finding = result.locator('tbody tr', { hasText: 'responses' }).first()
  t.match(await finding.textContent(), /paths › \/orders › get › responses/, 'the path of the problem')
  await finding.getByText('line 9').waitFor()
  t.match(await finding.textContent(), 'blocks', 'and that it blocks')
  t.ok(await button('Publish').isDisabled(), 'nothing to publish')
  await checkAccessibility(t, page, 'upload with findings')
  await screenshot(page, 'upload-findings')

  // Fix it: the check passes, then publish.
  await typeInto(page, page.getByLabel('Or paste it'), V1)
  await press(page, button('Check (dry run)'))
  await result.getByText('Check passed').waitFor()
  await press(page, button('Publish'))
  await main.getByText('Published version #1.').waitFor()
  await typeInto(page, page.getByLabel('Or paste it'), V2)
  await press(page, button('Check (dry run)'))
  await result.getByText('Check passed').waitFor()
  await press(page, button('Publish'))
  await main.getByText('Published version #2.').waitFor()

  // Restore version 1: it becomes current as version 3.
  await press(page, main.getByRole('link', { name: 'Versions', exact: true }))
  await heading(page, 'Orders: Versions')
  await press(page, button('Restore version 1'))
  await main.getByText('Version #1 is current again, as version #3.').waitFor()
  // The notice comes with the answer; the timeline reloads after it.
  await page.locator('[data-testid=versions] li').nth(2).waitFor()
  t.equal(await page.locator('[data-testid=versions] li').count(), 3)
  t.match(await page.locator('[data-testid=versions] li').first().textContent(), /#3.*current.*restore of #1/)
  await checkAccessibility(t, page, 'versions')
  await screenshot(page, 'versions')

  // Compare #2 with #3: the restore removed an operation, which breaks clients.
  await press(page, main.getByRole('link', { name: 'Compare', exact: true }))
  await heading(page, 'Orders: Compare')
  await page.locator('[data-testid=changes]').waitFor()
  t.match(await main.locator('p.summary').textContent(), /From #2 to #3: 1 breaking/)
  t.match(await page.locator('[data-testid=changes] tbody tr').first().textContent(), /breaking.*POST \/orders/)
  await checkAccessibility(t, page, 'compare')
  await screenshot(page, 'compare')

  // The reference of the current version, rendered by the sites' Scalar in a frame.
  await press(page, main.getByRole('link', { name: 'Reference', exact: true }))
  await heading(page, 'Orders: Reference')
  await page.frameLocator('iframe.reference-frame').getByText('List orders').first().waitFor({ timeout: 90_000 })
  await checkAccessibility(t, page, 'reference')
  await screenshot(page, 'reference')

  // A ruleset, written in the editor that validates as you type; lint the API with it and attach it.
  await press(page, nav('Rulesets'))
  await heading(page, 'Rulesets')
  await checkAccessibility(t, page, 'rulesets')
  await press(page, main.getByRole('link', { name: 'New ruleset' }))
  await heading(page, 'New ruleset')
  await checkAccessibility(t, page, 'new ruleset')
  await typeInto(page, page.getByLabel('Name', { exact: true }), 'House rules')
  await press(page, button('Create ruleset'))
  await heading(page, 'House rules: Editor')
  const editor = page.locator('.cm-content')
  await editor.waitFor()
  const status = main.locator('p.status-line')
  await status.getByText('Valid ruleset.').waitFor()
  await typeInto(page, editor, RULESET_INVALID)
  await status.getByText(/\d+ problems?: see the marked lines/).waitFor()
  await page.locator('.cm-lintRange-error').first().waitFor()
  t.ok(await button('Save as new version').isDisabled(), 'an invalid ruleset is not saved')
  await typeInto(page, editor, RULESET)
  await status.getByText('Valid ruleset.').waitFor()
  await press(page, button('Save as new version'))
  await main.getByText('Saved as version #2.').waitFor()
  await checkAccessibility(t, page, 'ruleset editor')
  await typeInto(page, page.getByLabel('API to lint'), 'ord')
  await press(page, button('Lint Orders'))
  await main.locator('#lint-api tbody tr').first().waitFor()
  t.match(await main.locator('#lint-api').textContent(), /operation-tags/, "the ruleset's findings on the API")
  t.match(await main.locator('#lint-api tbody tr', { hasText: 'operation-tags' }).first().textContent(), /line 8/, 'at their line of the document as uploaded')
  await screenshot(page, 'ruleset-editor')
  await press(page, button('Attach to Orders'))
  await main.getByText('Attached: Orders’s uploads are now linted with House rules.').waitFor()

  // Connect the API to a repository and sync it: the repository cannot be reached, and the page says so.
  await press(page, nav('APIs'))
  await heading(page, 'APIs')
  await main.locator('[data-testid=resource-list] tbody tr').first().waitFor()
  await checkAccessibility(t, page, 'APIs')
  await checkNoInjectedMarkup(t, page, 'APIs')
  await press(page, main.getByRole('link', { name: 'Orders' }))
  await heading(page, 'Orders')
  // The choices come from the rulesets list, which loads after the page.
  const rulesetField = page.getByLabel('Ruleset', { exact: true })
  await rulesetField.locator('option', { hasText: 'House rules' }).waitFor({ state: 'attached' })
  t.not(await rulesetField.inputValue(), '', 'the ruleset is attached')
  await checkNoInjectedMarkup(t, page, 'API settings')
  await checkAccessibility(t, page, 'API settings')
  await press(page, main.getByRole('link', { name: 'Repository', exact: true }))
  await heading(page, 'Orders: Repository')
  await typeInto(page, page.getByLabel('Repository URL'), await closedUrl())
  await press(page, button('Connect'))
  await main.getByText('Connection saved.').waitFor()
  t.match(await main.locator('.secret code').first().textContent(), `${origin}/webhooks/github`, 'the webhook URL to paste into GitHub')
  await press(page, button('Sync now'))
  await main.locator('#last-sync .badge', { hasText: 'failed' }).waitFor()
  await main.locator('#last-sync .notice.error', { hasText: 'repository_unavailable' }).waitFor()
  t.equal(await main.locator('#last-sync .notice.error').count(), 1, "the failed sync's error is shown once, as the last sync's")
  await checkAccessibility(t, page, 'repository')
  await screenshot(page, 'repository')

  // A documentation site with the API and a guide.
  await press(page, nav('Sites'))
  await heading(page, 'Sites')
  await checkAccessibility(t, page, 'sites')
  await press(page, main.getByRole('link', { name: 'New site' }))
  await heading(page, 'New site')
  await checkAccessibility(t, page, 'new site')
  await typeInto(page, page.getByLabel('Name', { exact: true }), 'Docs')
  await typeInto(page, page.getByLabel('Title'), 'Acme Developers')
  await press(page, button('Create site'))
  await heading(page, 'Acme Developers')
  await typeInto(page, page.getByLabel('Add an API'), 'Orders')
  await press(page, button('Add Orders'))
  await press(page, button('Save APIs'))
  await main.locator('#site-apis').getByText('Unsaved changes.').waitFor({ state: 'detached' })
  await press(page, main.getByRole('link', { name: 'New guide' }))
  await heading(page, 'New guide')
  await typeInto(page, page.getByLabel('Title'), 'Getting started')
  await typeInto(page, page.getByLabel('Slug'), 'getting-started')
  await typeInto(page, page.getByLabel('Markdown'), `${GUIDE}\n${hostile('guide')}\n`)
  await main.locator('.preview h1', { hasText: 'Getting started' }).waitFor()
  t.equal(await main.locator('.preview th').first().getAttribute('class'), 'align-left', 'table alignment as a class, never a style')
  await checkAccessibility(t, page, 'guide editor')
  await checkNoInjectedMarkup(t, page, 'guide preview')
  await screenshot(page, 'guide-editor')
  await press(page, button('Create guide'))
  await page.waitForURL(`${origin}/console/sites/docs/guides/getting-started`)
  await press(page, main.getByRole('link', { name: 'Back to the site' }))
  await heading(page, 'Acme Developers')
  await main.locator('#guides').getByText('Getting started').waitFor()
  t.equal(await main.getByRole('link', { name: 'Open the live site' }).getAttribute('href'), '/@acme/sites/docs/')
  await checkAccessibility(t, page, 'site')
  await screenshot(page, 'site')

  // An SDK of the API, and a build that refreshes until it is done.
  await press(page, nav('SDKs'))
  await heading(page, 'SDKs')
  await checkAccessibility(t, page, 'SDKs')
  await press(page, main.getByRole('link', { name: 'New SDK' }))
  await heading(page, 'New SDK')
  await checkAccessibility(t, page, 'new SDK')
  await typeInto(page, page.getByLabel('Name', { exact: true }), 'Orders SDK')
  await typeInto(page, page.getByLabel('Add an API'), 'Orders')
  await press(page, button('Add Orders'))
  await press(page, button('Create SDK'))
  await heading(page, 'Orders SDK')
  await press(page, button('Queue build'))
  await main.getByText('Queued 1 build: typescript #1.').waitFor()
  await main.locator('#sdk-builds .badge', { hasText: 'succeeded' }).waitFor({ timeout: 180_000 })
  await checkAccessibility(t, page, 'SDK')
  await screenshot(page, 'sdk')
  await press(page, main.getByRole('link', { name: 'TypeScript #1' }))
  await heading(page, 'TypeScript build #1')
  await main.locator('pre.log', { hasText: 'succeeded' }).waitFor()
  t.match(await main.getByRole('link', { name: 'Download .tar.gz' }).getAttribute('href'), /^\/v1\/builds\/[0-9A-Z]{26}\/artifact$/)
  await checkAccessibility(t, page, 'build')

  // A key: created, its secret shown once, revoked.
  await press(page, nav('API keys'))
  await heading(page, 'API keys')
  await typeInto(page, page.getByLabel('Name'), 'Dashboards')
  await tabTo(page, page.getByRole('radio', { name: /Write/ }))
  await page.keyboard.press('ArrowUp')
  t.ok(await page.getByRole('radio', { name: /Read/ }).isChecked(), 'the role chosen with the arrow keys')
  await press(page, button('Create key'))
  const secret = await page.locator('[data-testid=new-key-secret]').textContent()
  t.match(secret, /^sk_/, 'the secret, once')
  t.equal((await c.s.call({ method: 'POST', url: '/v1/apis', key: secret, payload: { name: 'x' } })).statusCode, 403, 'a read key')
  await screenshot(page, 'keys')
  const row = main.locator('tr', { hasText: 'Dashboards' })
  await press(page, row.getByRole('button', { name: 'Revoke' }))
  await press(page, row.getByRole('button', { name: 'Revoke Dashboards' }))
  await row.getByText('revoked').waitFor()
  t.equal((await c.s.call({ method: 'GET', url: '/v1/apis', key: secret })).statusCode, 401, 'revoked')
  await checkAccessibility(t, page, 'keys')

  // The overview has it all; every page has its own address, and back and forward move between them.
  await press(page, nav('Overview'))
  await heading(page, 'Overview')
  await main.locator('.card', { hasText: 'APIs' }).getByText('1').waitFor()
  await screenshot(page, 'overview')
  await checkNoInjectedMarkup(t, page, 'overview')

  // Search from the sidebar: an operation id of the current document finds the API.
  await typeInto(page, page.getByLabel('Search APIs, schemas and rulesets'), 'listOrders')
  await page.keyboard.press('Enter')
  await heading(page, 'Search')
  await page.locator('[data-testid=search-results] li', { hasText: 'Orders' }).first().waitFor()
  await checkAccessibility(t, page, 'search')
  await checkNoInjectedMarkup(t, page, 'search results')
  await screenshot(page, 'search')
  await page.goBack()
  await heading(page, 'Overview')
  await page.goBack()
  await heading(page, 'API keys')
  await page.goForward()
  await heading(page, 'Overview')
  await page.goto(`${origin}/console/apis/orders/versions?page=1`)
  await heading(page, 'Orders: Versions')
  await press(page, main.getByRole('navigation', { name: 'API views' }).getByRole('link', { name: 'Document', exact: true }))
  await heading(page, 'Orders: Document')
  await checkAccessibility(t, page, 'document')
  await press(page, nav('Schemas'))
  await heading(page, 'Schemas')
  await checkAccessibility(t, page, 'schemas')
  await press(page, nav('Builds'))
  await heading(page, 'Builds')
  await main.getByRole('link', { name: /TypeScript/ }).first().waitFor()
  await checkAccessibility(t, page, 'builds')
  await press(page, nav('Git mirror'))
  await heading(page, 'Git mirror')
  await checkAccessibility(t, page, 'git mirror')
  await page.goto(`${origin}/console/no-such-page`)
  await heading(page, 'Page not found')
  await checkAccessibility(t, page, 'page not found')

  // Sign out: the session is gone, and the form is back.
  await press(page, page.getByRole('button', { name: 'Sign out' }))
  await page.locator('h1', { hasText: 'Sign in to the registry' }).waitFor()
  await page.reload()
  await page.locator('h1', { hasText: 'Sign in to the registry' }).waitFor()
  assertClean(t, c)
})
