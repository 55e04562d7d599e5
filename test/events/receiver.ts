/**
 * A webhook receiver for the tests: an HTTP server on loopback that records each request, verifies its
 * Standard Webhooks signature with the specification's own library, and answers as the test says.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'

export interface Received {
  headers: IncomingHttpHeaders
  body: string
  /** The payload when the signature verified with the receiver's secret; undefined otherwise. */
  verified: { type: string; timestamp: string; data: any } | undefined
  /** Set once the receiver's answer was written (false: the connection closed before it). */
  answered: boolean
}

export interface Receiver {
  url: string
  received: Received[]
  /** The secret to verify with (the one the registry showed when the endpoint was made). */
  secret: string | undefined
  /** How to answer each request (default 204); `undefined` leaves it waiting. */
  answer: (request: Received, response: ServerResponse) => void
  /** Resolves when `count` requests have arrived. */
  waitFor(count: number, ms?: number): Promise<Received[]>
  close(): Promise<void>
}

export async function startReceiver(): Promise<Receiver> {
  const waiters: { count: number; resolve: () => void }[] = []
  const receiver: Receiver = {
    url: '',
    received: [],
    secret: undefined,
    answer: (_request, response) => { response.statusCode = 204; response.end() },
    async waitFor(count, ms = 30_000) {
      if (receiver.received.length < count) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`${receiver.received.length} of ${count} deliveries arrived within ${ms} ms`)), ms)
          waiters.push({ count, resolve: () => { clearTimeout(timer); resolve() } })
        })
      }
      return receiver.received
    },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      let verified: Received['verified']
      try {
        verified = receiver.secret ? new Webhook(receiver.secret).verify(body, request.headers as Record<string, string>) as Received['verified'] : undefined
      } catch {
        verified = undefined
      }
      const received: Received = { headers: request.headers, body, verified, answered: false }
      response.on('finish', () => { received.answered = true })
      receiver.received.push(received)
      for (const waiter of waiters.filter((w) => receiver.received.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve()
      }
      receiver.answer(received, response)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
  return receiver
}
