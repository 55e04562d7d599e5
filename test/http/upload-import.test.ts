/**
 * Import (issue 18, item 7): a Swagger 2.0 document or a Postman collection uploaded to an API is
 * converted to OpenAPI 3 in the document worker, and stored as that, with `converted_from` on the
 * version. Fixtures are in test/fixtures/import (written for these tests).
 */
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { parse, stringify } from 'yaml'
import { json, petstore, startTestServer, type TestServer } from '../helpers.js'

type Json = Record<string, any>

const FIXTURES = new URL('../fixtures/import/', import.meta.url)
const SWAGGER_YAML = readFileSync(new URL('swagger-petstore.yaml', FIXTURES), 'utf8')
const SWAGGER_JSON = `${JSON.stringify(parse(SWAGGER_YAML), null, 2)}\n`
const POSTMAN_JSON = readFileSync(new URL('pets.postman_collection.json', FIXTURES), 'utf8')

async function created(s: TestServer, url: string, payload: Json): Promise<Json> {
  const res = await s.call({ method: 'POST', url, payload })
  if (res.statusCode !== 201) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
  return json(res).data
}

/** The body as a file is sent: its own text with its own media type. */
function send(s: TestServer, api: string, text: string, type: string, query = '') {
  return s.call({ method: 'POST', url: `/v1/apis/${api}/spec${query}`, headers: { 'content-type': type }, payload: text })
}

const versions = async (s: TestServer, api: string): Promise<number> => json(await s.call({ method: 'GET', url: `/v1/apis/${api}/versions` })).total

t.test('a Swagger 2.0 document becomes an OpenAPI 3.0 version that says so; the same file again is unchanged', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = (await created(s, '/v1/apis', { name: 'Shelter' })).id

  const first = await send(s, api, SWAGGER_YAML, 'application/yaml')
  t.equal(first.statusCode, 201, 'the YAML file: a new version')
  const v1 = json(first).data
  t.match(v1, { number: 1, format: 'yaml', converted_from: 'swagger-2.0', openapi: '3.0.4', title: 'Pet Shelter', version: '2.3.0', source: 'upload' })
  t.same(json(await s.call({ method: 'GET', url: `/v1/apis/${api}/versions/1` })).data, v1, 'the version record says so too')
  t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${api}` })).data.current.converted_from, 'swagger-2.0')

  const served = json(await s.call({ method: 'GET', url: `/v1/apis/${api}/spec` }))
  t.match(served.openapi, /^3\.0\.\d+$/, 'served as OpenAPI 3.0')
  t.notOk('swagger' in served || 'definitions' in served || 'securityDefinitions' in served || 'host' in served, 'nothing of Swagger left')
  t.same(served.servers, [{ url: 'https://shelter.example.com/v2' }], 'host, basePath and schemes: a server')
  t.same(Object.keys(served.paths), ['/pets', '/pets/{petId}'])
  t.same(Object.keys(served.components.schemas), ['NewPet', 'Pet', 'Error'], 'definitions: components.schemas')
  t.same(served.components.schemas.Pet.allOf[0], { $ref: '#/components/schemas/NewPet' }, 'references follow them')
  const post = served.paths['/pets'].post
  t.same(post.requestBody, { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPet' } } } }, 'a body parameter: the requestBody')
  t.notOk(post.parameters, 'no body parameter left')
  t.same(served.paths['/pets'].get.parameters.map((p: Json) => [p.name, p.in, p.schema.type]), [['limit', 'query', 'integer'], ['species', 'query', 'array']])
  t.match(served.paths['/pets'].get.parameters[1], { style: 'form', explode: true }, 'collectionFormat: multi')
  t.same(served.paths['/pets/{petId}'].parameters, [{ $ref: '#/components/parameters/petId' }])
  t.match(served.components.parameters.petId, { name: 'petId', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } }, 'path parameter')
  t.same(served.paths['/pets'].get.responses['200'].content['application/json'].schema.items, { $ref: '#/components/schemas/Pet' })
  t.same(served.paths['/pets/{petId}'].get.responses['404'], { $ref: '#/components/responses/NotFound' })
  t.same(served.components.securitySchemes.oauth.flows.authorizationCode.scopes, { 'pets:write': 'change pets' }, 'securityDefinitions: securitySchemes')
  t.same(served.components.securitySchemes.apiKey, { type: 'apiKey', in: 'header', name: 'X-Api-Key' })

  const yaml = (await s.call({ method: 'GET', url: `/v1/apis/${api}/spec?format=yaml` })).body
  t.match(yaml, /^openapi: 3\.0\.4\ninfo:\n {2}title: Pet Shelter\n/, 'the stored text is the converted document in YAML, as the file was')
  t.same(parse(yaml), served)

  const again = await send(s, api, SWAGGER_YAML, 'application/yaml')
  t.equal(again.statusCode, 200, 'the same file again: unchanged')
  t.match(json(again).data, { id: v1.id, number: 1, converted_from: 'swagger-2.0' })
  const asJson = await send(s, api, SWAGGER_JSON, 'application/json')
  t.equal(asJson.statusCode, 200, 'the same document in JSON: unchanged (one canonical checksum)')
  const envelope = await s.call({ method: 'POST', url: `/v1/apis/${api}/spec`, payload: { document: parse(SWAGGER_YAML) } })
  t.equal(envelope.statusCode, 200, 'and as an object in the envelope')
  const unquoted = await send(s, api, SWAGGER_YAML.replace("swagger: '2.0'", 'swagger: 2.0'), 'application/yaml')
  t.equal(unquoted.statusCode, 200, "an unquoted `swagger: 2.0` (YAML's number 2) is the same Swagger 2.0 document")
  t.equal(await versions(s, api), 1)

  const changed = await send(s, api, SWAGGER_YAML.replace('version: 2.3.0', 'version: 2.4.0'), 'application/yaml')
  t.equal(changed.statusCode, 201)
  t.match(json(changed).data, { number: 2, version: '2.4.0', converted_from: 'swagger-2.0' })
  const restored = await s.call({ method: 'POST', url: `/v1/apis/${api}/versions/1/restore` })
  t.match(json(restored).data, { number: 3, source: 'restore', converted_from: 'swagger-2.0' }, 'a restore keeps what the document was converted from')
  const plain = await s.call({ method: 'POST', url: `/v1/apis/${api}/spec`, payload: petstore() })
  t.match(json(plain).data, { number: 4, converted_from: null }, 'an OpenAPI 3 upload: null')

  const other = (await created(s, '/v1/apis', { name: 'Shelter JSON' })).id
  const fromJson = await send(s, other, SWAGGER_JSON, 'application/json')
  t.equal(fromJson.statusCode, 201, 'the JSON file to another API')
  t.match(json(fromJson).data, { number: 1, format: 'json', converted_from: 'swagger-2.0', checksum: v1.checksum })
  const text = (await s.call({ method: 'GET', url: `/v1/apis/${other}/spec` })).body
  t.match(text, /^\{\n {2}"openapi": "3\.0\.4",\n/, 'stored as indented JSON, as the file was')
  t.same(JSON.parse(text), served)
})

t.test('a Postman collection v2.1 becomes an OpenAPI 3.1 version', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = (await created(s, '/v1/apis', { name: 'Shelter requests' })).id
  const res = await send(s, api, POSTMAN_JSON, 'application/json')
  t.equal(res.statusCode, 201, res.body)
  t.match(json(res).data, { number: 1, format: 'json', converted_from: 'postman-2.1', openapi: '3.1.0', title: 'Pet Shelter' })
  const served = json(await s.call({ method: 'GET', url: `/v1/apis/${api}/spec` }))
  t.equal(served.openapi, '3.1.0')
  t.same(served.servers, [{ url: 'https://shelter.example.com' }])
  const pets = served.paths['/v2/pets']
  t.same(Object.keys(pets).sort(), ['get', 'post'], 'the folder\'s two requests: two operations')
  t.same(pets.get.tags, ['Pets'], 'the folder: a tag')
  t.match(pets.get.parameters, [{ name: 'limit', in: 'query', description: 'how many pets' }], 'the query parameter')
  t.same(pets.post.requestBody.content['application/json'].schema.example, { name: 'Rex', species: 'dog' }, 'the JSON body')
  t.same(pets.post.responses['201'].content['application/json'].examples.default, { value: { id: 1, name: 'Rex', species: 'dog' } },
    'a saved response: an Example Object (the converter writes the bare body; wrapped)')
  t.equal((await send(s, api, POSTMAN_JSON, 'application/json')).statusCode, 200, 'the same collection again: unchanged')

  const v20 = POSTMAN_JSON.replace('collection/v2.1.0/', 'collection/v2.0.0/').replace('Pet Shelter', 'Pet Shelter 2.0')
  t.match(json(await send(s, api, v20, 'application/json')).data, { number: 2, converted_from: 'postman-2.0' }, 'v2.0 too')
})

/** Every component schema must have a description: Swagger has none, so a finding proves OpenAPI 3 was linted. */
const RULESET = {
  rules: {
    'schema-description': { given: '$.components.schemas[*]', severity: 'warn', then: { field: 'description', function: 'truthy' }, message: 'describe the schema' },
  },
}

t.test('the lint gate and dry runs see the converted document; its findings have no line or column', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const ruleset = await created(s, '/v1/rulesets', { name: 'House', blocking_severity: 'warn', document: RULESET })
  const api = (await created(s, '/v1/apis', { name: 'Linted', ruleset_id: ruleset.id })).id

  const blocked = await send(s, api, SWAGGER_YAML, 'application/yaml')
  t.equal(blocked.statusCode, 422)
  const problem = json(blocked)
  t.equal(problem.code, 'lint_blocked')
  t.same(problem.errors.map((e: Json) => e.path), [['components', 'schemas', 'Error'], ['components', 'schemas', 'NewPet'], ['components', 'schemas', 'Pet']],
    'paths into the converted document')
  t.notOk(problem.errors.some((e: Json) => 'line' in e || 'column' in e), 'no position: the file sent has no such place')
  t.equal(await versions(s, api), 0, 'nothing stored')

  const dry = await send(s, api, SWAGGER_YAML, 'application/yaml', '?dry_run=true')
  t.equal(dry.statusCode, 422, 'a dry run converts too, and is refused the same')

  await s.call({ method: 'PATCH', url: `/v1/apis/${api}`, payload: { blocking_severity: 'error' } })
  const tried = await send(s, api, SWAGGER_YAML, 'application/yaml', '?dry_run=true')
  t.equal(tried.statusCode, 200)
  const result = json(tried).data
  t.equal(result.converted_from, 'swagger-2.0', 'the dry run says it converted')
  t.equal(result.unchanged, false)
  t.equal(result.findings.length, 3)
  t.notOk(result.findings.some((f: Json) => 'line' in f), 'findings without line or column')
  t.equal(await versions(s, api), 0, 'a dry run stores nothing')

  const published = json(await send(s, api, SWAGGER_YAML, 'application/yaml')).data
  t.equal(published.checksum, result.checksum, 'the dry run\'s checksum is the version\'s')
  t.same(published.lint.counts, { error: 0, warn: 3, info: 0, hint: 0 })
  const again = json(await send(s, api, SWAGGER_YAML, 'application/yaml', '?dry_run=true')).data
  t.match(again, { unchanged: true, converted_from: 'swagger-2.0' })
  const openapi = json(await s.call({ method: 'POST', url: `/v1/apis/${api}/spec?dry_run=true`, payload: petstore() })).data
  t.equal(openapi.converted_from, null, 'an OpenAPI 3 dry run: null')
  t.ok(openapi.findings.every((f: Json) => typeof f.line === 'number'), 'and its findings are placed as before')
})

t.test('broken and unknown documents: 422 invalid_document, nothing stored', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = (await created(s, '/v1/apis', { name: 'Broken' })).id
  const refused = async (text: string, type: string, detail: RegExp, what: string) => {
    const res = await send(s, api, text, type)
    t.equal(res.statusCode, 422, what)
    t.match(res.headers['content-type'], /application\/problem\+json/)
    const problem = json(res)
    t.equal(problem.code, 'invalid_document', what)
    t.match(problem.detail, detail, what)
    return problem
  }
  const broken = await refused(SWAGGER_YAML.replace("    description: no such pet\n", ''), 'application/yaml',
    /^the Swagger 2\.0 document is not valid at \/responses\/NotFound: missing required property 'description'/, 'a response without its description')
  t.same(broken.errors[0].path, ['responses', 'NotFound'], 'the path is into the document sent')
  await refused('swagger: "2.0"\ninfo: { title: x }\npaths: []\n', 'application/yaml', /^the Swagger 2\.0 document is not valid/, 'paths as a list')
  await refused(JSON.stringify({ info: { name: 'x', schema: 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json' }, item: {} }), 'application/json',
    /^the Postman collection v2\.1 could not be converted to OpenAPI 3: Invalid Postman collection: item must be an array/, 'a collection whose items are no list')
  const postman = JSON.parse(POSTMAN_JSON)
  postman.auth = { type: 'digest', digest: [] }
  await refused(JSON.stringify(postman), 'application/json', /could not be converted to OpenAPI 3: Unsupported authentication type: digest/, 'an authentication the converter does not know')
  const converted = await refused(SWAGGER_YAML.replace("$ref: '#/definitions/Error'", "$ref: '#/definitions/Missing'"), 'application/yaml',
    /^the OpenAPI document converted from Swagger 2\.0 is not valid at \/components\/responses\/NotFound\/content\/application~1json\/schema/, 'a reference to nothing')
  t.match(converted.errors[0].message, /#\/components\/schemas\/Missing/)

  // Neither OpenAPI 3, Swagger 2.0 nor a Postman v2 collection: today's answers.
  await refused('swagger: "1.2"\ninfo: { title: x }\n', 'application/yaml', /^Swagger 1\.2 is not supported: convert the document to OpenAPI 3/, 'Swagger 1.2')
  await refused(JSON.stringify({ name: 'v1 collection', requests: [] }), 'application/json', /^not an OpenAPI document: the 'openapi' member/, 'a Postman v1 collection')
  t.equal(await versions(s, api), 0, 'nothing stored')
})

t.test('only APIs convert: a Swagger document uploaded to a schema is stored as sent', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const schema = (await created(s, '/v1/schemas', { name: 'Not converted' })).id
  const res = await s.call({ method: 'POST', url: `/v1/schemas/${schema}/document`, headers: { 'content-type': 'application/yaml' }, payload: SWAGGER_YAML })
  t.equal(res.statusCode, 201, 'a JSON Schema may have any other keyword')
  t.notOk('converted_from' in json(res).data, 'a schema version has no converted_from')
  t.equal((await s.call({ method: 'GET', url: `/v1/schemas/${schema}/document?format=yaml` })).body, SWAGGER_YAML, 'stored as sent')
  const ruleset = (await created(s, '/v1/rulesets', { name: 'Not converted either' })).id
  const lint = await s.call({ method: 'POST', url: `/v1/rulesets/${ruleset}/lint`, headers: { 'content-type': 'application/yaml' }, payload: SWAGGER_YAML })
  t.equal(lint.statusCode, 200, 'the lint route lints the document as sent (spectral:oas has Swagger rules)')
  t.ok(json(lint).data.findings.every((f: Json) => typeof f.line === 'number'), 'placed in the text sent')
})

t.test('converting never fetches: an external $ref to a loopback server is refused without a request', async (t) => {
  const requests: string[] = []
  const server = createServer((req: IncomingMessage, res) => {
    requests.push(`${req.method} ${req.url}`)
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ type: 'object' }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const { port } = server.address() as AddressInfo
  const s = await startTestServer({ outboundHosts: ['127.0.0.1'] })
  t.teardown(s.close)
  const api = (await created(s, '/v1/apis', { name: 'Remote refs' })).id
  const remote = `http://127.0.0.1:${port}/x.json`
  const swagger = parse(SWAGGER_YAML)
  swagger.definitions.Remote = { $ref: remote }
  swagger.paths['/remote'] = { get: { responses: { 200: { description: 'r', schema: { $ref: `${remote}#/Thing` } } } } }
  for (const [text, type] of [[stringify(swagger), 'application/yaml'], [JSON.stringify(swagger), 'application/json']]) {
    for (const query of ['', '?dry_run=true']) {
      const res = await send(s, api, text, type, query)
      t.equal(res.statusCode, 422, `${type}${query}`)
      const problem = json(res)
      t.equal(problem.code, 'invalid_document')
      t.match(problem.detail, /^the OpenAPI document converted from Swagger 2\.0 is not valid/)
      t.ok(problem.errors.some((e: Json) => e.message.includes(remote)), 'the external reference is named')
    }
  }
  // Whatever the converter or validation might have started would have arrived by now.
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.same(requests, [], 'the loopback server got no request')
  t.equal(await versions(s, api), 0)
})

t.test('/openapi.json describes converted_from', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const spec = json(await s.call({ method: 'GET', url: '/openapi.json', key: null }))
  const version = spec.paths['/v1/apis/{api}/versions/{version}'].get.responses['200'].content['application/json'].schema.properties.data
  t.match(version.properties.converted_from, { anyOf: [{ enum: ['swagger-2.0', 'postman-2.0', 'postman-2.1'] }, { type: 'null' }] })
  t.ok(version.required.includes('converted_from'))
  const upload = spec.paths['/v1/apis/{api}/spec'].post.responses['200'].content['application/json'].schema
  t.match(JSON.stringify(upload), /converted_from/, 'the dry run answer too')
})
