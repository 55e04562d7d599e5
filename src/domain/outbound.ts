/**
 * The outbound host policy (REGISTRY_OUTBOUND_HOSTS): the hosts the server may connect to for
 * repository sync, SDK delivery and mirror pushes, the only features that reach URLs a key holder
 * configured. Without it, any key could make the server reach internal services or a cloud metadata
 * endpoint.
 *
 * Entries are an exact host (`github.com`, `10.0.0.7`, `[::1]`) or `*.example.com` (any subdomain of
 * example.com, not example.com itself); matching is case-insensitive and ignores ports. Hosts are
 * compared as the WHATWG URL parser normalizes them (the parser fetch uses), so `http://127.1/` or
 * `http://0x7f.0.0.1/` are `127.0.0.1` and `BÜCHER.de` is `xn--bcher-kva.de`, in entries and URLs alike.
 * An empty list allows every host.
 *
 * The policy is checked twice: when a URL is configured (`check`: 400, nothing stored), and on every
 * HTTP request, redirects included (`outboundFetch`), for URLs stored before the policy changed and
 * for servers that redirect elsewhere. This module depends on nothing but errors.ts, so the sync
 * worker threads can rebuild the policy from its `hosts`.
 */
import { RegistryError } from '../errors.js'
import type { Fetch } from '../store/git-http.js'

/** Redirects followed per request, at most. */
export const MAX_REDIRECTS = 5

/** Thrown at connect time for a host the policy does not allow, or a redirect not followed. */
export class OutboundRefused extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'OutboundRefused'
  }
}

interface Entry {
  host: string
  /** `*.host`: any subdomain of `host`, not `host` itself. */
  subdomains: boolean
}

/** A host as compared: lower case (the parser's), without one trailing dot (`github.com.` is github.com). */
function comparable(hostname: string): string {
  return hostname.endsWith('.') ? hostname.slice(0, -1) : hostname
}

function isIpLiteral(host: string): boolean {
  return host.startsWith('[') || /^\d+\.\d+\.\d+\.\d+$/.test(host)
}

/** One entry of the list, normalized; throws an Error saying what is wrong with it. */
function parseEntry(raw: string): Entry {
  const bad = (why: string) => new Error(`REGISTRY_OUTBOUND_HOSTS: '${raw}' ${why}`)
  let text = raw.toLowerCase()
  if (text.includes('://')) throw bad('is a URL: list the host alone (e.g. github.com)')
  const subdomains = text.startsWith('*.')
  if (subdomains) text = text.slice(2)
  if (text.includes('*')) throw bad("has a '*' that is not the first label: only '*.example.com' is supported")
  // A bare IPv6 address is written without brackets too.
  const bareIpv6 = !text.startsWith('[') && (text.match(/:/g)?.length ?? 0) >= 2
  if (bareIpv6) text = `[${text}]`
  else if (/^[^[]*:\d*$/.test(text) || /\]:/.test(text)) throw bad('has a port: list the host alone (any port of an allowed host is allowed)')
  if (/[/?#@\\\s]/.test(text)) throw bad('is not a host name')
  let host: string
  try {
    host = comparable(new URL(`http://${text}/`).hostname)
  } catch {
    throw bad('is not a host name or IP address')
  }
  if (host === '' || host.split('.').some((label) => label === '')) throw bad('has an empty label')
  if (subdomains && isIpLiteral(host)) throw bad("is an IP address: '*.' applies to domain names only")
  return { host, subdomains }
}

/** The normalized entries of a REGISTRY_OUTBOUND_HOSTS value (comma-separated); empty: any host. */
export function parseOutboundHosts(text: string | undefined): string[] {
  if (!text) return []
  const entries = text.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')
  return [...new Set(entries.map(parseEntry).map((e) => (e.subdomains ? `*.${e.host}` : e.host)))]
}

export class OutboundPolicy {
  /** Every host allowed: the default, and the behaviour without REGISTRY_OUTBOUND_HOSTS. */
  static readonly ANY = new OutboundPolicy([])

  /** A policy of (normalized or raw) entries; an empty list allows any host. Throws on a bad entry. */
  static of(hosts: readonly string[]): OutboundPolicy {
    return hosts.length === 0 ? OutboundPolicy.ANY : new OutboundPolicy(hosts)
  }

  readonly #entries: Entry[]

  private constructor(hosts: readonly string[]) {
    this.#entries = hosts.map(parseEntry)
  }

  /** The normalized entries (data a worker thread rebuilds the policy from); empty: any host. */
  get hosts(): string[] {
    return this.#entries.map((e) => (e.subdomains ? `*.${e.host}` : e.host))
  }

  get restricted(): boolean {
    return this.#entries.length > 0
  }

  /** Whether the server may connect to this URL's host (an unparsable URL is allowed only when unrestricted). */
  allows(url: string | URL): boolean {
    if (!this.restricted) return true
    const host = hostOf(url)
    return host !== undefined && this.#entries.some((entry) => entry.subdomains
      ? host.length > entry.host.length + 1 && host.endsWith(`.${entry.host}`)
      : host === entry.host)
  }

  /** Refuses a URL being configured in `field` (400 invalid_request, naming the field). */
  check(url: string, field: string): void {
    if (this.allows(url)) return
    const message = `the host '${hostOf(url) ?? url}' is not in this server's REGISTRY_OUTBOUND_HOSTS`
    throw new RegistryError('invalid_request', `${field}: ${message}`, [{ path: [field], message }])
  }

  /** Refuses a connection about to be made (OutboundRefused). */
  require(url: string | URL): void {
    if (!this.allows(url)) throw new OutboundRefused(`the host '${hostOf(url) ?? String(url)}' is not in REGISTRY_OUTBOUND_HOSTS`)
  }
}

function hostOf(url: string | URL): string | undefined {
  try {
    return comparable((typeof url === 'string' ? new URL(url) : url).hostname)
  } catch {
    return undefined
  }
}

// ---------------------------------------------------------------- connect time

export type { Fetch }

const REDIRECTS = new Set([301, 302, 303, 307, 308])
/** Headers that carry credentials: never sent on to another origin. */
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'private-token']

/**
 * `fetch` under the policy: every request's host is checked before connecting, and redirects are
 * followed here, not by fetch (at most MAX_REDIRECTS, each hop checked, only to http(s)), so a server
 * cannot send the registry on to a host the policy refuses. Credential headers are dropped when a
 * redirect changes the origin. 301/302 turn a POST into a GET and 303 anything but HEAD, as browsers
 * do; 307/308 send the same request again, so `init.body` must be resendable (bytes or a string).
 */
export function outboundFetch(policy: OutboundPolicy, base: Fetch = fetch): Fetch {
  return async (url, init = {}) => {
    let current = new URL(url)
    let method = (init.method ?? 'GET').toUpperCase()
    let body = init.body
    const headers = new Headers(init.headers)
    for (let hop = 0; ; hop++) {
      policy.require(current)
      const response = await base(current.href, { ...init, method, body, headers, redirect: 'manual' })
      const location = response.headers.get('location')
      if (!REDIRECTS.has(response.status) || location === null) return response
      await response.body?.cancel().catch(() => undefined)
      let next: URL
      try {
        next = new URL(location, current)
      } catch {
        throw new OutboundRefused(`${current.origin} redirected to an invalid URL`)
      }
      if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new OutboundRefused(`${current.origin} redirected to a ${next.protocol} URL`)
      if (hop >= MAX_REDIRECTS) throw new OutboundRefused(`more than ${MAX_REDIRECTS} redirects from ${new URL(url).origin}`)
      if (!policy.allows(next)) {
        throw new OutboundRefused(`${current.origin} redirected to '${hostOf(next)}', which is not in REGISTRY_OUTBOUND_HOSTS`)
      }
      if (next.origin !== current.origin) for (const name of CREDENTIAL_HEADERS) headers.delete(name)
      if ((response.status === 303 && method !== 'HEAD') || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = 'GET'
        body = undefined
        headers.delete('content-type')
        headers.delete('content-length')
      }
      current = next
    }
  }
}
