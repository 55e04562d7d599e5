/**
 * The one HTTP client for what a key holder configured (repository sync, SDK delivery and the
 * provider's REST API, mirror pushes): fetch under the outbound policy, checked three times.
 *
 * - Before a request: its URL's host (`OutboundPolicy.require`), on the first request and on every
 *   redirect, which is followed here and not by fetch (at most MAX_REDIRECTS, only to http(s)).
 * - At connect time, on the address actually connected to: a host name is resolved by a lookup that
 *   drops every address the policy refuses and fails when none is left, and an IP literal is checked
 *   as it is. A name whose DNS answers 127.0.0.1 (or changes its answer between the check of the URL
 *   and the connection: DNS rebinding) never gets a connection to an internal address.
 * - Credential headers are dropped when a redirect changes the origin.
 *
 * Each `OutboundConnections` has its own connection pool (undici's Agent, the client Node's fetch is
 * built on: its `connect` hook is where the address is checked); close it when the operation ends.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { isIP, type LookupFunction } from 'node:net'
import { Agent, buildConnector, fetch as undiciFetch } from 'undici'
import type { Fetch } from '../../git/git-http.js'
import { MAX_REDIRECTS, OutboundPolicy, OutboundRefused } from './outbound.js'

export type { Fetch }

const REDIRECTS = new Set([301, 302, 303, 307, 308])
/** Headers that carry credentials: never sent on to another origin. */
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'private-token']

export interface OutboundOptions {
  /** Resolves host names (default: the system's, as net.connect does); tests answer what they need. */
  lookup?: LookupFunction
}

/** A lookup that answers only the addresses the policy allows, and fails when it allows none. */
function checkedLookup(policy: OutboundPolicy, lookup: LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, answer) => {
      if (error) return callback(error, '', 0)
      const addresses = answer as LookupAddress[]
      const allowed = addresses.filter((a) => policy.allowsAddress(a.address))
      if (allowed.length === 0) {
        const refused = new OutboundRefused(`'${hostname}' resolved to ${addresses.map((a) => a.address).join(', ') || 'nothing'}, which the outbound policy refuses`)
        return callback(refused as NodeJS.ErrnoException, '', 0)
      }
      if (options.all) callback(null, allowed)
      else callback(null, allowed[0].address, allowed[0].family)
    })
  }
}

export class OutboundConnections {
  readonly #agent: Agent

  constructor(private readonly policy: OutboundPolicy, options: OutboundOptions = {}) {
    const connector = buildConnector({ lookup: checkedLookup(policy, options.lookup ?? dnsLookup) })
    this.#agent = new Agent({
      connect: (connection, callback) => {
        // net.connect does not look up an IP literal: it is checked here.
        if (isIP(connection.hostname) && !policy.allowsAddress(connection.hostname)) {
          callback(new OutboundRefused(`the address ${connection.hostname} is refused by the outbound policy`), null)
          return
        }
        connector(connection, callback)
      },
    })
  }

  /**
   * `fetch` under the policy. 301/302 turn a POST into a GET and 303 anything but HEAD, as browsers
   * do; 307/308 send the same request again, so `init.body` must be resendable (bytes or a string).
   * A refusal at connect time rejects with the OutboundRefused itself, not fetch's "fetch failed".
   * With `init.redirect` 'manual', a redirect is answered as it is, not followed.
   */
  readonly fetch: Fetch = async (url, init = {}) => {
    let current = new URL(url)
    let method = (init.method ?? 'GET').toUpperCase()
    let body = init.body
    const headers = new Headers(init.headers)
    // `redirect: 'manual'` answers a redirect as it is (webhook deliveries follow none).
    const follow = init.redirect !== 'manual'
    for (let hop = 0; ; hop++) {
      this.policy.require(current)
      const response = await this.#send(current, { ...init, method, body, headers, redirect: 'manual' })
      const location = response.headers.get('location')
      if (!follow || !REDIRECTS.has(response.status) || location === null) return response
      await response.body?.cancel().catch(() => undefined)
      let next: URL
      try {
        next = new URL(location, current)
      } catch {
        throw new OutboundRefused(`${current.origin} redirected to an invalid URL`)
      }
      if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new OutboundRefused(`${current.origin} redirected to a ${next.protocol} URL`)
      if (hop >= MAX_REDIRECTS) throw new OutboundRefused(`more than ${MAX_REDIRECTS} redirects from ${new URL(url).origin}`)
      const refusal = this.policy.refusal(next)
      if (refusal !== undefined) throw new OutboundRefused(`${current.origin} redirected to ${next.origin}: ${refusal}`)
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

  async #send(url: URL, init: RequestInit): Promise<Response> {
    try {
      // undici's own fetch with its own Agent: the global fetch is a different copy of undici.
      return await undiciFetch(url, { ...init, dispatcher: this.#agent } as Parameters<typeof undiciFetch>[1]) as unknown as Response
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause
      if (cause instanceof OutboundRefused) throw cause
      throw error
    }
  }

  /** Ends the pool's connections (the operation is over). */
  close(): Promise<void> {
    return this.#agent.destroy()
  }
}

/** Runs `work` with a fetch under the policy, and closes its connections when it ends. */
export async function withOutboundFetch<T>(policy: OutboundPolicy, work: (fetch: Fetch) => Promise<T>, options?: OutboundOptions): Promise<T> {
  const connections = new OutboundConnections(policy, options)
  try {
    return await work(connections.fetch)
  } finally {
    await connections.close()
  }
}
