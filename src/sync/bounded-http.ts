/**
 * isomorphic-git's HTTP client, on Node's fetch, with the two bounds a fetch from a repository needs:
 * one deadline for every request of the fetch, and a cap on the bytes received in all. `fetch` may be
 * replaced (the sync worker passes one that checks REGISTRY_OUTBOUND_HOSTS and follows redirects itself).
 */
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git'

/** Thrown when the responses of one fetch together exceed the byte bound. */
export class DownloadTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the repository's download is larger than ${maxBytes} bytes`)
    this.name = 'DownloadTooLarge'
  }
}

async function collect(body: AsyncIterableIterator<Uint8Array> | undefined): Promise<Buffer | undefined> {
  if (!body) return undefined
  const chunks: Uint8Array[] = []
  for await (const chunk of body) chunks.push(chunk)
  return Buffer.concat(chunks)
}

/** The shape of `fetch` this client needs. */
export type Fetch = (url: string, init?: RequestInit) => Promise<Response>

export function boundedHttp(options: { maxBytes: number; signal: AbortSignal; fetch?: Fetch }): HttpClient {
  const fetcher = options.fetch ?? fetch
  let received = 0
  return {
    async request({ url, method = 'GET', headers = {}, body }: GitHttpRequest): Promise<GitHttpResponse> {
      const payload = await collect(body)
      const response = await fetcher(url, { method, headers, body: payload, signal: options.signal, redirect: 'follow' })
      const declared = Number(response.headers.get('content-length') ?? 0)
      if (received + declared > options.maxBytes) {
        await response.body?.cancel()
        throw new DownloadTooLarge(options.maxBytes)
      }
      const reader = response.body?.getReader()
      async function* chunks(): AsyncGenerator<Uint8Array> {
        if (!reader) return
        try {
          for (;;) {
            const { done, value } = await reader.read()
            if (done) return
            received += value.byteLength
            if (received > options.maxBytes) {
              await reader.cancel()
              throw new DownloadTooLarge(options.maxBytes)
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
