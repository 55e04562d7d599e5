/**
 * Which Host headers could ever route to a site: the server skips the domain map's check against
 * storage (one statement per request burst on PostgreSQL) for every other one, so a wrong "no" here
 * would route a site's domain to the registry after another replica added it.
 */
import t from 'tap'
import { couldBeSiteHost, DOMAIN_PATTERN } from '../../src/domain/sites/sites.js'

t.test('hosts a site domain may be are checked; IP addresses and names without a dot never are', async (t) => {
  for (const host of ['docs.example.com', 'Docs.Example.COM:8443', 'docs.example.com.', 'a.b', 'xn--bcher-kva.example']) {
    t.ok(couldBeSiteHost(host), `${host}: could be a site's`)
  }
  for (const host of [undefined, '', '127.0.0.1', '127.0.0.1:3000', '[::1]:3000', '[2001:db8::1]', 'localhost', 'localhost:3000', 'registry-1:3000', '10.0.0.7']) {
    t.notOk(couldBeSiteHost(host), `${String(host)}: never a site's`)
  }
  t.notOk(couldBeSiteHost('Registry.Example.com:443', 'registry.example.com'), 'the public host: never routed to a site')
  t.ok(couldBeSiteHost('docs.example.com', 'registry.example.com'), 'other names still are')
  // The same rule decides what a site may claim (the API's schema uses DOMAIN_PATTERN): none of those.
  const domain = new RegExp(DOMAIN_PATTERN)
  for (const name of ['127.0.0.1', 'localhost', 'registry-1', '10.0.0.7']) t.notOk(domain.test(name), `no site can have ${name}`)
})
