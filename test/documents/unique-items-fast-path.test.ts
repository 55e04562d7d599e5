/**
 * The fast path for `{type: 'array', uniqueItems: true}` (src/documents/unique-items-fast-path.ts)
 * answers what Ajv's own validator answers: the same verdict on every kind of array, and Ajv's very
 * errors when it fails. A lint of enums with duplicates of every kind finds the same things with the
 * validator cache (where the fast path lives) and without it.
 */
import { createRequire } from 'node:module'
import t from 'tap'
import { DEFAULT_RULESET } from '../../src/documents/defaults.js'
import { lintDocument } from '../../src/documents/lint.js'
import { spectral } from '../../src/documents/spectral.js'
import { UNIQUE_ARRAY_SCHEMA, withUniqueItemsFastPath } from '../../src/documents/unique-items-fast-path.js'
import { useValidatorCache } from '../../src/documents/validator-cache.js'

type Validator = ((data: unknown) => boolean) & { errors?: unknown }
type Compile = (schema: object, dialect: string, allErrors: boolean) => Validator

const require = createRequire(import.meta.url)
const ruleset = { checksum: 'unique-items-fast-path-test', document: JSON.parse(JSON.stringify(DEFAULT_RULESET)) }

const ARRAYS: unknown[] = [
  [], ['a'], ['a', 'b', 'c'], ['a', 'b', 'a'], [1, '1', true, 'true', null, 'null'], [1, 2, 1.0], [0, -0], [null, null],
  [true, false, true], Array.from({ length: 700 }, (_, i) => `t${i}.large`), [...Array.from({ length: 700 }, (_, i) => i), 699],
  [{ a: 1 }, { a: 1 }], [{ a: 1 }, { a: 2 }], [[1], [1]], [[1], [2]], ['x', { a: 1 }, 'x'], [1, [1]],
  'not an array', { 0: 'a', 1: 'a', length: 2 }, null, 3, undefined,
]

t.test('the fast path answers as Ajv does, in each dialect Spectral uses', async (t) => {
  spectral()
  const createAjvInstances = (require('@stoplight/spectral-functions/dist/schema/ajv.js') as { createAjvInstances: () => Compile }).createAjvInstances
  t.teardown(() => useValidatorCache(true))
  useValidatorCache(false)
  const ajv = createAjvInstances()
  for (const dialect of ['draft4', 'draft7', 'draft2020-12']) {
    const ajvValidator = ajv(JSON.parse(UNIQUE_ARRAY_SCHEMA), dialect, false)
    const fast = withUniqueItemsFastPath(UNIQUE_ARRAY_SCHEMA, ajvValidator)
    t.not(fast, ajvValidator, `${dialect}: the unique-array schema gets the fast path`)
    for (const data of ARRAYS) {
      const expected = ajvValidator(data)
      const expectedErrors = structuredClone(ajvValidator.errors)
      ajvValidator(['reset', 'reset'])
      t.equal(fast(data), expected, `${dialect}: ${JSON.stringify(data)?.slice(0, 40)} is ${expected ? 'valid' : 'invalid'}`)
      t.same(fast.errors, expectedErrors, `${dialect}: ${JSON.stringify(data)?.slice(0, 40)}: Ajv's errors`)
    }
  }
  const other = ajv({ type: 'array', uniqueItems: true, items: { type: 'string' } }, 'draft7', false)
  t.equal(withUniqueItemsFastPath('{"items":{"type":"string"},"type":"array","uniqueItems":true}', other), other, 'any other schema keeps Ajv\'s validator')
})

t.test('enums with duplicates are found the same with the fast path and without', async (t) => {
  t.teardown(() => useValidatorCache(true))
  const enums = {
    Distinct: { type: 'string', enum: Array.from({ length: 300 }, (_, i) => `v${i}`) },
    Repeated: { type: 'string', enum: ['a', 'b', 'a', 'c', 'b'] },
    Numbers: { type: 'number', enum: [1, 2, 3, 2] },
    Objects: { type: 'object', enum: [{ a: 1 }, { a: 1 }, { a: 2 }] },
    Mixed: { enum: ['1', 1, null, true] },
  }
  const oas3 = (openapi: string) => ({
    openapi, info: { title: 'Enums', version: '1.0.0', description: 'x', contact: { name: 'x' } }, servers: [{ url: 'https://api.example.com' }],
    tags: [{ name: 't', description: 't' }],
    paths: Object.fromEntries(Object.keys(enums).map((name) => [`/${name.toLowerCase()}`, { get: {
      operationId: `get${name}`, summary: 's', description: 'd', tags: ['t'],
      responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } } },
    } }])),
    components: { schemas: enums },
  })
  const swagger = {
    swagger: '2.0', info: { title: 'Enums', version: '1.0.0', description: 'x', contact: { name: 'x' } }, host: 'api.example.com', schemes: ['https'],
    tags: [{ name: 't', description: 't' }],
    paths: { '/e': { get: { operationId: 'e', summary: 's', description: 'd', tags: ['t'], parameters: [{ name: 'q', in: 'query', type: 'string', enum: ['x', 'y', 'x'] }], responses: { '200': { description: 'ok', schema: { $ref: '#/definitions/Repeated' } } } } } },
    definitions: enums,
  }
  for (const [name, document] of Object.entries({ 'OpenAPI 3.1': oas3('3.1.0'), 'OpenAPI 3.0': oas3('3.0.3'), 'Swagger 2.0': swagger })) {
    const canonical = JSON.stringify(document)
    useValidatorCache(false)
    const ajvOnly = await lintDocument(canonical, ruleset)
    useValidatorCache(true)
    const fast = await lintDocument(canonical, ruleset)
    t.same(fast, ajvOnly, `${name}: the same findings`)
    const duplicates = ajvOnly.filter((f) => f.code === 'duplicated-entry-in-enum')
    t.ok(duplicates.length >= 3, `${name}: the duplicates were found (${duplicates.map((f) => f.message).join('; ')})`)
  }
})
