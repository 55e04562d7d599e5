/**
 * The console's Webhooks page in chromium, by keyboard alone (docs/webhooks.md, docs/console.md): an
 * endpoint refused by the outbound policy shows why next to the form; one pointing at a loopback
 * receiver is added with chosen event types and its secret is shown once; an API created through the
 * REST API is delivered, signed with that secret, and the deliveries view shows it succeed with its
 * attempt log; the receiver fails and a redelivery logs its 500; an event type is added; a new secret
 * is shown once; the endpoint is disabled, and a redelivery then shows the API's 409; it is deleted;
 * a write key is told the page is for admin keys. axe on every view, a clean browser console, no
 * request leaving the registry, and a hostile description stays text. Screenshots: docs/images/console/webhook*.png (shown in docs/console.md).
 */
import t from 'tap'
import { startReceiver } from '../events/receiver.js'
import { skipWithoutChromium } from './support.js'
import {
  assertClean, checkAccessibility, checkNoInjectedMarkup, heading, hostile, openConsole, press, screenshot, tabTo, typeInto,
} from './console-support.js'

t.setTimeout(300_000)

t.test('webhooks in the console, by keyboard', { skip: skipWithoutChromium }, async (t) => {
  const receiver = await startReceiver()
  t.teardown(receiver.close)
  const c = await openConsole(t)
  const { page, origin } = c
  const main = page.locator('main')
  const button = (name: string) => main.getByRole('button', { name, exact: true })
  const tab = (name: string) => main.getByRole('navigation', { name: 'Endpoint views' }).getByRole('link', { name, exact: true })

  // Signed in with the admin key, on the page's own address.
  await page.goto(`${origin}/console/webhooks`)
  await typeInto(page, page.getByLabel('API key'), c.s.key)
  await page.keyboard.press('Enter')
  await heading(page, 'Webhooks')
  t.equal(await page.locator('nav.nav a[aria-current=page]').textContent(), 'Webhooks', 'under Organization in the sidebar')
  await main.getByText('No endpoints yet').waitFor()

  // A URL the outbound policy refuses: the API's detail, next to the form.
  const url = page.getByLabel('URL', { exact: true })
  await typeInto(page, url, 'http://10.0.0.8/hooks')
  await press(page, button('Add endpoint'))
  await main.locator('#add-endpoint [role=alert]').getByText("url: the host '10.0.0.8' is a private address").waitFor()

  // The receiver on loopback (allowed by this registry's policy), for two event types only.
  await typeInto(page, url, receiver.url)
  await typeInto(page, page.getByLabel(/^Description/), `Orders bot ${hostile('webhook')}`)
  await tabTo(page, page.getByRole('radio', { name: /All events/ }))
  await page.keyboard.press('ArrowDown')
  t.ok(await page.getByRole('radio', { name: 'Only these' }).isChecked(), 'chosen with the arrow keys')
  t.ok(await button('Add endpoint').isDisabled(), 'not without a type')
  await press(page, page.getByRole('checkbox', { name: /^version\.created/ }), 'Space')
  await press(page, page.getByRole('checkbox', { name: /^resource\.created/ }), 'Space')
  await press(page, button('Add endpoint'))
  const secret = await page.locator('[data-testid=webhook-secret]').textContent()
  t.match(secret, /^whsec_/, 'the signing secret, once')
  t.match(await main.locator('#add-endpoint .notice.ok').textContent(), 'will not be shown again')
  receiver.secret = secret!
  const row = main.locator('tbody tr', { hasText: receiver.url })
  t.match(await row.textContent(), /version\.created, resource\.created.*enabled/)
  await checkAccessibility(t, page, 'webhooks')
  await checkNoInjectedMarkup(t, page, 'webhooks')
  await screenshot(page, 'webhooks')

  // An event: an API created through the REST API is delivered, signed with the secret shown.
  t.equal((await c.s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Orders' } })).statusCode, 201)
  const [first] = await receiver.waitFor(1)
  t.equal(first!.verified?.type, 'resource.created', 'verified with the secret the page showed')

  // The endpoint's page never shows the secret again; its deliveries show the one that succeeded.
  await press(page, row.getByRole('link', { name: receiver.url }))
  await heading(page, receiver.url)
  t.notOk((await page.content()).includes(secret!), 'the secret is not shown again')
  await checkAccessibility(t, page, 'webhook endpoint')
  await checkNoInjectedMarkup(t, page, 'webhook endpoint')
  await press(page, tab('Deliveries'))
  await heading(page, `${receiver.url}: Deliveries`)
  const delivery = main.locator('[data-testid=deliveries] > tbody > tr').first()
  await delivery.locator('.badge', { hasText: 'succeeded' }).waitFor()
  t.match(await delivery.textContent(), /resource\.created/)
  await press(page, delivery.getByRole('button', { name: 'Attempt log' }))
  const log = main.locator('tr.attempt-log')
  await log.locator('.badge', { hasText: '204' }).waitFor()

  // The receiver fails: a redelivery is sent at once and its 500 is logged, with the answer's start.
  receiver.answer = (_request, response) => { response.statusCode = 500; response.end('receiver down for maintenance') }
  await press(page, delivery.getByRole('button', { name: 'Redeliver' }))
  await main.getByText('The resource.created delivery is being sent again, with its retries.').waitFor()
  await log.getByText('receiver down for maintenance').waitFor()
  await log.locator('.badge', { hasText: '500' }).waitFor()
  await delivery.locator('.badge', { hasText: 'pending' }).waitFor()
  t.equal(receiver.received.length, 2)
  await checkAccessibility(t, page, 'webhook deliveries')
  await screenshot(page, 'webhook-deliveries')

  // One more event type saved; a new secret, shown once; then the endpoint is disabled.
  await press(page, tab('Settings'))
  await heading(page, receiver.url)
  await press(page, page.getByRole('checkbox', { name: /^version\.restored/ }), 'Space')
  await press(page, button('Save changes'))
  await main.getByText('Saved.').waitFor()
  await main.locator('.lead', { hasText: 'version.created, version.restored, resource.created' }).waitFor()
  await press(page, button('Make a new secret'))
  await press(page, button('Replace the secret now'))
  const renewed = await main.locator('#signing-secret [data-testid=webhook-secret]').textContent()
  t.match(renewed, /^whsec_/)
  t.not(renewed, secret, 'a new secret')
  await press(page, button('Disable'))
  await press(page, button('Disable the endpoint'))
  await main.locator('#endpoint-status .badge', { hasText: 'disabled' }).waitFor()
  await button('Enable').waitFor()
  await checkAccessibility(t, page, 'webhook endpoint, disabled')
  await screenshot(page, 'webhook-endpoint')

  // A disabled endpoint's delivery is not sent again: the API's 409 says why.
  await press(page, tab('Deliveries'))
  await heading(page, `${receiver.url}: Deliveries`)
  await press(page, delivery.getByRole('button', { name: 'Redeliver' }))
  await main.locator('[role=alert]', { hasText: 'The delivery was not sent again' }).getByText('the endpoint is disabled; enable it first').waitFor()

  // Deleted, after the confirmation.
  await press(page, tab('Settings'))
  await heading(page, receiver.url)
  await press(page, button('Delete endpoint'))
  await press(page, button('Delete the endpoint'))
  await heading(page, 'Webhooks')
  await main.getByText('No endpoints yet').waitFor()
  t.equal((await c.s.call({ method: 'GET', url: '/v1/webhooks' })).body.includes(receiver.url), false, 'gone')

  // A key that is not an admin's is told so, plainly.
  const writer = await c.s.registry.organizations.issueKey(c.s.orgId, 'CI', 'write')
  await press(page, page.getByRole('button', { name: 'Sign out' }))
  await typeInto(page, page.getByLabel('API key'), writer.secret)
  await page.keyboard.press('Enter')
  await heading(page, 'Webhooks')
  await main.getByText('Only admin keys can see and change webhook endpoints. Your key’s role is write.').waitFor()
  await checkAccessibility(t, page, 'webhooks, write key')
  assertClean(t, c, [400, 409])
})
