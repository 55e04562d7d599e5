import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import t from 'tap'
import { parse } from 'yaml'
// The official SARIF 2.1.0 schema (rtm.5, the one schemastore serves), as a Microsoft package ships it.
import SARIF_SCHEMA from '@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json' with { type: 'json' }
import { addFormats, Ajv04 } from '../../src/documents/ajv.js'
import { tempDir } from '../temp.js'
import { api, cliAsync, startServer } from './spawn.js'

/** An OpenAPI document whose operation lacks an operationId on line 7 (YAML). */
const PETS_YAML = `openapi: 3.1.0
info:
  title: Pets
  version: 1.0.0
paths:
  /pets:
    get:
      summary: List pets
      responses:
        '200':
          description: the pets
          content:
            application/json:
              schema:
                $ref: './pet.yaml'
`
const PET_YAML = 'type: object\nproperties:\n  name: { type: string }\n'

/** The same problem in JSON: the operation is on line 5, column 7. */
const PETS_JSON = `{
  "openapi": "3.1.0",
  "info": { "title": "Pets", "version": "1.0.0" },
  "paths": {
    "/pets": { "get": {
      "responses": { "200": { "description": "the pets" } } } }
  }
}
`
const RULESET = `rules:
  operation-operationId:
    given: "$.paths[*][get,put,post,delete]"
    severity: error
    message: every operation needs an operationId
    then: { field: operationId, function: truthy }
`

/** A loopback port nothing listens on (one the system just gave out and took back). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })
}

t.test('the remote commands against a running registry', async (t) => {
  const storage = tempDir()
  const work = tempDir()
  const config = tempDir()
  t.teardown(() => { for (const d of [storage, work, config]) rmSync(d, { recursive: true, force: true }) })
  const server = await startServer(storage)
  t.teardown(() => server.stop('SIGKILL'))
  const key = server.key!
  // No saved login of the user running the tests leaks in: each run has its own configuration directory.
  const env = { REGISTRY_URL: server.url, REGISTRY_API_KEY: key, XDG_CONFIG_HOME: config }
  const run = (args: string[], extra: Record<string, string> = {}) => cliAsync(args, { ...env, ...extra })
  const file = (name: string, text: string) => { const path = join(work, name); writeFileSync(path, text); return path }

  mkdirSync(join(work, 'spec'))
  const pets = file('spec/openapi.yaml', PETS_YAML)
  file('spec/pet.yaml', PET_YAML)

  await t.test('push: --create, bundling, unchanged', async (t) => {
    const missing = await run(['push', 'pets', pets])
    t.equal(missing.code, 2, 'a missing API is a usage error')
    t.equal(missing.stderr, `registry: no API 'pets' in this organization (${server.url}): pass --create to make it\n`, 'one line, no stack')
    const created = await run(['push', 'pets', pets, '--create'])
    t.equal(created.code, 0, created.stderr)
    t.match(created.stdout, /^published pets v1 \(sha256:[0-9a-f]{64}\)$/m)
    const stored = await (await api(server.url, key, 'GET', '/v1/apis/pets/spec')).json()
    t.same(stored.paths['/pets'].get.responses['200'].content['application/json'].schema, { type: 'object', properties: { name: { type: 'string' } } },
      'the $ref to pet.yaml next to the file was bundled in')
    const again = await run(['push', 'pets', pets])
    t.equal(again.code, 0)
    t.match(again.stdout, 'unchanged: pets v1 is this document already')
  })

  await t.test('a $ref out of the file\'s folder is refused, nothing is sent', async (t) => {
    file('secret.yaml', 'type: string\n')
    const leaking = file('spec/leak.yaml', PETS_YAML.replace('./pet.yaml', '../secret.yaml'))
    const result = await run(['push', 'pets', leaking])
    t.equal(result.code, 1)
    t.match(result.stderr, /^registry: cannot bundle .*leak\.yaml: .*secret\.yaml/)
    t.equal(result.stderr.trim().split('\n').length, 1)
    const versions = await (await api(server.url, key, 'GET', '/v1/apis/pets/versions')).json()
    t.equal(versions.total, 1, 'nothing stored')
  })

  await t.test('lint blocked by the API\'s ruleset: findings at the lines of the sent text, in every format', async (t) => {
    const rules = file('rules.yaml', RULESET)
    t.equal((await run(['push', '--kind', 'ruleset', 'strict', rules, '--create'])).code, 0)
    const ruleset = await (await api(server.url, key, 'GET', '/v1/rulesets/strict')).json()
    const patched = await api(server.url, key, 'PATCH', '/v1/apis/pets', { ruleset_id: ruleset.data.id, blocking_severity: 'error' })
    t.equal(patched.status, 200)

    const stylish = await run(['lint', pets, '--api', 'pets'])
    t.equal(stylish.code, 1, 'blocked: exit 1')
    t.match(stylish.stdout, `${pets}\n  7:5  error  operation-operationId  every operation needs an operationId  paths./pets.get\n`)
    t.match(stylish.stdout, /^blocked: /m)
    t.equal(stylish.stderr, '')

    const json = file('pets.json', PETS_JSON)
    const github = await run(['lint', json, '--api', 'pets', '--format', 'github'])
    t.equal(github.code, 1)
    t.match(github.stdout, /^::error file=.*pets\.json,line=5,col=16,title=operation-operationId::every operation needs an operationId$/m,
      'JSON: the annotation lands on the operation\'s key')

    const sarif = await run(['lint', pets, '--api', 'pets', '-f', 'sarif'])
    t.equal(sarif.code, 1)
    const log = JSON.parse(sarif.stdout)
    const validate = addFormats(new (Ajv04())({ allErrors: true, strict: false, unicodeRegExp: false })).compile(SARIF_SCHEMA as object)
    t.ok(validate(log), `valid SARIF 2.1.0: ${JSON.stringify(validate.errors)}`)
    t.match(log.runs[0].results[0], {
      ruleId: 'operation-operationId', level: 'error',
      locations: [{ physicalLocation: { artifactLocation: { uri: pets }, region: { startLine: 7, startColumn: 5 } } }],
    })

    const report = join(work, 'junit.xml')
    const junit = await run(['lint', pets, '--api', 'pets', '-f', 'junit', '-o', report])
    t.equal(junit.code, 1)
    t.match(junit.stdout, /^blocked: /, 'with -o, the summary alone on stdout')
    const xml = readFileSync(report, 'utf8')
    t.match(xml, /<testsuite name="[^"]*openapi\.yaml" tests="1" failures="1"/)
    t.match(xml, /<failure type="error" message="every operation needs an operationId">[^<]*openapi\.yaml:7:5 error operation-operationId/)

    const asJson = await run(['lint', pets, '--api', 'pets', '-f', 'json'])
    t.match(JSON.parse(asJson.stdout), { blocked: true, findings: [{ code: 'operation-operationId', severity: 'error', line: 7, column: 5, path: ['paths', '/pets', 'get'] }] })

    const fixed = file('spec/fixed.yaml', PETS_YAML.replace('      summary: List pets\n', '      summary: List pets\n      operationId: listPets\n'))
    const clean = await run(['lint', fixed, '--api', 'pets'])
    t.equal(clean.code, 0, clean.stdout)
    t.match(clean.stdout, 'nothing was stored')
    t.equal((await (await api(server.url, key, 'GET', '/v1/apis/pets/versions')).json()).total, 1, 'a dry run stores nothing')

    const unchanged = await run(['push', 'pets', pets])
    t.equal(unchanged.code, 0, 'the current document is not linted again')
    const blocked = await run(['push', 'pets', json, '-f', 'github'])
    t.equal(blocked.code, 1, 'a push the lint gate blocks exits 1')
    t.match(blocked.stdout, /^::error file=.*pets\.json,line=5,col=16,/m)
    const published = await run(['push', 'pets', fixed])
    t.equal(published.code, 0, published.stdout + published.stderr)
    t.match(published.stdout, 'published pets v2')
  })

  await t.test('diff: the changes against the current version; --fail-on-breaking', async (t) => {
    const fixed = join(work, 'spec/fixed.yaml')
    const breaking = file('spec/breaking.yaml', readFileSync(fixed, 'utf8').replace("$ref: './pet.yaml'", 'type: string'))
    const diff = await run(['diff', 'pets', breaking])
    t.equal(diff.code, 0, 'the API has no compatibility policy')
    t.match(diff.stdout, /against v2: [1-9]\d* breaking/)
    t.match(diff.stdout, /  \d+:\d+ +error +\S+ +breaking: GET \/pets: /)
    const strict = await run(['diff', 'pets', breaking, '--fail-on-breaking', '-f', 'github'])
    t.equal(strict.code, 1)
    t.match(strict.stdout, /^::error file=.*breaking\.yaml,line=16,col=\d+,title=/m)
    t.equal((await (await api(server.url, key, 'GET', '/v1/apis/pets/versions')).json()).total, 2)
  })

  await t.test('pull, list, restore', async (t) => {
    const out = join(work, 'pulled.yaml')
    const pulled = await run(['pull', 'pets', '--version', '1', '--format', 'yaml', '-o', out])
    t.equal(pulled.code, 0, pulled.stderr)
    t.equal(parse(readFileSync(out, 'utf8')).paths['/pets'].get.summary, 'List pets')
    t.notOk(parse(readFileSync(out, 'utf8')).paths['/pets'].get.operationId, 'version 1')
    const current = await run(['pull', 'pets'])
    t.equal(JSON.parse(current.stdout).paths['/pets'].get.operationId, 'listPets')
    const listed = await run(['list'])
    t.match(listed.stdout, /^pets\t[0-9A-Z]{26}\tv2\tpets$/m)
    const rulesets = await run(['--json', 'list', '--kind', 'ruleset'])
    t.match(JSON.parse(rulesets.stdout), { data: [{ slug: 'strict' }] })
    const restored = await run(['restore', 'pets', '1'])
    t.equal(restored.code, 0)
    t.equal(restored.stdout, 'restored version 1 as v3\n')
    const missing = await run(['restore', 'pets', '9'])
    t.equal(missing.code, 2)
    t.equal(missing.stderr, "registry: no version 9 of the API 'pets' in this organization\n")
  })

  await t.test('push converts a Swagger 2.0 file and a Postman collection (issue 18, item 7), and says so', async (t) => {
    const swagger = file('swagger.yaml', readFileSync(new URL('../fixtures/import/swagger-petstore.yaml', import.meta.url), 'utf8'))
    const postman = file('pets.postman_collection.json', readFileSync(new URL('../fixtures/import/pets.postman_collection.json', import.meta.url), 'utf8'))
    const created = await run(['push', 'shelter', swagger, '--create'])
    t.equal(created.code, 0, created.stderr)
    t.match(created.stdout, /^published shelter v1 \(sha256:[0-9a-f]{64}\) \(converted from Swagger 2\.0 to OpenAPI 3\.0\.4\)$/m)
    t.equal(created.stderr, '')
    const stored = (await api(server.url, key, 'GET', '/v1/apis/shelter/spec')).json()
    t.equal(stored.openapi, '3.0.4', 'the registry stores the conversion')
    t.same(stored.paths['/pets'].post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/NewPet' })
    t.match((await api(server.url, key, 'GET', '/v1/apis/shelter/versions/1')).json().data, { converted_from: 'swagger-2.0', format: 'yaml' })
    const again = await run(['push', 'shelter', swagger])
    t.equal(again.code, 0)
    t.match(again.stdout, /^unchanged: shelter v1 is this document already \(converted from Swagger 2\.0 to OpenAPI 3\.0\.4\)$/m)

    const collection = await run(['push', 'shelter-requests', postman, '--create', '--format', 'json'])
    t.equal(collection.code, 0, collection.stderr)
    t.match(JSON.parse(collection.stdout), {
      blocked: false, summary: /^published shelter-requests v1 .*\(converted from Postman collection v2\.1 to OpenAPI 3\.1\.0\)$/, version: { converted_from: 'postman-2.1' },
    })

    // Findings about the conversion: placed where the file has their path, else at what it has of it.
    const rules = file('described.yaml', 'rules:\n  schema-description:\n    given: "$.components.schemas[*]"\n    severity: warn\n' +
      '    message: describe the schema\n    then: { field: description, function: truthy }\n')
    t.equal((await run(['push', '--kind', 'ruleset', 'described', rules, '--create'])).code, 0)
    const ruleset = (await api(server.url, key, 'GET', '/v1/rulesets/described')).json().data
    t.equal((await api(server.url, key, 'PATCH', '/v1/apis/shelter', { ruleset_id: ruleset.id, blocking_severity: 'warn' })).status, 200)
    file('swagger.yaml', readFileSync(swagger, 'utf8').replace('version: 2.3.0', 'version: 2.4.0'))
    const blocked = await run(['push', 'shelter', swagger])
    t.equal(blocked.code, 1, 'the lint gate applies to the conversion: exit 1')
    t.match(blocked.stdout, /^ {2}2:1 +warning +schema-description +describe the schema +components\.schemas\.NewPet$/m,
      'listed with its path, at the top of the file (a Swagger file has no components)')
    t.match(blocked.stdout, /^blocked: 3 findings at or above 'warn' block this publish$/m)
    t.equal(blocked.stderr, '', 'no crash')
    t.equal((await api(server.url, key, 'GET', '/v1/apis/shelter/versions')).json().total, 1, 'nothing stored')
  })

  await t.test('usage, authentication and network errors exit 2 with one line', async (t) => {
    const wrongKey = await run(['list', '--key', 'sk_wrong'])
    t.equal(wrongKey.code, 2)
    t.match(wrongKey.stderr, /^registry: the registry at .* refused the API key \(401\)/)
    t.equal(wrongKey.stderr.split('\n').length, 2)
    const closed = await closedPort()
    const down = await run(['list', '--url', `http://127.0.0.1:${closed}`])
    t.equal(down.code, 2)
    t.equal(down.stderr, `registry: cannot reach the registry at http://127.0.0.1:${closed}: ECONNREFUSED\n`)
    const noUrl = await run(['list'], { REGISTRY_URL: '' })
    t.equal(noUrl.code, 2)
    t.equal(noUrl.stderr, 'registry: no registry URL: pass --url, set REGISTRY_URL, or run `registry login`\n')
    const badFormat = await run(['lint', pets, '--api', 'pets', '-f', 'xml'])
    t.equal(badFormat.code, 2)
    t.match(badFormat.stderr, /^error: option '-f, --format <format>' argument 'xml' is invalid/)
    const noFile = await run(['push', 'pets', join(work, 'nope.yaml')])
    t.equal(noFile.code, 2)
    t.match(noFile.stderr, /^registry: cannot read .*nope\.yaml: ENOENT\n$/)
  })

  await t.test('login saves the URL and key for the user alone', async (t) => {
    const bad = await run(['login', '--key', 'sk_wrong'])
    t.equal(bad.code, 2, 'a key the registry refuses is not saved')
    const login = await run(['login', '--url', server.url, '--key', key], { REGISTRY_URL: '', REGISTRY_API_KEY: '' })
    t.equal(login.code, 0, login.stderr)
    const saved = join(config, 'api-registry', 'credentials.json')
    t.equal(statSync(saved).mode & 0o777, 0o600)
    t.same(JSON.parse(readFileSync(saved, 'utf8')), { url: server.url, key })
    const listed = await run(['list'], { REGISTRY_URL: '', REGISTRY_API_KEY: '' })
    t.equal(listed.code, 0, listed.stderr)
    t.match(listed.stdout, /^pets\t/m)
    t.equal((await run(['logout'])).code, 0)
    t.equal((await run(['list'], { REGISTRY_URL: '', REGISTRY_API_KEY: '' })).code, 2)
  })
})
