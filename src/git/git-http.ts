/**
 * isomorphic-git's HTTP client, on Node's fetch: the one client for everything that talks to another git
 * server (repository sync, SDK delivery, mirror pushes). An abort signal ends a transfer at once (a
 * canceled build, a sync past its deadline); `maxBytes` caps the bytes received over all the requests
 * of one client (a sync's download); `fetch` may be replaced (the registry passes one that checks
 * REGISTRY_OUTBOUND_HOSTS and follows redirects itself).
 */
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git'

/** The shape of `fetch` the git clients and the provider calls need. */
export type Fetch = (url: string, init?: RequestInit) => Promise<Response>

/** Thrown when the responses of one client together exceed its byte bound. */
export class DownloadTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the repository's download is larger than ${maxBytes} bytes`)
    this.name = 'DownloadTooLarge'
  }
}

export interface GitHttpOptions {
  signal?: AbortSignal
  fetch?: Fetch
  /** Bytes received in all, over every request of this client; unbounded when absent. */
  maxBytes?: number
}

/**
 * A response body as text, read until `maxBytes` and no further. fetch inflates a gzip or brotli
 * answer as it is read, so a body's declared length says nothing of what it grows to: the inflated
 * bytes are counted, and reading stops (and the transfer is cancelled) past the bound.
 */
export async function readText(response: Response, maxBytes: number): Promise<string> {
  const chunks: Uint8Array[] = []
  let length = 0
  for await (const chunk of response.body ?? []) {
    length += chunk.byteLength
    // Leaving the loop cancels the transfer.
    if (length > maxBytes) throw new DownloadTooLarge(maxBytes)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

async function collect(body: AsyncIterableIterator<Uint8Array> | Uint8Array[] | undefined): Promise<Buffer | undefined> {
  if (!body) return undefined
  const chunks: Uint8Array[] = []
  for await (const chunk of body as AsyncIterable<Uint8Array>) chunks.push(chunk)
  return Buffer.concat(chunks)
}

export function gitHttp(options: GitHttpOptions = {}): HttpClient {
  const fetcher = options.fetch ?? fetch
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY
  let received = 0
  return {
    async request({ url, method = 'GET', headers = {}, body }: GitHttpRequest): Promise<GitHttpResponse> {
      const payload = await collect(body as AsyncIterableIterator<Uint8Array> | undefined)
      const response = await fetcher(url, { method, headers, body: payload, signal: options.signal, redirect: 'follow' })
      const declared = Number(response.headers.get('content-length') ?? 0)
      if (received + declared > maxBytes) {
        await response.body?.cancel()
        throw new DownloadTooLarge(maxBytes)
      }
      const reader = response.body?.getReader()
      async function* chunks(): AsyncGenerator<Uint8Array> {
        if (!reader) return
        try {
          for (;;) {
            const { done, value } = await reader.read()
            if (done) return
            received += value.byteLength
            if (received > maxBytes) {
              await reader.cancel()
              throw new DownloadTooLarge(maxBytes)
            }
            yield value
          }
        } finally {
          reader.releaseLock()
        }
      }
      return {
        url: response.url,
        method,
        statusCode: response.status,
        statusMessage: response.statusText,
        headers: Object.fromEntries(response.headers.entries()),
        body: chunks(),
      }
    },
  }
}
