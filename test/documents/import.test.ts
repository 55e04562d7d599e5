/** Recognizing and converting Swagger 2.0 and Postman collections (src/documents/import*.ts), in the worker's digest. */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { convertToOpenApi } from '../../src/documents/import.js'
import { convertibleFormatOf } from '../../src/documents/import-formats.js'
import { digest } from '../../src/documents/worker.js'

const FIXTURES = new URL('../fixtures/import/', import.meta.url)
const SWAGGER_YAML = readFileSync(new URL('swagger-petstore.yaml', FIXTURES), 'utf8')
const POSTMAN = 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json'

t.test('what is converted, and what is not', async (t) => {
  const cases: [unknown, string | undefined, string][] = [
    [{ swagger: '2.0' }, 'swagger-2.0', 'swagger "2.0"'],
    [{ swagger: 2 }, 'swagger-2.0', 'YAML\'s unquoted 2.0'],
    [{ swagger: '1.2' }, undefined, 'Swagger 1.2'],
    [{ swagger: '2.0', openapi: '3.0.0' }, undefined, 'an openapi member wins: validated as OpenAPI'],
    [{ info: { name: 'c', schema: POSTMAN }, item: [] }, 'postman-2.1', 'Postman v2.1'],
    [{ info: { name: 'c', schema: 'https://schema.getpostman.com/json/collection/v2.0.0/collection.json' } }, 'postman-2.0', 'Postman v2.0'],
    [{ info: { schema: 'https://schema.postman.com/json/collection/v2.1.0/collection.json' } }, 'postman-2.1', 'schema.postman.com'],
    [{ info: { schema: 'https://schema.getpostman.com/json/collection/v1.0.0/collection.json' } }, undefined, 'Postman v1'],
    [{ info: { schema: 'https://example.com/json/collection/v2.1.0/collection.json' } }, undefined, 'another host'],
    [{ openapi: '3.1.0', info: { schema: POSTMAN } }, undefined, 'OpenAPI whose info has a schema member'],
    [{ type: 'object' }, undefined, 'a JSON Schema'],
    [[], undefined, 'not an object'],
  ]
  for (const [document, expected, what] of cases) t.equal(convertibleFormatOf(document), expected, what)
})

t.test('the document given is not changed; YAML aliases are unshared first', async (t) => {
  const shared = { name: 'id', in: 'path', required: true, type: 'string' }
  const document = {
    swagger: '2.0', info: { title: 'a', version: '1' },
    paths: { '/a/{id}': { get: { parameters: [shared], responses: { 200: { description: 'ok' } } } }, '/b/{id}': { get: { parameters: [shared], responses: { 200: { description: 'ok' } } } } },
  }
  const before = JSON.stringify(document)
  const converted = convertToOpenApi(document, 'swagger-2.0')
  t.equal(JSON.stringify(document), before)
  t.same(Object.keys(converted).slice(0, 2), ['openapi', 'info'], 'openapi and info first')
  for (const path of ['/a/{id}', '/b/{id}']) {
    t.same((converted.paths as any)[path].get.parameters, [{ schema: { type: 'string' }, name: 'id', in: 'path', required: true }], `${path}: each converted once`)
  }
})

t.test('digest converts for an API only, and an identical body is answered unchanged before it is converted again', async (t) => {
  const api = digest({ op: 'digest', body: SWAGGER_YAML, shape: 'document', kind: 'openapi' })
  if (api.unchanged) throw new Error('unchanged')
  t.equal(api.convertedFrom, 'swagger-2.0')
  t.equal(api.format, 'yaml')
  t.match(api.text, /^openapi: 3\.0\.4\n/)
  t.equal(api.summary.openapi, '3.0.4')
  t.notOk(api.serialized)
  const asSchema = digest({ op: 'digest', body: SWAGGER_YAML, shape: 'document', kind: 'jsonschema' })
  if (asSchema.unchanged) throw new Error('unchanged')
  t.equal(asSchema.text, SWAGGER_YAML, 'a schema: the text as sent')
  t.notOk(asSchema.convertedFrom)
  t.not(asSchema.checksum, api.checksum)
  t.same(digest({ op: 'digest', body: SWAGGER_YAML, shape: 'document', kind: 'openapi', currentChecksum: api.checksum, currentRaw: api.raw }),
    { unchanged: true, checksum: api.checksum, raw: api.raw })
  t.match(digest({ op: 'digest', body: SWAGGER_YAML, shape: 'document', kind: 'openapi', currentChecksum: api.checksum }), { unchanged: true, checksum: api.checksum },
    'converted again, the same checksum')
  const envelope = digest({ op: 'digest', document: { swagger: '2.0', info: { title: 'a', version: '1' }, paths: {} }, kind: 'openapi' })
  t.match(envelope, { unchanged: false, convertedFrom: 'swagger-2.0', format: 'json' })
  t.notOk((envelope as { serialized?: true }).serialized, 'converted, not serialized')
})

t.test("a name that would reach the built-in prototypes is refused, and the prototypes are put back", async (t) => {
  // The upgrader writes the first `produces` type as a key of a fresh object: `__proto__` is Object.prototype.
  const document = JSON.parse('{"swagger":"2.0","info":{"title":"a","version":"1"},"produces":["__proto__"],' +
    '"paths":{"/a":{"get":{"responses":{"200":{"description":"ok","examples":{"foo":{"polluted":true}}}}}}}}')
  t.throws(() => convertToOpenApi(document, 'swagger-2.0'), { code: 'invalid_document', message: /could not be converted to OpenAPI 3: a name in it \(such as '__proto__'\)/ })
  t.equal(({} as Record<string, unknown>).examples, undefined, 'Object.prototype has no `examples`')
  t.notOk(Object.prototype.hasOwnProperty.call(Object.prototype, 'examples'))
  const fine = convertToOpenApi({ swagger: '2.0', info: { title: 'a', version: '1' }, paths: {} }, 'swagger-2.0')
  t.equal(fine.openapi, '3.0.4', 'the next conversion works as before')
})
