/**
 * The addresses and names the outbound policy treats as internal: what the server must not reach for
 * a key holder unless its operator says so. Loopback, unspecified, link-local (where cloud metadata
 * services answer: 169.254.169.254), private (RFC 1918), shared (carrier-grade NAT, where Alibaba's
 * metadata answers), unique-local IPv6 (AWS's fd00:ec2::254), and the reserved, documentation,
 * benchmarking and multicast ranges no git server lives in. An IPv6 address that carries an IPv4
 * address (IPv4-mapped `::ffff:127.0.0.1`, NAT64, 6to4) is judged by the IPv4 address it carries.
 */
import ipaddr from 'ipaddr.js'

export type Address = ipaddr.IPv4 | ipaddr.IPv6

/** A CIDR range (an address is a range of 32 or 128 bits). */
export interface AddressRange {
  address: Address
  bits: number
}

const range = (cidr: string): AddressRange => {
  const [address, bits] = ipaddr.parseCIDR(cidr)
  return { address, bits }
}

/** Internal IPv4 ranges, with what an error calls them. */
const IPV4_INTERNAL: [AddressRange, string][] = ([
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared (carrier-grade NAT)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', 'reserved'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
] as const).map(([cidr, kind]) => [range(cidr), kind])

/** Internal IPv6 ranges (the first match names it). */
const IPV6_INTERNAL: [AddressRange, string][] = ([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'IPv4-compatible'],
  ['64:ff9b:1::/48', 'local-use NAT64'],
  ['100::/64', 'discard-only'],
  ['2001:db8::/32', 'documentation'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
] as const).map(([cidr, kind]) => [range(cidr), kind])

/** IPv6 prefixes that carry an IPv4 address, and where in the 16 bytes it sits. */
const IPV4_CARRIERS: [AddressRange, number][] = [
  [range('::ffff:0:0/96'), 12], // IPv4-mapped
  [range('::ffff:0:0:0/96'), 12], // IPv4-translated (SIIT)
  [range('64:ff9b::/96'), 12], // NAT64, well-known prefix
  [range('2002::/16'), 2], // 6to4
]

/** Host names that only ever mean something inside a network: reserved suffixes and metadata services. */
const INTERNAL_SUFFIXES = ['localhost', 'localdomain', 'local', 'internal', 'home.arpa']
const INTERNAL_NAMES = new Set(['metadata.goog'])

/** The address in a host or lookup result (`[::1]`, `::1%eth0` and `127.0.0.1` alike); undefined when it is none. */
export function parseAddress(text: string): Address | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text
  const address = bare.replace(/%.*$/, '')
  if (!ipaddr.isValid(address)) return undefined
  // Only the dotted-quad form is an IPv4 address here (the URL parser has already turned `127.1` into it).
  if (!address.includes(':') && !ipaddr.IPv4.isValidFourPartDecimal(address)) return undefined
  return canonical(ipaddr.parse(address))
}

/** An IPv4-mapped IPv6 address is the IPv4 address: one connection reaches either. */
function canonical(address: Address): Address {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address
}

/** Parses `10.0.0.0/8`, `fd00::/8` or `[fd00::]/8`; undefined when the text is not a CIDR range. */
export function parseRange(text: string): AddressRange | undefined {
  const match = /^\[?([^\]/]+)\]?\/(\d{1,3})$/.exec(text)
  if (!match || !ipaddr.isValidCIDR(`${match[1]}/${match[2]}`)) return undefined
  const [address, bits] = ipaddr.parseCIDR(`${match[1]}/${match[2]}`)
  const network = address.kind() === 'ipv4'
    ? ipaddr.IPv4.networkAddressFromCIDR(`${match[1]}/${bits}`)
    : ipaddr.IPv6.networkAddressFromCIDR(`${match[1]}/${bits}`)
  if (network.kind() === 'ipv6' && (network as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    return { address: (network as ipaddr.IPv6).toIPv4Address(), bits: bits - 96 }
  }
  return { address: network, bits }
}

/** `10.0.0.0/8`, `fd00::/8`; a single address without its length (`10.0.0.7`, `[::1]`). */
export function formatRange({ address, bits }: AddressRange): string {
  const full = address.kind() === 'ipv4' ? 32 : 128
  const text = address.kind() === 'ipv4' ? address.toString() : (address as ipaddr.IPv6).toRFC5952String()
  if (bits === full) return address.kind() === 'ipv4' ? text : `[${text}]`
  return `${text}/${bits}`
}

export function inRange(address: Address, { address: network, bits }: AddressRange): boolean {
  return address.kind() === network.kind() && address.match(network, bits)
}

/** What kind of internal address this is ('loopback', 'private'…); undefined for a public one. */
export function internalKind(address: Address): string | undefined {
  if (address.kind() === 'ipv4') return IPV4_INTERNAL.find(([r]) => inRange(address, r))?.[1]
  const carrier = IPV4_CARRIERS.find(([r]) => inRange(address, r))
  if (carrier) {
    const bytes = address.toByteArray().slice(carrier[1], carrier[1] + 4)
    const kind = internalKind(new ipaddr.IPv4(bytes))
    return kind && `${kind} (as IPv6)`
  }
  return IPV6_INTERNAL.find(([r]) => inRange(address, r))?.[1]
}

/** Whether a host name (lower case, no trailing dot) can only name something inside a network. */
export function isInternalName(host: string): boolean {
  if (!host.includes('.')) return true // `metadata`, `instance-data`, `gitlab`: resolved through search domains
  return INTERNAL_NAMES.has(host) || INTERNAL_SUFFIXES.some((suffix) => host === suffix || host.endsWith(`.${suffix}`))
}
