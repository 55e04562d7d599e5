import t from 'tap'
import { draftOf, validateJsonSchema } from '../../src/documents/jsonschema.js'
import { registryError } from './helpers.js'

const valid: Record<string, Record<string, unknown>> = {
  'draft-04': {
    $schema: 'http://json-schema.org/draft-04/schema#',
    id: 'http://example.com/pet.json',
    type: 'object',
    properties: { id: { type: 'integer' }, price: { type: 'number', minimum: 0, exclusiveMinimum: true } },
    definitions: { tag: { type: 'string' } },
    additionalProperties: { $ref: '#/definitions/tag' },
  },
  'draft-06': {
    $schema: 'http://json-schema.org/draft-06/schema#',
    type: 'object',
    properties: { price: { type: 'number', exclusiveMinimum: 0 }, tags: { contains: { const: 'x' } } },
    examples: [{ price: 1 }],
  },
  'draft-07': {
    $schema: 'http://json-schema.org/draft-07/schema#',
    if: { properties: { kind: { const: 'dog' } } },
    then: { required: ['bark'] },
    else: { $ref: '#/definitions/other' },
    definitions: { other: { type: 'object' } },
  },
  '2019-09': {
    $schema: 'https://json-schema.org/draft/2019-09/schema',
    $defs: { name: { type: 'string', minLength: 1 } },
    properties: { name: { $ref: '#/$defs/name' } },
    unevaluatedProperties: false,
    dependentRequired: { a: ['b'] },
  },
  '2020-12': {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://example.com/schemas/order.json',
    type: 'object',
    prefixItems: [{ type: 'string' }],
    $defs: { line: { $anchor: 'line', type: 'object' } },
    properties: {
      lines: { type: 'array', items: { $ref: '#line' } },
      same: { $ref: 'order.json#/$defs/line' },
      absolute: { $ref: 'https://example.com/schemas/order.json#/$defs/line' },
    },
  },
}

const invalid: Record<string, [Record<string, unknown>, (string | number)[], RegExp]> = {
  'draft-04': [{ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object', exclusiveMinimum: 5, minimum: 1 }, ['exclusiveMinimum'], /must be boolean/],
  'draft-06': [{ $schema: 'http://json-schema.org/draft-06/schema#', type: 'objekt' }, ['type'], /must be one of: array, boolean, integer, null, number, object, string/],
  'draft-07': [{ $schema: 'http://json-schema.org/draft-07/schema#', properties: { a: { minLength: -1 } } }, ['properties', 'a', 'minLength'], /must be >= 0/],
  '2019-09': [{ $schema: 'https://json-schema.org/draft/2019-09/schema', required: 'name' }, ['required'], /must be array/],
  '2020-12': [{ type: 'object', properties: { list: { items: [1] } } }, ['properties', 'list', 'items'], /must be object or boolean/],
}

t.test('each draft: a valid schema passes, an invalid one gives path and message', async (t) => {
  for (const [draft, schema] of Object.entries(valid)) t.same(validateJsonSchema(schema), [], `${draft} valid`)
  for (const [draft, [schema, path, message]] of Object.entries(invalid)) {
    const problems = validateJsonSchema(schema)
    t.ok(problems.length >= 1, `${draft} invalid`)
    t.same(problems[0].path, path, draft)
    t.match(problems[0].message, message, draft)
  }
  t.same(validateJsonSchema({ type: 'string' }), [], 'no $schema: 2020-12')
  t.same(validateJsonSchema({ type: 'array', prefixItems: [{ type: 'string' }] }), [])
})

t.test('$schema spellings', async (t) => {
  t.equal(draftOf('http://json-schema.org/draft-07/schema#'), 'draft-07')
  t.equal(draftOf('http://json-schema.org/draft-07/schema'), 'draft-07')
  t.equal(draftOf('https://json-schema.org/draft-07/schema#'), 'draft-07')
  t.equal(draftOf('https://json-schema.org/draft-04/schema'), 'draft-04')
  t.equal(draftOf('http://json-schema.org/draft/2020-12/schema'), '2020-12')
  t.equal(draftOf('https://json-schema.org/draft/2019-09/schema#'), '2019-09')
  t.equal(draftOf('https://json-schema.org/draft/2021-01/schema'), null)
  t.same(validateJsonSchema({ $schema: 'https://json-schema.org/draft-07/schema', type: 'string' }), [])
})

t.test('an unknown $schema is refused, naming the supported ones', async (t) => {
  for (const $schema of ['http://example.com/my-meta', 'http://json-schema.org/draft-03/schema#', 'https://json-schema.org/draft/next/schema', 42]) {
    const err = registryError(() => validateJsonSchema({ $schema, type: 'object' }))
    t.equal(err.code, 'invalid_document')
    t.match(err.message, /is not supported: use one of http:\/\/json-schema\.org\/draft-04\/schema#, .*draft-06.*draft-07.*2019-09.*2020-12/)
    t.same(err.errors?.[0]?.path, ['$schema'])
  }
})

t.test('references: external refused, unresolved reported, data left alone', async (t) => {
  const ext = validateJsonSchema({
    properties: {
      a: { $ref: 'file:///etc/passwd' },
      b: { $ref: 'http://127.0.0.1:9/schema.json' },
      c: { $ref: 'common.json#/$defs/x' },
    },
  })
  t.same(ext.map((p) => p.path), [['properties', 'a'], ['properties', 'b'], ['properties', 'c']])
  t.ok(ext.every((p) => /^external \$ref '.*' is not allowed: the registry never fetches files or URLs; bundle the document first$/.test(p.message)))

  const unresolved = validateJsonSchema({ $defs: { a: { type: 'string' } }, properties: { x: { $ref: '#/$defs/b' } } })
  t.same(unresolved, [{ path: ['properties', 'x'], message: "unresolvable $ref '#/$defs/b': 'b' does not exist" }])

  const anchor = validateJsonSchema({ properties: { x: { $ref: '#nowhere' } } })
  t.equal(anchor.length, 1)
  t.match(anchor[0].message, /unresolvable \$ref '.*nowhere'/)

  const nested = validateJsonSchema({
    $id: 'https://example.com/root.json',
    $defs: { b: { $id: 'b.json', $defs: { c: { type: 'string' } } } },
    properties: { ok: { $ref: 'b.json#/$defs/c' }, bad: { $ref: 'b.json#/$defs/nope' } },
  })
  t.equal(nested.length, 1)
  t.match(nested[0].message, /unresolvable \$ref '.*b\.json#\/\$defs\/nope'/)

  t.same(validateJsonSchema({ $schema: 'http://json-schema.org/draft-07/schema#', allOf: [{ $ref: 'http://json-schema.org/draft-07/schema#' }] }), [], 'the metaschema is built in, nothing to fetch')
  t.same(validateJsonSchema({ enum: [{ $ref: 'http://x/' }], const: { $ref: 'file:///etc/passwd' }, default: { $ref: '#/nope' }, examples: [{ $ref: 'y' }] }), [], '$ref inside data is data')
  t.same(validateJsonSchema({ properties: { $ref: { type: 'string' }, enum: { type: 'string' } } }), [], 'properties named like keywords')
})

t.test('schemas that do not compile are refused', async (t) => {
  const pattern = validateJsonSchema({ pattern: '[' })
  t.equal(pattern.length, 1)
  t.match(pattern[0].message, /regular expression/)
  t.same(validateJsonSchema({ pattern: '^[\\w-]+$' }), [], 'a pattern that is only valid without the u flag is accepted')
  const dup = validateJsonSchema({ $defs: { a: { $id: 'https://x.example/a' }, b: { $id: 'https://x.example/a' } } })
  t.equal(dup.length, 1)
  t.match(dup[0].message, /cannot be compiled/)
})

t.test('a self-referencing schema compiles', async (t) => {
  t.same(validateJsonSchema({ $defs: { node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/node' } } } } }, $ref: '#/$defs/node' }), [])
})
