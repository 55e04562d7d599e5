/**
 * The registry's own description passes Redocly CLI's `recommended` ruleset without an error, and every
 * operation says what clients generated from it need (issue 18, item 8): an operationId, tags the
 * document declares, its security (an empty list for a route that takes no key), and its errors as
 * problem+json. What the routes really send is checked by test/process/openapi-prism.test.ts.
 */
import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { json, startTestServer } from '../helpers.js'
import { nodeCommand, ROOT, userEnv } from '../process/spawn.js'

const run = promisify(execFile)
const REDOCLY = fileURLToPath(import.meta.resolve('@redocly/cli/bin/cli.js'))
const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'])

interface Problem { ruleId: string; severity: 'error' | 'warn'; message: string; location: { pointer: string }[] }

type Operation = {
  operationId?: string
  tags?: string[]
  security?: Record<string, string[]>[]
  responses: Record<string, { content?: Record<string, unknown> }>
}

t.test("Redocly's recommended ruleset finds no error in /openapi.json", async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const file = join(s.storage, 'openapi.json')
  writeFileSync(file, (await s.app.inject({ method: 'GET', url: '/openapi.json' })).body)
  // No telemetry, no update check: the test talks to nothing but the file.
  const env = userEnv({ REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' })
  const lint = await run(...nodeCommand([REDOCLY, 'lint', '--extends=recommended', '--format=json', file]), { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 })
    .catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '' }))
  const report = JSON.parse(lint.stdout) as { totals: { errors: number; warnings: number }; problems: Problem[] }
  const describe = (p: Problem) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`
  t.same(report.problems.filter((p) => p.severity === 'error').map(describe), [], 'no error')
  t.equal(report.totals.errors, 0)
  // Known and kept (docs/api.md, "The service's own description"): no license (the package is private),
  // and /healthz, /readyz and / have no 4xx answer of their own.
  for (const warning of report.problems.filter((p) => p.severity !== 'error')) t.comment(`warning: ${describe(warning)}`)
})

t.test('every operation has an operationId, declared tags, its security and problem+json errors', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const document = json(await s.app.inject({ method: 'GET', url: '/openapi.json' }))
  const declared = new Set((document.tags as { name: string }[]).map((tag) => tag.name))
  const schemes = new Set(Object.keys(document.components.securitySchemes))
  const operations = Object.entries(document.paths as Record<string, Record<string, Operation>>)
    .flatMap(([path, item]) => Object.entries(item).filter(([method]) => METHODS.has(method)).map(([method, op]) => ({ at: `${method.toUpperCase()} ${path}`, path, op })))
  t.ok(operations.length > 100, `${operations.length} operations`)
  t.same(operations.filter(({ op }) => !op.operationId).map(({ at }) => at), [], 'an operationId')
  t.same(operations.filter(({ op }) => !op.tags?.length || !op.tags.every((tag) => declared.has(tag))).map(({ at }) => at), [], 'tags the document declares')
  t.same(operations.filter(({ op }) => !Array.isArray(op.security)).map(({ at }) => at), [], 'security, explicitly')
  t.same(operations.filter(({ op }) => op.security!.some((requirement) => Object.keys(requirement).some((name) => !schemes.has(name)))).map(({ at }) => at), [],
    'only schemes the document defines')
  t.same(operations.filter(({ path, op }) => path.startsWith('/v1/') && path !== '/v1/session' && !op.security!.some((r) => 'bearer' in r)).map(({ at }) => at), [],
    'every /v1 route but signing in takes a key')
  const htmlErrors = new Set(['text/html'])
  const notProblems = operations.flatMap(({ at, op }) => Object.entries(op.responses)
    .filter(([status]) => status === 'default' || Number(status) >= 400)
    .flatMap(([status, response]) => Object.keys(response.content ?? {}).filter((type) => type !== 'application/problem+json' && !htmlErrors.has(type))
      .map((type) => `${at} ${status}: ${type}`)))
  t.same(notProblems, [], 'errors are problem+json (or a page for a browser)')
  t.same(operations.filter(({ op }) => !op.responses.default).map(({ at }) => at), [], 'a default answer for the statuses every route may give')

  const upload = document.paths['/v1/apis/{api}/spec'].post
  t.same(Object.keys(upload.requestBody.content).sort(), ['application/json', 'application/schema+json', 'application/vnd.oai.openapi', 'application/vnd.oai.openapi+json',
    'application/x-yaml', 'application/yaml', 'multipart/form-data', 'text/yaml'], 'every upload type is described')
  t.same(Object.keys(document.paths['/v1/apis/{api}/spec'].get.responses['200'].content), ['application/json', 'application/yaml'], 'documents as JSON or YAML')
  t.same(Object.keys(document.paths['/v1/builds/{build}/logs'].get.responses['200'].content), ['text/plain'], 'build logs as text')
  t.same(Object.keys(document.paths['/v1/builds/{build}/artifact'].get.responses['200'].content), ['application/gzip'], 'artifacts as gzip')
  t.equal(document.paths['/v1/sdks/{sdk}/builds'].post.requestBody.required, false, 'a build request may have no body')
  t.ok(document.paths['/webhooks/github'].post.requestBody.content['application/json'].schema.properties.repository, 'inbound webhook bodies are described')
  t.same(document.paths['/webhooks/github'].post.security, [], 'webhooks take no key: their signature is checked')
  t.same(document.paths['/@{org}/apis/{slug}'].get.security, [{}, { bearer: [] }], 'the public registry takes a key or none')
})
