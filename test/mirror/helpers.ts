/** Shared by the mirror tests: the real git CLI, driven asynchronously, and a listening test server. */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { json, startTestServer, type TestServer } from '../helpers.js'

const run = promisify(execFile)

/** Runs git; never prompts for credentials; answers stdout, or throws with stderr. */
export async function git(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<string> {
  const { stdout } = await run('git', args, {
    cwd: options.cwd, maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent', ...options.env },
  })
  return stdout
}

/** Like `git`, but answers the exit status and stderr instead of throwing. */
export async function gitStatus(args: string[], options: { cwd?: string } = {}): Promise<{ code: number; stderr: string }> {
  try {
    await git(args, options)
    return { code: 0, stderr: '' }
  } catch (error) {
    const failed = error as { code?: number; stderr?: string }
    return { code: typeof failed.code === 'number' ? failed.code : 1, stderr: failed.stderr ?? '' }
  }
}

export interface MirrorServer extends TestServer {
  /** `127.0.0.1:PORT` of the listening server. */
  host: string
  /** Requests seen by the server (method and URL), for asserting what a git client asked for. */
  requests: { method: string; url: string }[]
  /** Waits until the mirror has applied everything journaled so far. */
  settle(): Promise<void>
  createApi(name: string): Promise<{ id: string; slug: string }>
  upload(apiId: string, document: unknown): Promise<{ id: string; number: number; checksum: string; created_at: string }>
}

export async function startMirrorServer(options: { storage?: string; outboundHosts?: string[]; databaseUrl?: string } = {}): Promise<MirrorServer> {
  const s = await startTestServer({ storage: options.storage, outboundHosts: options.outboundHosts, databaseUrl: options.databaseUrl })
  const requests: { method: string; url: string }[] = []
  s.app.addHook('onRequest', async (request) => { requests.push({ method: request.method, url: request.url }) })
  s.registry.mirror!.start({ warn: () => undefined })
  const address = await s.app.listen({ port: 0, host: '127.0.0.1' })
  // On storage that already has `acme`, the helper creates no key: issue one.
  const key = s.key || (await s.registry.organizations.createKey('acme')).secret
  const call: TestServer['call'] = ({ key: callKey, ...request }) => s.call({ ...request, key: callKey === undefined ? key : callKey })
  return {
    ...s,
    key,
    call,
    host: address.replace('http://', ''),
    requests,
    settle: () => s.registry.mirror!.idle(),
    async createApi(name) {
      const response = await call({ method: 'POST', url: '/v1/apis', payload: { name } })
      if (response.statusCode !== 201) throw new Error(`create: ${response.statusCode} ${response.body}`)
      return json(response).data
    },
    async upload(apiId, document) {
      const response = await call({
        method: 'POST', url: `/v1/apis/${apiId}/spec`,
        ...(typeof document === 'string' ? { headers: { 'content-type': 'application/yaml' }, payload: document } : { payload: { document } }),
      })
      if (response.statusCode !== 201) throw new Error(`upload: ${response.statusCode} ${response.body}`)
      return json(response).data
    },
  }
}
