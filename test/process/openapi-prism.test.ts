/**
 * The registry's own description, /openapi.json, against what the server does (issue 18, item 8): a
 * real registry process, and Stoplight Prism in front of it as a validating proxy (`prism proxy
 * --errors`) that checks every request and every answer against the description the server serves.
 * The main workflows go through it: APIs, schemas and rulesets, uploads as JSON, YAML and multipart,
 * dry runs, versions, documents as JSON and YAML, diffs, changelogs, restores, the public registry,
 * sites and their pages, SDK builds with their log and archive, keys, sessions, outbound and inbound
 * webhooks, the mirror and git, and the errors a client meets (401, 403, 404, 409, 422). Prism
 * answers a violation with its own error (or an `sl-violations` header, for an undescribed status);
 * every one is collected and the test fails on any.
 *
 * Prism takes `application/problem+json` for `application/json` (it compares media types without their
 * `+json` suffix), so the test also checks each answer's media type against the ones the description
 * lists for its operation and status, exactly.
 *
 * A request the server must refuse as malformed (a body of a type the route does not take, malformed
 * JSON, an unknown field) breaks the description by definition, so Prism with --errors would answer it
 * itself: those go through a second Prism without --errors, which forwards them and reports in
 * `sl-violations`; there the request's violation is expected and the server's answer must have none.
 */
import { spawn } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { tempDir } from '../helpers.js'
import { nodeCommand, ROOT, startServer, userEnv } from './spawn.js'

const PRISM = fileURLToPath(import.meta.resolve('@stoplight/prism-cli/dist/index.js'))

interface Prism {
  url: string
  output: () => string
  stop: () => Promise<void>
}

/** `prism proxy` on a free port in front of `upstream`, checking against the description in `spec`. */
async function startPrism(spec: string, upstream: string, errors: boolean): Promise<Prism> {
  const args = ['proxy', spec, upstream, '--port', '0', '--host', '127.0.0.1', ...(errors ? ['--errors'] : [])]
  const child = spawn(...nodeCommand([PRISM, ...args]), { cwd: ROOT, env: userEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout!.on('data', (chunk) => { out += chunk })
  child.stderr!.on('data', (chunk) => { out += chunk })
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`prism did not start:\n${out}`)) }, 60_000)
    const check = () => {
      const match = /Prism is listening on (http:\/\/[\d.:]+)/.exec(out)
      if (match) { clearTimeout(timer); resolve(match[1]) }
    }
    child.stdout!.on('data', check)
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`prism exited ${code}:\n${out}`)) })
  })
  return {
    url, output: () => out,
    stop: () => new Promise((resolve) => {
      if (child.exitCode !== null) return resolve()
      child.once('exit', () => resolve())
      child.kill('SIGTERM')
    }),
  }
}

interface Answer {
  status: number
  headers: Headers
  text: string
  json: () => any
}

interface Call {
  headers?: Record<string, string>
  /** A JSON value (sent as application/json), or the raw text or form sent as it is. */
  json?: unknown
  body?: string | FormData
  /** The key to send (default: the admin key); null sends none. */
  key?: string | null
}

/** One violation Prism reported: where (request or response) and what, for the test's failure message. */
interface Violation {
  request: string
  status: number
  violations: unknown
}

type Description = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>> }

/** The operation of the description a request is for: its path template, literal segments first. */
function operationOf(description: Description, method: string, url: string) {
  const path = url.split('?')[0]
  const candidates = Object.entries(description.paths)
    .filter(([template, item]) => item[method.toLowerCase()] !== undefined
      && new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path))
    .sort(([a], [b]) => b.replace(/\{[^}]+\}/g, '').length - a.replace(/\{[^}]+\}/g, '').length)
  return candidates[0]?.[1][method.toLowerCase()]
}

/** What is wrong with the answer's media type, if anything: it must be one its response lists. */
function mediaTypeProblem(description: Description, method: string, url: string, answer: Answer): string | undefined {
  const operation = operationOf(description, method, url)
  if (!operation) return 'no operation of the description'
  const response = operation.responses[String(answer.status)] ?? operation.responses.default
  if (!response) return `status ${answer.status} is not described`
  const type = (answer.headers.get('content-type') ?? '').split(';')[0].trim()
  const listed = Object.keys(response.content ?? {})
  if (listed.length === 0) return answer.text === '' ? undefined : `a body (${type}) where none is described`
  return listed.includes(type) ? undefined : `${type || 'no Content-Type'} is not one of ${listed.join(', ')}`
}

/** Prism's own error answers (a violation with --errors, a route it does not know) name its error types. */
const PRISM_ERROR = /^https:\/\/stoplight\.io\/prism\/errors#/

function reportedViolations(answer: Answer): unknown[] {
  const header = answer.headers.get('sl-violations')
  const found: unknown[] = header ? [header.startsWith('[') ? JSON.parse(header) : header] : []
  if (/problem\+json/.test(answer.headers.get('content-type') ?? '')) {
    const body = answer.json()
    if (PRISM_ERROR.test(String(body?.type))) found.push(body)
  }
  return found
}

function client(base: string, defaultKey: string) {
  return async (method: string, path: string, call: Call = {}): Promise<Answer> => {
    const key = call.key === undefined ? defaultKey : call.key
    const headers: Record<string, string> = { 'accept-encoding': 'identity', ...(key === null ? {} : { authorization: `Bearer ${key}` }), ...call.headers }
    let body: string | FormData | undefined = call.body
    if (call.json !== undefined) {
      body = JSON.stringify(call.json)
      headers['content-type'] ??= 'application/json'
    }
    const response = await fetch(`${base}${path}`, { method, headers, body, redirect: 'manual' })
    const text = await response.text()
    return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) }
  }
}

const petstore = (version: string, extra: Record<string, unknown> = {}) => ({
  openapi: '3.1.0',
  info: { title: 'Petstore', version, description: 'Pets.', contact: { name: 'Pets team' }, ...extra },
  paths: {
    '/pets': {
      get: {
        operationId: 'listPets', summary: 'List pets', description: 'Every pet.', tags: ['pets'],
        responses: { 200: { description: 'the pets', content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Pet' } } } } } },
      },
    },
  },
  tags: [{ name: 'pets', description: 'Pets' }],
  components: { schemas: { Pet: { type: 'object', required: ['id'], properties: { id: { type: 'integer' }, name: { type: 'string' } } } } },
})

/** Version 2 as YAML: a new optional query parameter (a non-breaking change). */
const PETSTORE_V2_YAML = `# the second version
openapi: 3.1.0
info:
  title: Petstore
  version: 2.0.0
  description: Pets.
  contact:
    name: Pets team
paths:
  /pets:
    get:
      operationId: listPets
      summary: List pets
      description: Every pet.
      tags: [pets]
      parameters:
        - name: limit
          in: query
          schema: { type: integer }
      responses:
        '200':
          description: the pets
          content:
            application/json:
              schema:
                type: array
                items: { $ref: '#/components/schemas/Pet' }
tags:
  - name: pets
    description: Pets
components:
  schemas:
    Pet:
      type: object
      required: [id]
      properties:
        id: { type: integer }
        name: { type: string }
`

const PET_SCHEMA = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { name: { type: 'string' } } }

/** Blocks (at warn) a document without a contact; reports (info) one without a license, which none has. */
const RULESET_YAML = `extends: [[spectral:oas, off]]
rules:
  info-contact:
    given: $.info
    severity: warn
    message: info needs a contact
    then: { field: contact, function: truthy }
  info-license:
    given: $.info
    severity: info
    message: info should name a license
    then: { field: license, function: truthy }
`

t.test('the main workflows through Prism: no request or answer breaks /openapi.json', async (t) => {
  const storage = tempDir()
  const server = await startServer(storage)
  t.teardown(async () => { await server.stop(); rmSync(storage, { recursive: true, force: true }) })
  const admin = server.key!
  const spec = join(storage, 'openapi.json')
  const served = await (await fetch(`${server.url}/openapi.json`)).text()
  writeFileSync(spec, served)
  const description = JSON.parse(served) as Description
  const [strict, lenient] = await Promise.all([startPrism(spec, server.url, true), startPrism(spec, server.url, false)])
  t.teardown(() => Promise.all([strict.stop(), lenient.stop()]))

  const violations: Violation[] = []
  const direct = client(strict.url, admin)
  /** A request through the strict proxy: its status must be `expected`, and Prism must report nothing. */
  const call = async (expected: number, method: string, path: string, options: Call = {}): Promise<Answer> => {
    const answer = await direct(method, path, options)
    const reported = reportedViolations(answer)
    const mediaType = reported.length === 0 ? mediaTypeProblem(description, method, path, answer) : undefined
    if (mediaType) reported.push(mediaType)
    if (reported.length > 0) violations.push({ request: `${method} ${path}`, status: answer.status, violations: reported })
    else t.equal(answer.status, expected, `${method} ${path}: ${answer.status}${answer.status === expected ? '' : ` ${answer.text.slice(0, 300)}`}`)
    return answer
  }

  // The service itself.
  await call(200, 'GET', '/healthz', { key: null })
  await call(200, 'GET', '/readyz', { key: null })
  await call(200, 'GET', '/', { key: null })
  t.match((await call(200, 'GET', '/', { key: null, headers: { accept: 'text/html' } })).headers.get('content-type'), /^text\/html/)
  t.match((await call(200, 'GET', '/metrics', { key: null })).text, /registry_http_requests_total/)

  // Keys: a write key for the workflows, a read key for a refusal.
  const writeKey = (await call(201, 'POST', '/v1/keys', { json: { name: 'ci', role: 'write' } })).json().data
  const readKey = (await call(201, 'POST', '/v1/keys', { json: { name: 'reader', role: 'read' } })).json().data
  await call(200, 'GET', '/v1/keys')
  await call(200, 'GET', `/v1/keys/${readKey.id}`)
  const w = { key: writeKey.api_key as string }

  // A console session: its cookie, its CSRF token, a change refused without it.
  const signIn = await call(201, 'POST', '/v1/session', { key: null, json: { api_key: admin } })
  const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]
  const session = (await call(200, 'GET', '/v1/session', { key: null, headers: { cookie } })).json().data
  await call(403, 'POST', '/v1/apis', { key: null, headers: { cookie }, json: { name: 'Refused' } })

  // APIs: create, list, read, update; a conflict and a read key's refusal.
  const api = (await call(201, 'POST', '/v1/apis', { ...w, json: { name: 'Petstore', visibility: 'public' } })).json().data
  await call(409, 'POST', '/v1/apis', { ...w, json: { name: 'Petstore', slug: 'petstore' } })
  await call(403, 'POST', '/v1/apis', { key: readKey.api_key, json: { name: 'Refused' } })
  await call(200, 'GET', '/v1/apis?q=pet&sort=-name')
  await call(200, 'GET', '/v1/apis/petstore')
  await call(200, 'PATCH', '/v1/apis/petstore', { ...w, json: { description: 'Our pets' } })

  // Uploads in every way a document is sent; the same content again is 200.
  await call(201, 'POST', '/v1/apis/petstore/spec', { ...w, json: petstore('1.0.0') })
  await call(200, 'POST', '/v1/apis/petstore/spec', { ...w, json: { document: petstore('1.0.0') } })
  await call(200, 'POST', '/v1/apis/petstore/spec', { ...w, body: JSON.stringify(petstore('1.0.0')), headers: { 'content-type': 'application/vnd.oai.openapi+json' } })
  await call(201, 'POST', '/v1/apis/petstore/spec', { ...w, body: PETSTORE_V2_YAML, headers: { 'content-type': 'application/yaml' } })
  for (const type of ['application/x-yaml', 'text/yaml', 'application/vnd.oai.openapi']) {
    await call(200, 'POST', '/v1/apis/petstore/spec', { ...w, body: PETSTORE_V2_YAML, headers: { 'content-type': type } })
  }
  const form = new FormData()
  form.append('document', new Blob([PETSTORE_V2_YAML], { type: 'application/yaml' }), 'openapi.yaml')
  await call(200, 'POST', '/v1/apis/petstore/spec', { ...w, body: form })

  // A ruleset attached with a threshold: a dry run lists findings below it; at it, a dry run and a
  // publish are refused (422 lint_blocked).
  const ruleset = (await call(201, 'POST', '/v1/rulesets', { ...w, json: { name: 'House rules', blocking_severity: 'warn' } })).json().data
  await call(201, 'POST', `/v1/rulesets/${ruleset.id}/document`, { ...w, body: RULESET_YAML, headers: { 'content-type': 'application/yaml' } })
  await call(200, 'PATCH', '/v1/apis/petstore', { ...w, json: { ruleset_id: ruleset.id } })
  const noContact = petstore('3.0.0', { contact: undefined })
  const dryRun = (await call(200, 'POST', '/v1/apis/petstore/spec?dry_run=true', { ...w, json: petstore('3.0.0') })).json().data
  t.match(dryRun, { unchanged: false, findings: [{ code: 'info-license', severity: 'info' }], diff: { summary: { breaking: 1 } } }, 'the dry run lists the finding and the diff')
  await call(200, 'POST', '/v1/apis/petstore/spec?dry_run=true', { ...w, body: PETSTORE_V2_YAML, headers: { 'content-type': 'application/yaml' } })
  await call(422, 'POST', '/v1/apis/petstore/spec?dry_run=true', { ...w, json: noContact })
  t.equal((await call(422, 'POST', '/v1/apis/petstore/spec', { ...w, json: noContact })).json().code, 'lint_blocked')
  await call(422, 'POST', '/v1/apis/petstore/spec', { ...w, json: { openapi: '3.1.0', paths: {} } })
  await call(200, 'POST', `/v1/rulesets/${ruleset.id}/lint`, { ...w, body: PETSTORE_V2_YAML.replace(/ {2}contact:\n {4}name: Pets team\n/, ''), headers: { 'content-type': 'application/yaml' } })

  // Versions and documents: JSON, YAML (by query and by Accept), 304 with the ETag.
  await call(200, 'GET', '/v1/apis/petstore/versions')
  await call(200, 'GET', '/v1/apis/petstore/versions/1')
  await call(200, 'GET', '/v1/apis/petstore/versions/2/findings')
  await call(200, 'GET', '/v1/apis/petstore/versions/2/reference-parts')
  await call(404, 'GET', '/v1/apis/petstore/versions/2/reference-parts/pets')
  const current = await call(200, 'GET', '/v1/apis/petstore/spec')
  t.match(current.headers.get('content-type'), /^application\/json/)
  await call(304, 'GET', '/v1/apis/petstore/spec', { headers: { 'if-none-match': current.headers.get('etag')! } })
  t.match((await call(200, 'GET', '/v1/apis/petstore/spec?format=yaml')).text, /^# the second version/)
  t.match((await call(200, 'GET', '/v1/apis/petstore/versions/1/document', { headers: { accept: 'application/yaml' } })).headers.get('content-type'), /^application\/yaml/)
  await call(200, 'GET', '/v1/apis/petstore/versions/1/document?bundle=true')

  // Diff, changelog, restore (a new version, then unchanged).
  await call(200, 'GET', '/v1/apis/petstore/diff')
  await call(200, 'GET', '/v1/apis/petstore/diff?from=1&to=2&classification=non-breaking')
  await call(200, 'GET', '/v1/apis/petstore/changelog')
  await call(201, 'POST', '/v1/apis/petstore/versions/1/restore', w)
  await call(200, 'POST', '/v1/apis/petstore/versions/1/restore', w)

  // Schemas: created with a document, uploaded as application/schema+json, diffed, restored.
  await call(201, 'POST', '/v1/schemas', { ...w, json: { name: 'Pet', visibility: 'public', document: PET_SCHEMA } })
  await call(201, 'POST', '/v1/schemas/pet/document', { ...w, body: JSON.stringify({ ...PET_SCHEMA, required: ['name'] }), headers: { 'content-type': 'application/schema+json' } })
  await call(200, 'GET', '/v1/schemas')
  await call(200, 'GET', '/v1/schemas/pet')
  await call(200, 'GET', '/v1/schemas/pet/document')
  await call(200, 'GET', '/v1/schemas/pet/document?format=yaml')
  await call(200, 'GET', '/v1/schemas/pet/versions')
  await call(200, 'GET', '/v1/schemas/pet/versions/2')
  await call(200, 'GET', '/v1/schemas/pet/versions/1/document')
  await call(200, 'GET', '/v1/schemas/pet/diff')
  await call(200, 'GET', '/v1/schemas/pet/changelog')
  await call(200, 'POST', '/v1/schemas/pet/document?dry_run=true', { ...w, json: PET_SCHEMA })
  await call(201, 'POST', '/v1/schemas/pet/versions/1/restore', w)
  await call(200, 'PATCH', '/v1/schemas/pet', { ...w, json: { description: 'A pet' } })

  // Rulesets.
  await call(200, 'GET', '/v1/rulesets')
  await call(200, 'GET', `/v1/rulesets/${ruleset.id}`)
  await call(200, 'GET', `/v1/rulesets/${ruleset.id}/document`)
  await call(200, 'GET', `/v1/rulesets/${ruleset.id}/versions`)
  await call(200, 'GET', `/v1/rulesets/${ruleset.id}/versions/1`)
  await call(200, 'GET', `/v1/rulesets/${ruleset.id}/versions/1/document?format=yaml`)
  await call(200, 'PATCH', `/v1/rulesets/${ruleset.id}`, { ...w, json: { visibility: 'public' } })

  // Search and the overview.
  await call(200, 'GET', '/v1/search?q=pet')
  await call(200, 'GET', '/v1/search?q=pet&kind=schema&limit=5')
  await call(200, 'GET', '/v1/overview')

  // The public registry, without a key; a wrong key is 401, an unknown organization 404.
  const pub = { key: null }
  await call(200, 'GET', '/@default', pub)
  t.match((await call(200, 'GET', '/@default', { ...pub, headers: { accept: 'text/html' } })).headers.get('content-type'), /^text\/html/)
  await call(404, 'GET', '/@nobody', pub)
  await call(200, 'GET', '/@default/search?q=pet', pub)
  await call(200, 'GET', '/@default/apis', pub)
  await call(200, 'GET', '/@default/apis/petstore', pub)
  await call(200, 'GET', '/@default/apis/petstore/latest', pub)
  await call(200, 'GET', '/@default/apis/petstore/latest?format=yaml', pub)
  await call(200, 'GET', '/@default/apis/petstore/versions', pub)
  await call(200, 'GET', '/@default/apis/petstore/versions/2', pub)
  await call(200, 'GET', '/@default/apis/petstore/changelog', pub)
  t.match((await call(200, 'GET', '/@default/apis/petstore/changelog.atom', pub)).headers.get('content-type'), /^application\/atom\+xml/)
  await call(200, 'GET', '/@default/schemas', pub)
  await call(200, 'GET', '/@default/schemas/pet/latest', pub)
  await call(200, 'GET', '/@default/rulesets/house-rules', pub)
  await call(200, 'GET', '/@default/apis/petstore', { key: admin })
  await call(401, 'GET', '/@default/apis/petstore', { key: 'sk_not-a-key-of-anyone' })
  await call(404, 'GET', '/@default/apis/nothing-here', pub)

  // Sites, guides and the public pages.
  const site = (await call(201, 'POST', '/v1/sites', { ...w, json: { name: 'Docs', api_ids: [api.id], visibility: 'public' } })).json().data
  await call(200, 'GET', '/v1/sites')
  await call(200, 'GET', '/v1/sites/docs')
  await call(200, 'PATCH', '/v1/sites/docs', { ...w, json: { title: 'Pet docs' } })
  await call(201, 'PUT', '/v1/sites/docs/guides/intro', { ...w, json: { title: 'Introduction', markdown: '# Hello\n\nPets.' } })
  await call(200, 'PUT', '/v1/sites/docs/guides/intro', { ...w, json: { title: 'Introduction', markdown: '# Hello\n\nAll pets.', position: 1 } })
  await call(200, 'GET', '/v1/sites/docs/guides')
  await call(200, 'GET', '/v1/sites/docs/guides/intro')
  const guidePage = await call(200, 'GET', '/@default/sites/docs/guides/intro', pub)
  await call(404, 'GET', '/@default/sites/docs/guides/nothing-here', pub)
  await call(200, 'GET', '/@default/sites/docs/apis/petstore', pub)
  await call(200, 'GET', '/@default/sites/docs/apis/petstore/changelog', pub)
  await call(200, 'GET', '/@default/sites/docs/apis/petstore/openapi.json', pub)
  const stylesheet = /href="\/@default\/sites\/docs\/_assets\/([^"]+\.css)"/.exec(guidePage.text)?.[1]
  t.ok(stylesheet, 'the page links its stylesheet')
  await call(200, 'GET', `/@default/sites/docs/_assets/${stylesheet}`, pub)
  await call(204, 'DELETE', '/v1/sites/docs/guides/intro', w)

  // An SDK, an archive-only build, its log and archive; a finished build cannot be cancelled.
  const sdk = (await call(201, 'POST', '/v1/sdks', { ...w, json: { name: 'Pets SDK', targets: ['typescript'], apis: [{ api_id: api.id }] } })).json().data
  await call(200, 'GET', '/v1/sdks')
  await call(200, 'PATCH', `/v1/sdks/${sdk.id}`, { ...w, json: { config: { package_version: '1.0.0' } } })
  await call(201, 'PUT', `/v1/sdks/${sdk.id}/targets/typescript/repository`, { ...w, json: { provider: 'github', url: 'https://github.com/acme/pets-sdk', token: 'ghp_secret' } })
  await call(200, 'GET', `/v1/sdks/${sdk.id}/targets/typescript/repository`)
  await call(204, 'DELETE', `/v1/sdks/${sdk.id}/targets/typescript/repository`, w)
  const [build] = (await call(202, 'POST', `/v1/sdks/${sdk.id}/builds`, { ...w, json: { archive_only: true } })).json().data
  let finished = build
  for (const started = Date.now(); !['succeeded', 'failed', 'cancelled'].includes(finished.status) && Date.now() - started < 90_000;) {
    await new Promise((resolve) => setTimeout(resolve, 500))
    finished = (await direct('GET', `/v1/builds/${build.id}`)).json().data
  }
  t.equal(finished.status, 'succeeded', finished.error ?? 'the build finished')
  await call(200, 'GET', `/v1/builds/${build.id}`)
  t.match((await call(200, 'GET', `/v1/builds/${build.id}/logs`)).headers.get('content-type'), /^text\/plain/)
  t.match((await call(200, 'GET', `/v1/builds/${build.id}/artifact`)).headers.get('content-type'), /^application\/gzip/)
  await call(409, 'POST', `/v1/builds/${build.id}/cancel`, w)
  await call(200, 'GET', '/v1/builds')
  await call(200, 'GET', `/v1/sdks/${sdk.id}/builds`)
  // Without a body (optional): every target with an output repository, and this SDK has none.
  t.equal((await call(422, 'POST', `/v1/sdks/${sdk.id}/builds`, w)).json().code, 'no_output_repository')
  await call(204, 'DELETE', `/v1/sdks/${sdk.id}`, w)

  // Outbound webhooks (a disabled endpoint: nothing is sent).
  const endpoint = (await call(201, 'POST', '/v1/webhooks', { json: { url: 'https://hooks.example.com/registry', event_types: ['version.created'], enabled: false } })).json().data
  await call(200, 'GET', '/v1/webhooks')
  await call(200, 'GET', `/v1/webhooks/${endpoint.id}`)
  await call(200, 'PATCH', `/v1/webhooks/${endpoint.id}`, { json: { description: 'CI' } })
  await call(200, 'POST', `/v1/webhooks/${endpoint.id}/secret`)
  await call(200, 'GET', `/v1/webhooks/${endpoint.id}/deliveries`)
  await call(204, 'DELETE', `/v1/webhooks/${endpoint.id}`)

  // A repository connection and the webhooks GitHub and GitLab send (signed, then not).
  await call(201, 'PUT', '/v1/apis/petstore/repository', {
    ...w, json: { provider: 'github', url: 'https://github.com/acme/petstore', branch: 'main', path: 'openapi.yaml', webhook_secret: 'hook-secret' },
  })
  await call(200, 'GET', '/v1/apis/petstore/repository')
  const ping = JSON.stringify({ zen: 'Keep it simple.', repository: { clone_url: 'https://github.com/acme/petstore.git', html_url: 'https://github.com/acme/petstore' } })
  const signature = `sha256=${createHmac('sha256', 'hook-secret').update(ping).digest('hex')}`
  const github = (event: string, delivery: string, sig = signature) =>
    ({ key: null, body: ping, headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': delivery, 'x-hub-signature-256': sig } })
  t.equal((await call(200, 'POST', '/webhooks/github', github('ping', 'delivery-1'))).json().data.status, 'pong')
  t.equal((await call(200, 'POST', '/webhooks/github', github('issues', 'delivery-2'))).json().data.status, 'ignored')
  await call(401, 'POST', '/webhooks/github', github('ping', 'delivery-3', `sha256=${'0'.repeat(64)}`))
  await call(401, 'POST', '/webhooks/gitlab', {
    key: null, json: { ref: 'refs/heads/main', project: { git_http_url: 'https://gitlab.com/acme/petstore.git' } },
    headers: { 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': 'not-the-secret' },
  })
  await call(204, 'DELETE', '/v1/apis/petstore/repository', w)

  // The git mirror: its status and push remote, and a clone's first two requests over smart HTTP.
  await call(200, 'GET', '/v1/mirror')
  await call(200, 'PUT', '/v1/mirror', { json: { url: 'https://git.example.com/acme/registry.git', token: 'secret' } })
  await call(204, 'DELETE', '/v1/mirror')
  const basic = (secret: string) => `Basic ${Buffer.from(`git:${secret}`).toString('base64')}`
  const git = { key: null, headers: { authorization: basic(admin), 'git-protocol': 'version=2' } }
  t.match((await call(200, 'GET', '/git/default.git/info/refs?service=git-upload-pack', git)).text, /version 2/)
  const lsRefs = '0014command=ls-refs\n0001000csymrefs\n0000'
  await call(200, 'POST', '/git/default.git/git-upload-pack', { ...git, body: lsRefs, headers: { ...git.headers, 'content-type': 'application/x-git-upload-pack-request' } })
  await call(401, 'GET', '/git/default.git/info/refs?service=git-upload-pack', { key: null, headers: { authorization: basic('sk_not-a-key-of-anyone') } })

  // Errors a client meets: an unknown API, a wrong key, a key another organization's route refuses.
  await call(404, 'GET', '/v1/apis/nothing-here')
  await call(404, 'GET', '/v1/apis/01HZY3M4N5P6Q7R8S9T0V1W2X3/versions')
  await call(401, 'GET', '/v1/apis', { key: 'sk_not-a-key-of-anyone' })
  await call(403, 'DELETE', '/v1/apis/petstore', { key: readKey.api_key })

  // Deleting: a ruleset in use is a conflict until its API is gone; the session ends last.
  await call(409, 'DELETE', `/v1/rulesets/${ruleset.id}`, w)
  await call(204, 'DELETE', '/v1/sites/docs', w)
  await call(204, 'DELETE', '/v1/apis/petstore', w)
  await call(204, 'DELETE', `/v1/rulesets/${ruleset.id}`, w)
  await call(204, 'DELETE', '/v1/schemas/pet', w)
  await call(204, 'DELETE', `/v1/keys/${readKey.id}`)
  await call(204, 'DELETE', '/v1/session', { key: null, headers: { cookie, 'x-registry-csrf': session.csrf_token } })
  await call(401, 'GET', '/v1/session', { key: null, headers: { cookie } })

  // Malformed requests, through the proxy that forwards them: the request breaks the description (as
  // the server says), and the server's answer does not.
  const loose = client(lenient.url, admin)
  const refused = async (expected: number, method: string, path: string, options: Call) => {
    const answer = await loose(method, path, options)
    t.equal(answer.status, expected, `${method} ${path} (${options.headers?.['content-type'] ?? 'json'}): ${answer.status}`)
    t.match(answer.headers.get('content-type'), /^application\/problem\+json/)
    const reported = (JSON.parse(answer.headers.get('sl-violations') ?? '[]') as { location: string[] }[])
    t.ok(reported.some((v) => v.location[0] === 'request'), 'Prism finds the request malformed too')
    const answers: unknown[] = reported.filter((v) => v.location[0] !== 'request')
    const mediaType = mediaTypeProblem(description, method, path, answer)
    if (mediaType) answers.push(mediaType)
    if (answers.length > 0) violations.push({ request: `${method} ${path}`, status: answer.status, violations: answers })
  }
  await refused(415, 'POST', '/v1/apis', { body: 'name=Pets', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  await refused(415, 'POST', '/v1/apis/nothing-here/spec', { body: 'openapi: 3.1.0', headers: { 'content-type': 'text/plain' } })
  await refused(400, 'POST', '/v1/apis', { json: { name: 'Pets', colour: 'blue' } })
  await refused(400, 'GET', '/v1/apis?limit=100000', {})

  t.same(violations, [], 'Prism reported no violation')
  if (violations.length > 0) t.comment(strict.output().split('\n').filter((line) => /VALIDATOR|error/i.test(line)).slice(0, 50).join('\n'))
})
