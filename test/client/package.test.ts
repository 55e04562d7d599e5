/**
 * The typed client is published as the package's `./client` export (issue 18, item 9): the built entry,
 * reached through that export, talks to a real registry; and another TypeScript project that imports
 * `api-registry/client` gets the registry's paths and bodies checked by tsc.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { tempDir } from '../temp.js'
import { nodeCommand, ROOT, startServer, userEnv } from '../process/spawn.js'

const run = promisify(execFile)

const PETS_YAML = 'openapi: 3.1.0\ninfo:\n  title: Pets\n  version: 1.0.0\npaths:\n  /pets:\n    get:\n      responses:\n        "200":\n          description: the pets\n'

/** A loopback port nothing listens on (one the system just gave out and took back). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })
}

t.test("the package's ./client export, built, against a running registry", async (t) => {
  const entry = import.meta.resolve('api-registry/client')
  t.equal(entry, pathToFileURL(join(ROOT, 'dist/client/index.js')).href, 'api-registry/client is the built entry')
  // The built module, typed by its source (what the export's declarations are emitted from).
  const client: typeof import('../../src/client/index.js') = await import(entry)

  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const server = await startServer(storage)
  t.teardown(() => server.stop('SIGKILL'))
  const registry = client.createRegistryClient({ url: `${server.url}/`, key: server.key!, userAgent: 'client-package-test' })

  const created = await registry.POST('/v1/apis', { body: { name: 'Pets', slug: 'pets' } })
  t.equal(created.response.status, 201, JSON.stringify(created.error))
  t.match(created.data?.data, { slug: 'pets', name: 'Pets', current: null })

  const pushed = await registry.POST('/v1/apis/{api}/spec', { params: { path: { api: 'pets' } }, body: { document: PETS_YAML } })
  t.equal(pushed.response.status, 201, JSON.stringify(pushed.error))
  t.match(pushed.data?.data, { number: 1, format: 'yaml', title: 'Pets', checksum: /^sha256:[0-9a-f]{64}$/ })

  const read = await registry.GET('/v1/apis/{api}', { params: { path: { api: 'pets' } } })
  t.equal(read.data?.data.current?.number, 1, 'read back: the current version')
  const yaml = await registry.GET('/v1/apis/{api}/versions/{version}/document', {
    params: { path: { api: 'pets', version: '1' }, query: { format: 'yaml' } }, parseAs: 'text',
  })
  t.equal(yaml.response.headers.get('content-type'), 'application/yaml; charset=utf-8')
  t.match(yaml.data, /^openapi: 3\.1\.0\ninfo:\n {2}title: Pets\n/, 'the document as YAML text')

  const missing = await registry.GET('/v1/apis/{api}', { params: { path: { api: 'nope' } } })
  t.equal(missing.data, undefined)
  t.match(client.problemOf(missing.error), { status: 404, code: 'not_found' }, 'an error answer is its problem+json')
  t.match(client.describeError(missing.response, missing.error), /^404 not_found: /)

  const refused = await client.createRegistryClient({ url: server.url, key: 'sk_wrong' }).GET('/v1/apis')
  t.equal(refused.response.status, 401)
  t.match(client.problemOf(refused.error), { code: 'unauthorized' })

  const port = await closedPort()
  const down = await client.createRegistryClient({ url: `http://127.0.0.1:${port}`, key: server.key! }).GET('/v1/apis').then(() => undefined, (error: unknown) => error)
  t.ok(down instanceof client.RegistryUnreachableError, 'no answer: a RegistryUnreachableError')
  t.match(down, { reason: 'ECONNREFUSED', message: `cannot reach the registry at http://127.0.0.1:${port}: ECONNREFUSED` }, 'that says why')

  // A registry that takes the connection and never answers: timeoutMs ends the wait; the caller's own
  // signal still works beside it, and its abort is the caller's, not an unreachable registry.
  const silent = createServer(() => {}).listen(0, '127.0.0.1')
  t.teardown(() => { silent.close() })
  await new Promise((resolve) => silent.once('listening', resolve))
  const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`
  const patient = client.createRegistryClient({ url: silentUrl, key: server.key!, timeoutMs: 300 })
  const timedOut = await patient.GET('/v1/apis').then(() => undefined, (error: unknown) => error)
  t.ok(timedOut instanceof client.RegistryUnreachableError, 'past timeoutMs: a RegistryUnreachableError')
  t.match(timedOut, { reason: /timeout/i })
  const caller = new AbortController()
  const aborted = patient.GET('/v1/apis', { signal: caller.signal }).then(() => undefined, (error: unknown) => error)
  caller.abort()
  const callerError = await aborted
  t.notOk(callerError instanceof client.RegistryUnreachableError, "the caller's abort is not the registry's")
  t.match(callerError, { name: 'AbortError' })
})

t.test('another TypeScript project imports api-registry/client (as docs/ci.md shows), and tsc checks its calls against the description', async (t) => {
  const project = tempDir('registry-client-consumer-')
  t.teardown(() => rmSync(project, { recursive: true, force: true }))
  // As `npm install` (or `npm link`) of this package would place it.
  mkdirSync(join(project, 'node_modules'))
  symlinkSync(ROOT, join(project, 'node_modules', 'api-registry'), 'dir')
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false,
      types: ['node'], typeRoots: [join(ROOT, 'node_modules/@types')],
    },
    files: ['consumer.ts', 'example.ts'],
  }))
  // The example in docs/ci.md, as written.
  const example = /## A TypeScript client[\s\S]*?```ts\n([\s\S]*?)```/.exec(readFileSync(join(ROOT, 'docs/ci.md'), 'utf8'))?.[1]
  t.ok(example, 'docs/ci.md has the example')
  writeFileSync(join(project, 'example.ts'), example!)
  writeFileSync(join(project, 'consumer.ts'), `import { createRegistryClient, describeError, type Problem } from 'api-registry/client'

const registry = createRegistryClient({ url: 'https://registry.example.com', key: 'sk_example' })
const created = await registry.POST('/v1/apis', { body: { name: 'Pets', visibility: 'public' } })
const slug: string | undefined = created.data?.data.slug
const problem: Problem | undefined = created.error
if (created.error) console.error(describeError(created.response, created.error))
const yaml = await registry.GET('/v1/apis/{api}/spec', { params: { path: { api: 'pets' }, query: { format: 'yaml' } }, parseAs: 'text' })
const text: string | undefined = yaml.data
console.log(slug, problem, text)

// @ts-expect-error: not a path of the registry
await registry.GET('/v1/nothing')
// @ts-expect-error: an API needs a name
await registry.POST('/v1/apis', { body: { slug: 'pets' } })
// @ts-expect-error: the path parameter is {api}
await registry.GET('/v1/apis/{api}', { params: { path: { id: 'pets' } } })
const read = await registry.GET('/v1/apis/{api}', { params: { path: { api: 'pets' } } })
// @ts-expect-error: an API has no such field
console.log(read.data?.data.colour)
`)
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc')
  const result = await run(...nodeCommand([tsc, '-p', join(project, 'tsconfig.json')]), { cwd: project, env: userEnv() })
    .then(() => ({ code: 0, stdout: '' }), (error: { code?: number; stdout?: string }) => ({ code: error.code ?? 1, stdout: error.stdout ?? '' }))
  // Every @ts-expect-error line must be an error, and nothing else may be: an unused one fails too.
  t.equal(result.stdout, '', 'tsc reports nothing')
  t.equal(result.code, 0)
})
