import t from 'tap'
import { validateOpenApi } from '../../src/documents/openapi.js'
import { MAX_PROBLEMS } from '../../src/documents/limits.js'
import { openapi30, openapi31, registryError } from './helpers.js'

t.test('valid OpenAPI 3.0 and 3.1 documents pass, with their summary', async (t) => {
  const r30 = validateOpenApi(openapi30())
  t.same(r30.problems, [])
  t.same(r30.summary, { openapi: '3.0.3', title: 'Pets', version: '1.0.0' })
  const r31 = validateOpenApi(openapi31())
  t.same(r31.problems, [])
  t.same(r31.summary, { openapi: '3.1.0', title: 'Pets', version: '1.0.0' })
  // 3.1 specifics: webhooks without paths, servers with variables, relative URLs.
  const webhooks = validateOpenApi({
    openapi: '3.1.1',
    info: { title: 'Hooks', version: '2' },
    servers: [{ url: 'https://{host}/v1', variables: { host: { default: 'example.com' } } }, { url: '/relative' }],
    webhooks: { ping: { post: { responses: { '200': { description: 'ok' } } } } },
  })
  t.same(webhooks.problems, [])
  // What the first published 3.1 schema got wrong, and the specification allows.
  const allowed = validateOpenApi(
    openapi31({
      info: { title: 'T', version: '1', license: { name: 'MIT' } },
      servers: [{ url: 'https://{env}.example.com', variables: { env: { default: 'api', description: 'the environment' } } }],
      paths: {
        '/shared': { $ref: '#/components/pathItems/Shared', summary: 'a path item may sit next to its $ref' },
        '/pets': {
          get: {
            responses: { '200': { $ref: '#/components/responses/Ok', description: 'siblings of a $ref are ignored' } },
            externalDocs: { url: '/docs/pets' },
          },
        },
      },
      components: {
        responses: { Ok: { description: 'ok' } },
        pathItems: { Shared: { get: { responses: { '204': { description: 'none' } } } } },
      },
    }),
  )
  t.same(allowed.problems, [])
  const both = validateOpenApi(openapi31({ info: { title: 'T', version: '1', license: { name: 'MIT', identifier: 'MIT', url: 'https://x' } } }))
  t.equal(both.problems.length, 1, 'a license has an identifier or a url, not both')
})

t.test('OpenAPI 3.2 documents are validated against the 3.2 schema, with its new members', async (t) => {
  const doc = {
    openapi: '3.2.0',
    $self: 'https://example.com/openapi.yaml',
    info: { title: 'Events', version: '1' },
    paths: {
      '/search': {
        query: {
          operationId: 'search',
          parameters: [{ name: 'filter', in: 'querystring', content: { 'application/x-www-form-urlencoded': { schema: { type: 'object' } } } }],
          responses: { '200': { description: 'ok' } },
        },
        additionalOperations: { COPY: { operationId: 'copy', responses: { '204': { description: 'copied' } } } },
      },
      '/events': {
        get: {
          operationId: 'events',
          responses: { '200': { description: 'a stream', content: { 'application/jsonl': { itemSchema: { type: 'object', properties: { id: { type: 'string' } } } } } } },
        },
      },
    },
  }
  const result = validateOpenApi(doc)
  t.same(result.problems, [])
  t.same(result.summary, { openapi: '3.2.0', title: 'Events', version: '1' })
  // The same 3.2 members in a 3.1 document are not allowed there.
  const as31 = validateOpenApi({ ...doc, openapi: '3.1.1' })
  t.ok(as31.problems.some((p) => p.path?.join('/') === '$self' && /'\$self' is not allowed/.test(p.message)), JSON.stringify(as31.problems))
  t.ok(as31.problems.some((p) => /querystring|'query' is not allowed|additionalOperations/.test(p.message)))
  const bad = validateOpenApi({ ...doc, paths: { '/p': { get: { parameters: [{ name: 'x', in: 'body', schema: {} }], responses: { '200': {} } } } } })
  t.match(bad.problems, [{ path: ['paths', '/p', 'get', 'parameters', 0, 'in'], message: /must be one of: .*querystring/ }])
  t.equal(bad.problems.length, 1, 'a 3.2 response needs no description')
})

t.test('the current official schemas decide what the first published 3.1 schema got wrong', async (t) => {
  const parameter = (extra: Record<string, unknown>) => openapi31({
    paths: { '/p': { get: { parameters: [{ name: 'a', in: 'query', schema: { type: 'string' }, ...extra }], responses: { '200': { description: 'ok' } } } } },
  })
  for (const line of ['3.1.1', '3.2.0']) {
    const bothExamples = validateOpenApi({ ...parameter({ example: 'a', examples: { one: { value: 'a' } } }), openapi: line })
    t.same(bothExamples.problems, [{ path: ['paths', '/p', 'get', 'parameters', 0], message: "'example' and 'examples' cannot be used together" }],
      `${line}: example and examples together are refused, in one problem`)
    const header = validateOpenApi(openapi31({
      openapi: line,
      paths: { '/p': { get: { responses: { '200': { description: 'ok', headers: { H: { allowReserved: true, schema: { type: 'string' } } } } } } } },
    }))
    t.match(header.problems, [{ message: /'allowReserved' is not allowed/ }], `${line}: allowReserved is not a header member`)
    const link = validateOpenApi(openapi31({
      openapi: line,
      paths: { '/p': { get: { operationId: 'p', responses: { '200': { description: 'ok', links: { self: { operationId: 'p', server: { url: 'https://api.example.com' } } } } } } } },
    }))
    t.same(link.problems, [], `${line}: a Link Object may name a server`)
  }
})

t.test('Swagger 2.0 and other versions are refused with a clear message', async (t) => {
  const swagger = registryError(() => validateOpenApi({ swagger: '2.0', info: { title: 'x', version: '1' }, paths: {} }))
  t.equal(swagger.code, 'invalid_document')
  t.match(swagger.message, /Swagger 2\.0 is not supported: convert the document to OpenAPI 3/)
  t.same(swagger.errors?.[0]?.path, ['swagger'])
  t.match(registryError(() => validateOpenApi({ openapi: '2.0', info: {}, paths: {} })).message, /OpenAPI version '2\.0' is not supported: use 3\.0\.x, 3\.1\.x or 3\.2\.x/)
  t.match(registryError(() => validateOpenApi({ openapi: '3.3.0', info: {}, paths: {} })).message, /not supported/)
  t.match(registryError(() => validateOpenApi({ openapi: 3.1, info: {}, paths: {} })).message, /'openapi' must be a string/)
  t.match(registryError(() => validateOpenApi({ info: {}, paths: {} })).message, /'openapi' member .* is missing/)
})

t.test('invalid documents give a path and a readable message', async (t) => {
  const cases: [string, Record<string, unknown>, { path: (string | number)[]; message: RegExp }][] = [
    [
      '3.0 response without description',
      openapi30({ paths: { '/p': { get: { responses: { '200': {} } } } } }),
      { path: ['paths', '/p', 'get', 'responses', '200'], message: /missing required property 'description'/ },
    ],
    [
      '3.1 response without description',
      openapi31({ paths: { '/p': { get: { responses: { '200': {} } } } } }),
      { path: ['paths', '/p', 'get', 'responses', '200'], message: /missing required property 'description'/ },
    ],
    [
      '3.0 unknown operation member',
      openapi30({ paths: { '/p': { get: { summery: 'typo', responses: { '200': { description: 'ok' } } } } } }),
      { path: ['paths', '/p', 'get', 'summery'], message: /property 'summery' is not allowed here/ },
    ],
    [
      '3.1 unknown operation member',
      openapi31({ paths: { '/p': { get: { summery: 'typo', responses: { '200': { description: 'ok' } } } } } }),
      { path: ['paths', '/p', 'get', 'summery'], message: /property 'summery' is not allowed here/ },
    ],
    [
      '3.0 bad schema type',
      openapi30({ components: { schemas: { A: { type: 'strin' } } } }),
      { path: ['components', 'schemas', 'A', 'type'], message: /must be one of: array, boolean, integer, number, object, string/ },
    ],
    [
      '3.0 parameter location',
      openapi30({ paths: { '/p': { get: { parameters: [{ name: 'x', in: 'qurey', schema: { type: 'string' } }], responses: { '200': { description: 'ok' } } } } } }),
      { path: ['paths', '/p', 'get', 'parameters', 0, 'in'], message: /must be one of: path, query, header, cookie/ },
    ],
    [
      '3.0 path parameter not required',
      openapi30({ paths: { '/p/{x}': { get: { parameters: [{ name: 'x', in: 'path', schema: { type: 'string' } }], responses: { '200': { description: 'ok' } } } } } }),
      { path: ['paths', '/p/{x}', 'get', 'parameters', 0], message: /missing required property 'required'/ },
    ],
    ['missing info', { openapi: '3.0.0', paths: {} }, { path: [], message: /missing required property 'info'/ }],
    [
      'a $ref that is not a string',
      openapi30({ components: { schemas: { A: { $ref: 5 } } } }),
      { path: ['components', 'schemas', 'A', '$ref'], message: /must be string/ },
    ],
  ]
  for (const [name, doc, expected] of cases) {
    const { problems } = validateOpenApi(doc)
    t.equal(problems.length, 1, `${name}: one problem, not a pile of oneOf noise (${JSON.stringify(problems)})`)
    t.same(problems[0].path, expected.path, name)
    t.match(problems[0].message, expected.message, name)
  }
})

t.test('problems are capped', async (t) => {
  const paths: Record<string, unknown> = {}
  for (let i = 0; i < 200; i++) paths[`/p${i}`] = { get: { responses: { '200': {} } } }
  const { problems } = validateOpenApi(openapi30({ paths }))
  t.equal(problems.length, MAX_PROBLEMS)
})

t.test('internal $refs must resolve; external ones are refused, never fetched', async (t) => {
  const doc = openapi30({
    paths: {
      '/p': {
        get: {
          responses: {
            '200': { $ref: '#/components/responses/A~1B' },
            '201': { $ref: '#/components/responses/A%7E1B' },
            '202': { $ref: '#/components/responses/Nope' },
            '203': { $ref: '#/components/responses/Ok' },
            '204': { $ref: 'file:///etc/passwd' },
            '205': { $ref: 'http://127.0.0.1:9/api.yaml#/x' },
            '206': { $ref: 'other.yaml#/components/responses/Ok' },
          },
        },
      },
    },
    components: {
      responses: { 'A/B': { description: 'slash in a name' }, Ok: { description: 'ok' } },
      schemas: { List: { type: 'array', items: { $ref: '#/components/schemas/List/items/0' } } },
    },
  })
  const { problems } = validateOpenApi(doc)
  const at = (code: string) => problems.filter((p) => p.path?.[4] === code)
  t.same(at('200'), [], '~1 decodes to /')
  t.same(at('201'), [], 'percent-encoding decodes')
  t.same(at('203'), [])
  t.same(at('202'), [{ path: ['paths', '/p', 'get', 'responses', '202'], message: "unresolved $ref '#/components/responses/Nope': 'Nope' does not exist" }])
  t.same(at('204'), [
    {
      path: ['paths', '/p', 'get', 'responses', '204'],
      message: "external $ref 'file:///etc/passwd' is not allowed: the registry never fetches files or URLs; bundle the document first",
    },
  ])
  t.match(at('205')[0]?.message, /^external \$ref 'http:\/\/127\.0\.0\.1:9\/api\.yaml#\/x' is not allowed/)
  t.match(at('206')[0]?.message, /^external \$ref 'other\.yaml#/)
  t.ok(problems.some((p) => /unresolved \$ref '#\/components\/schemas\/List\/items\/0'/.test(p.message)), 'a pointer into a non-array')
  t.ok(problems.every((p) => !/root:/.test(p.message)), 'nothing was read')
})

t.test('$refs with hostile pointers do not reach prototypes', async (t) => {
  const doc = openapi30({
    components: {
      schemas: {
        A: { $ref: '#/__proto__/polluted' },
        B: { $ref: '#/components/constructor' },
        C: { $ref: '#/components/schemas/A/toString' },
        D: { $ref: '#/%E0%A4%A' },
      },
    },
  })
  const { problems } = validateOpenApi(doc)
  const refs = problems.filter((p) => /\$ref/.test(p.message))
  t.equal(refs.length, 4, JSON.stringify(refs))
  t.ok(refs.every((p) => /^unresolved/.test(p.message)))
})

t.test('a broken $ref written at several places is reported at each, a good one at none', async (t) => {
  const missing = { $ref: '#/components/responses/Nope' }
  const good = { $ref: '#/components/responses/Ok' }
  const doc = openapi30({
    paths: {
      '/a': { get: { responses: { 200: good, 404: missing } } },
      '/b': { get: { responses: { 200: good, 404: missing } } },
    },
    components: { responses: { Ok: { description: 'ok' } } },
  })
  const refs = validateOpenApi(doc).problems.filter((p) => /\$ref/.test(p.message))
  t.same(refs.map((p) => p.path), [['paths', '/a', 'get', 'responses', '404'], ['paths', '/b', 'get', 'responses', '404']])
  t.ok(refs.every((p) => p.message === "unresolved $ref '#/components/responses/Nope': 'Nope' does not exist"))
})
