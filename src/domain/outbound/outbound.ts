/**
 * The outbound policy: where the server may connect for repository sync, SDK delivery and mirror
 * pushes, the only features that reach URLs a key holder configured. By default any public host, and
 * never an internal one (loopback, link-local and cloud metadata, private, unique-local: see
 * outbound-addresses.ts), so that a key cannot make the server reach its own network.
 *
 * REGISTRY_OUTBOUND_HOSTS (comma-separated) changes that. Its entries:
 * - `github.com`: exactly that host; `*.example.com`: any subdomain of example.com (not itself);
 * - `10.0.0.7`, `[::1]`: that address; `10.0.0.0/8`, `fd00::/8`: that range;
 * - `*`: any public host (what an empty list means).
 * A list without `*` allows only what it names. Internal addresses are reached only when an address
 * or range entry covers them: a name entry says which hosts may be asked for, not which networks, so
 * a listed name that resolves to an internal address is still refused (DNS is checked at connect
 * time, by outbound-fetch.ts). Internal names (`localhost`, `*.internal`, `metadata`…) are refused by
 * name too unless an entry names them. Matching is case-insensitive and ignores ports; hosts are
 * compared as the WHATWG URL parser normalizes them (the parser fetch uses), so `http://127.1/` is
 * `127.0.0.1` and `BÜCHER.de` is `xn--bcher-kva.de`, in entries and URLs alike.
 *
 * This module is data and rules only, so that the sync worker threads rebuild the policy from `hosts`.
 */
import { RegistryError } from '../../errors.js'
import {
  formatRange, inRange, internalKind, isInternalName, parseAddress, parseRange, type Address, type AddressRange,
} from './outbound-addresses.js'

/** Redirects followed per request, at most. */
export const MAX_REDIRECTS = 5

/** All a key holder is told when a connection is refused; the operator's log says why. */
export const REFUSED = 'refused by the outbound policy'
/** All a key holder is told when a connection failed otherwise: never a port, a status or a protocol. */
export const UNREACHABLE = "unreachable (the server's log says why)"

/** Thrown before or at connect time for a host or address the policy refuses; the message is for the operator. */
export class OutboundRefused extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'OutboundRefused'
  }
}

/**
 * A failed outbound step. `message` is what a key holder sees (the step, then REFUSED or UNREACHABLE),
 * `reason` what the operator's log gets: the port that was closed, the status that was answered, the
 * body that came with it. Telling key holders that much would make the server their port scanner.
 */
export class OutboundFailure extends Error {
  constructor(message: string, readonly reason: string) {
    super(message)
    this.name = 'OutboundFailure'
  }
}

/** The failure of `step` (e.g. `could not push to https://…`), from what it threw. */
export function outboundFailure(step: string, error: unknown): OutboundFailure {
  if (error instanceof OutboundFailure) return error
  const outcome = (error as Error | undefined)?.name === 'OutboundRefused' ? REFUSED : UNREACHABLE
  return new OutboundFailure(`${step}: ${outcome}`, describeError(error))
}

/** An error with its causes and what isomorphic-git keeps of an HTTP answer, for the operator's log. */
export function describeError(error: unknown): string {
  const parts: string[] = []
  for (let e = error as { name?: string; code?: string; message?: string; cause?: unknown; data?: Record<string, unknown> } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e !== 'object') {
      parts.push(String(e))
      break
    }
    const answer = e.data && typeof e.data === 'object'
      ? [e.data.statusCode && `HTTP ${String(e.data.statusCode)}`, typeof e.data.response === 'string' && e.data.response].filter(Boolean).join(': ')
      : ''
    parts.push([e.code ?? e.name, e.message, answer].filter(Boolean).join(': '))
  }
  return parts.join('; caused by ') || 'unknown error'
}

type Entry =
  | { kind: 'any' }
  | { kind: 'name'; host: string; subdomains: boolean }
  | { kind: 'range'; range: AddressRange }

/** A host as compared: lower case (the parser's), without one trailing dot (`github.com.` is github.com). */
function comparable(hostname: string): string {
  return hostname.endsWith('.') ? hostname.slice(0, -1) : hostname
}

/** One entry of the list, normalized; throws an Error saying what is wrong with it. */
function parseEntry(raw: string): Entry {
  const bad = (why: string) => new Error(`REGISTRY_OUTBOUND_HOSTS: '${raw}' ${why}`)
  let text = raw.toLowerCase()
  if (text === '*') return { kind: 'any' }
  if (text.includes('://')) throw bad('is a URL: list the host alone (e.g. github.com)')
  if (text.includes('/')) {
    const range = parseRange(text)
    if (!range) throw bad('is not a host name, IP address or CIDR range (e.g. 10.0.0.0/8)')
    return { kind: 'range', range }
  }
  const subdomains = text.startsWith('*.')
  if (subdomains) text = text.slice(2)
  if (text.includes('*')) throw bad("has a '*' that is not the first label: only '*' alone or '*.example.com' is supported")
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
  const address = parseAddress(host)
  if (address && subdomains) throw bad("is an IP address: '*.' applies to domain names only")
  if (address) return { kind: 'range', range: { address, bits: address.kind() === 'ipv4' ? 32 : 128 } }
  return { kind: 'name', host, subdomains }
}

function formatEntry(entry: Entry): string {
  if (entry.kind === 'any') return '*'
  if (entry.kind === 'range') return formatRange(entry.range)
  return entry.subdomains ? `*.${entry.host}` : entry.host
}

/** The normalized entries of a REGISTRY_OUTBOUND_HOSTS value (comma-separated); empty: any public host. */
export function parseOutboundHosts(text: string | undefined): string[] {
  if (!text) return []
  const entries = text.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')
  return [...new Set(entries.map(parseEntry).map(formatEntry))]
}

function hostOf(url: string | URL): string | undefined {
  try {
    return comparable((typeof url === 'string' ? new URL(url) : url).hostname)
  } catch {
    return undefined
  }
}

export class OutboundPolicy {
  /** Without REGISTRY_OUTBOUND_HOSTS: any public host, no internal one. */
  static readonly DEFAULT = new OutboundPolicy([])

  /** A policy of (normalized or raw) entries; an empty list is the default. Throws on a bad entry. */
  static of(hosts: readonly string[]): OutboundPolicy {
    return hosts.length === 0 ? OutboundPolicy.DEFAULT : new OutboundPolicy(hosts)
  }

  readonly #entries: Entry[]
  readonly #names: Extract<Entry, { kind: 'name' }>[]
  readonly #ranges: AddressRange[]
  /** Whether only what the list names is allowed (no `*`, not empty). */
  readonly restricted: boolean

  private constructor(hosts: readonly string[]) {
    this.#entries = hosts.map(parseEntry)
    this.#names = this.#entries.filter((e) => e.kind === 'name')
    this.#ranges = this.#entries.flatMap((e) => (e.kind === 'range' ? [e.range] : []))
    this.restricted = this.#entries.length > 0 && !this.#entries.some((e) => e.kind === 'any')
  }

  /** The normalized entries (data a worker thread rebuilds the policy from); empty: the default. */
  get hosts(): string[] {
    return this.#entries.map(formatEntry)
  }

  /** Why a URL's host is refused, as told to whoever configures it; undefined when it is allowed. */
  refusal(url: string | URL): string | undefined {
    const host = hostOf(url)
    if (host === undefined) return 'is not a valid URL'
    const address = parseAddress(host)
    if (address ? this.#listed(address) : this.#names.some((entry) => nameMatches(entry, host))) return undefined
    if (this.restricted) return `the host '${host}' is not in this server's REGISTRY_OUTBOUND_HOSTS`
    const internal = address ? internalKind(address) : isInternalName(host) ? 'internal name' : undefined
    if (internal === undefined) return undefined
    return `the host '${host}' is ${address ? `a ${internal} address` : 'an internal name'}, refused unless this server's REGISTRY_OUTBOUND_HOSTS lists it`
  }

  /** Whether the server may connect to this URL's host (its name, or the address it is). */
  allows(url: string | URL): boolean {
    return this.refusal(url) === undefined
  }

  /**
   * Whether the server may connect to this address, which a host name resolved to or a URL named:
   * a public one, or one an address or range entry covers. Checked at connect time.
   */
  allowsAddress(text: string): boolean {
    const address = parseAddress(text)
    return address !== undefined && (this.#listed(address) || internalKind(address) === undefined)
  }

  #listed(address: Address): boolean {
    return this.#ranges.some((range) => inRange(address, range))
  }

  /** Refuses a URL being configured in `field` (400 invalid_request, naming the field). */
  check(url: string, field: string): void {
    const refusal = this.refusal(url)
    if (refusal === undefined) return
    throw new RegistryError('invalid_request', `${field}: ${refusal}`, [{ path: [field], message: refusal }])
  }

  /**
   * A stored URL (a connection, an output repository, a mirror remote) the policy refuses since it
   * changed: `refused by the outbound policy (url: the host … is not in …)`; undefined when allowed.
   */
  storedRefusal(url: string, field: string): string | undefined {
    const refusal = this.refusal(url)
    return refusal === undefined ? undefined : `${REFUSED} (${field}: ${refusal})`
  }

  /** Refuses a connection about to be made (OutboundRefused, with the reason for the operator's log). */
  require(url: string | URL): void {
    const refusal = this.refusal(url)
    if (refusal !== undefined) throw new OutboundRefused(`${String(url)}: ${refusal}`)
  }
}

function nameMatches(entry: Extract<Entry, { kind: 'name' }>, host: string): boolean {
  return entry.subdomains ? host.length > entry.host.length + 1 && host.endsWith(`.${entry.host}`) : host === entry.host
}
