/**
 * isomorphic-git's HTTP client, on Node's fetch, with an abort signal: a canceled build stops its
 * clone or push at once instead of waiting for the transfer to end. `fetcher` may replace fetch (the
 * registry passes one that checks REGISTRY_OUTBOUND_HOSTS and follows redirects itself).
 */
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git'

async function collect(body: AsyncIterableIterator<Uint8Array> | Uint8Array[] | undefined): Promise<Buffer | undefined> {
  if (!body) return undefined
  const chunks: Uint8Array[] = []
  for await (const chunk of body as AsyncIterable<Uint8Array>) chunks.push(chunk)
  return Buffer.concat(chunks)
}

export type Fetch = (url: string, init?: RequestInit) => Promise<Response>

export function abortableHttp(signal?: AbortSignal, fetcher: Fetch = fetch): HttpClient {
  return {
    async request(request: GitHttpRequest): Promise<GitHttpResponse> {
      const body = await collect(request.body as AsyncIterableIterator<Uint8Array> | undefined)
      const response = await fetcher(request.url, {
        method: request.method ?? 'GET', headers: request.headers, body, signal, redirect: 'follow',
      })
      const bytes = new Uint8Array(await response.arrayBuffer())
      const headers: Record<string, string> = {}
      response.headers.forEach((value, key) => { headers[key] = value })
      return {
        url: response.url, method: request.method, statusCode: response.status, statusMessage: response.statusText,
        headers, body: (async function* () { yield bytes })(),
      }
    },
  }
}
