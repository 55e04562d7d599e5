/**
 * A git server (git-http-server.ts) for one test, in a directory of its own, optionally behind a proxy
 * that decides what becomes of each request: the replica tests use the proxy to see when fetches run,
 * or to hold a request while they kill the replica that made it. Proxy, server and directory are
 * closed and removed when the test ends.
 */
import { rmSync } from 'node:fs'
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { tempDir } from '../temp.js'
import { startGitHttpServer, type GitHttpServer } from './git-http-server.js'

export interface GitServerForTest {
  /** The git server itself: `git.requests` are the requests that reached it (not those the proxy held). */
  git: GitHttpServer
  /** Where clients reach it (the proxy, when there is one): repositories are `${url}/<name>.git`. */
  url: string
}

/**
 * What the proxy does with a request: `passOn` forwards it to the git server and relays the answer,
 * calling `answered` once the answer has been relayed in full. A route that does not call `passOn`
 * holds the request (it may end `outgoing` itself).
 */
export type ProxyRoute = (incoming: IncomingMessage, outgoing: ServerResponse, passOn: (answered?: () => void) => void) => void

export async function startGitServerForTest(t: Test, options: { prefix: string; proxy?: ProxyRoute }): Promise<GitServerForTest> {
  const root = tempDir(options.prefix)
  const git = await startGitHttpServer(root)
  t.teardown(async () => {
    await git.close()
    rmSync(root, { recursive: true, force: true })
  })
  if (!options.proxy) return { git, url: git.url }
  return { git, url: await startProxy(t, git, options.proxy) }
}

/** Starts a proxy to `git` that routes each request by `route`; answers its URL. */
async function startProxy(t: Test, git: GitHttpServer, route: ProxyRoute): Promise<string> {
  const origin = new URL(git.url)
  const proxy = createServer((incoming, outgoing) => {
    route(incoming, outgoing, (answered = () => {}) => {
      const forwarded = httpRequest({ host: origin.hostname, port: origin.port, method: incoming.method, path: incoming.url, headers: incoming.headers }, (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
        answer.on('end', answered)
      })
      forwarded.on('error', () => outgoing.destroy())
      incoming.pipe(forwarded)
    })
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  // tap runs teardowns last registered first: the proxy closes before the git server behind it.
  t.teardown(async () => {
    proxy.closeAllConnections()
    await new Promise((resolve) => proxy.close(resolve))
  })
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
}
