/**
 * Validators kept by schema text (issue 19; src/documents/validator-cache.ts) give exactly Spectral's
 * findings: each document is linted with the cache off, then on (cold, then warm), and the findings must
 * be the same, with the example rules, which are what use the validators, among them.
 */
import { createRequire } from 'node:module'
import t from 'tap'
import { DEFAULT_RULESET } from '../../src/documents/defaults.js'
import { lintDocument } from '../../src/documents/lint.js'
import { compiledValidators, useValidatorCache } from '../../src/documents/validator-cache.js'

const ruleset = { checksum: 'validator-cache-test', document: JSON.parse(JSON.stringify(DEFAULT_RULESET)) }

const pet = {
  type: 'object',
  required: ['name'],
  properties: { id: { type: 'integer', format: 'int64' }, name: { type: 'string', minLength: 2 }, tag: { type: 'string', enum: ['cat', 'dog'] } },
}

function operation(example: unknown, schema: unknown = { $ref: '#/components/schemas/Pet' }) {
  return {
    operationId: `op${JSON.stringify(example).length}${Math.random().toString(36).slice(2, 7)}`,
    summary: 'An operation',
    description: 'An operation.',
    tags: ['pets'],
    responses: { '200': { description: 'ok', content: { 'application/json': { schema, example } } } },
  }
}

/** OpenAPI 3.x documents whose examples break their schemas in several ways, through shared and inline schemas. */
function documents(): Record<string, unknown> {
  const base = (openapi: string, paths: Record<string, unknown>, schemas: Record<string, unknown>) => ({
    openapi, info: { title: 'Examples', version: '1.0.0', description: 'x', contact: { name: 'x' } }, servers: [{ url: 'https://api.example.com' }],
    tags: [{ name: 'pets', description: 'pets' }], paths, components: { schemas },
  })
  return {
    'one shared schema, examples good and bad at many operations': base('3.1.0', Object.fromEntries([
      { name: 'Rex', id: 1 }, { id: 'x' }, { name: 'R' }, { name: 'Tom', tag: 'bird' }, { name: 'Ok', id: 2, tag: 'cat' }, [],
    ].map((example, i) => [`/pets${i}`, { get: operation(example) }])), { Pet: { ...pet, example: { name: 5 } } }),
    'inline schemas, nested and composed': base('3.0.3', {
      '/a': { get: operation({ items: [{ n: 'x' }] }, { type: 'object', properties: { items: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } } } } } }) },
      '/b': { get: operation({ kind: 'z' }, { oneOf: [{ type: 'object', properties: { kind: { const: 'a' } }, required: ['kind'] }, { $ref: '#/components/schemas/Pet' }] }) },
      '/c': { get: operation(null, { type: 'string', nullable: true }) },
      '/d': { get: operation('not-a-date', { type: 'string', format: 'date' }) },
    }, { Pet: pet }),
    'a schema with $id and a property named id': base('3.1.0', {
      '/e': { get: operation({ id: 'x' }, { $id: 'https://example.com/thing', type: 'object', properties: { id: { type: 'integer' } } }) },
      '/f': { get: operation({ id: 'y' }, { $id: 'https://example.com/thing', type: 'object', properties: { id: { type: 'string' } } }) },
    }, {}),
    // Spectral's Ajv resolves a URI to a schema of that $id it compiled earlier in the same lint (found
    // by the lint differential, test/documents/lint-differential.test.ts).
    'schemas referred to by their $id, from a $ref and from a $schema': base('3.1.0', {
      '/id1': { get: operation({ n: 'x' }, { $ref: '#/components/schemas/Thing' }) },
      '/id2': { get: operation({ kind: 'b' }, { $ref: '#/components/schemas/Kind' }) },
      '/id3': { get: operation({ t: { n: 'y' } }, { type: 'object', properties: { t: { $ref: 'https://example.com/thing' } } }) },
      '/id4': { get: operation({ n: 'z' }, { $schema: 'https://example.com/kind', type: 'object', properties: { n: { type: 'integer' } } }) },
    }, {
      Thing: { $id: 'https://example.com/thing', type: 'object', properties: { n: { type: 'integer' } } },
      Kind: { $id: 'https://example.com/kind', type: 'object', properties: { kind: { enum: ['a'] } } },
    }),
    // Draft 04 names a schema by `id`: a property called id names nothing (the cache keeps its
    // validator); an `id` keyword of a subschema does, and so may an object Ajv reads as a schema (an
    // `example` member of a schema) with a string id.
    'OpenAPI 3.0: a property named id, and schemas whose example objects have a string id': base('3.0.3', {
      '/g': { get: operation({ id: 'x', name: 'Rex' }, { $ref: '#/components/schemas/Pet' }) },
      '/h': { get: operation({ id: 7 }, { type: 'object', properties: { id: { type: 'string' } }, example: { id: 'a' } }) },
      '/i': { get: operation({ id: 8 }, { type: 'object', properties: { id: { type: 'string' }, n: { type: 'integer' } }, example: { id: 'a', n: 1 } }) },
      '/j': { get: operation({ owner: 1 }, { type: 'object', properties: { owner: { id: 'urn:example:owner', type: 'object' } } }) },
    }, { Pet: pet }),
    'a recursive schema': base('3.1.0', {
      '/tree': { get: operation({ value: 1, children: [{ value: 'two' }] }, { $ref: '#/components/schemas/Node' }) },
    }, { Node: { type: 'object', properties: { value: { type: 'integer' }, children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } } } }),
  }
}

t.test('the findings are the same with the validator cache off, on and warm', async (t) => {
  t.teardown(() => useValidatorCache(true))
  for (const [name, document] of Object.entries(documents())) {
    const canonical = JSON.stringify(document)
    useValidatorCache(false)
    const spectral = await lintDocument(canonical, ruleset)
    useValidatorCache(true)
    const cold = await lintDocument(canonical, ruleset)
    const compiledCold = compiledValidators()
    const warm = await lintDocument(canonical, ruleset)
    t.same(cold, spectral, `${name}: the same findings with the cache`)
    t.same(warm, spectral, `${name}: and with validators kept from the lint before`)
    t.equal(compiledValidators(), compiledCold, `${name}: the warm lint compiled no validator`)
    // Spectral checks no example against a schema that contains itself: nothing to compare there.
    if (name !== 'a recursive schema') {
      t.ok(spectral.some((f) => /example/.test(f.code)), `${name}: the example rules found something (${spectral.filter((f) => /example/.test(f.code)).length})`)
    }
  }
})

t.test('one document after another: what a kept validator says is what a new one would', async (t) => {
  t.teardown(() => useValidatorCache(true))
  // The same schema text in two documents, each with its own example.
  const docs = Object.values(documents())
  useValidatorCache(true)
  const withCache = []
  for (const document of [...docs, ...docs.reverse()]) withCache.push(await lintDocument(JSON.stringify(document), ruleset))
  useValidatorCache(false)
  const without = []
  for (const document of [...Object.values(documents()), ...Object.values(documents()).reverse()]) without.push(await lintDocument(JSON.stringify(document), ruleset))
  t.same(withCache.map((f) => f.map(({ code, path, message }) => ({ code, path, message }))),
    without.map((f) => f.map(({ code, path, message }) => ({ code, path, message }))))
})

t.test('OpenAPI 3.0: a schema with a property called id is kept by the cache, one with an id keyword in it is not', async (t) => {
  t.teardown(() => useValidatorCache(true))
  useValidatorCache(true)
  // Every compilation of Spectral's Ajv, the document's own instances' too.
  const require = createRequire(import.meta.url)
  const core = (createRequire(require.resolve('@stoplight/spectral-functions'))('ajv/dist/core') as { default: { prototype: { compile: (...args: unknown[]) => unknown } } }).default.prototype
  const compile = core.compile
  let compilations = 0
  core.compile = function (this: unknown, ...args: unknown[]) {
    compilations += 1
    return compile.apply(this, args)
  }
  t.teardown(() => { core.compile = compile })
  const document = (schema: unknown) => JSON.stringify({
    openapi: '3.0.3', info: { title: 'Ids', version: '1.0.0' },
    paths: { '/pets': { get: operation({ id: 'not-a-number' }, schema) } },
  })
  const named = { type: 'object', properties: { id: { type: 'integer' } } }
  const first = await lintDocument(document(named), ruleset)
  t.ok(first.some((f) => f.code === 'oas3-valid-media-example'), 'the example that breaks the schema with a property called id is found')
  compilations = 0
  t.same(await lintDocument(document(named), ruleset), first, 'again')
  t.equal(compilations, 0, 'and the next lint compiles nothing: the validator was kept')
  // A draft-04 `id` keyword at a schema's place, which Spectral's example rules keep (they drop the
  // `id` of other objects Ajv would read as schemas).
  const sampled = { ...named, properties: { ...named.properties, owner: { id: 'urn:example:owner', type: 'object' } } }
  const own = await lintDocument(document(sampled), ruleset)
  compilations = 0
  t.same(await lintDocument(document(sampled), ruleset), own, 'a schema with a draft-04 id of a subschema')
  t.ok(compilations > 0, "is compiled again by the document's own Ajv at every lint")
  useValidatorCache(false)
  t.same(own, await lintDocument(document(sampled), ruleset), "with Spectral's findings")
})
