import t from 'tap'
import fs from 'node:fs'
import { lintDocument } from '../../src/documents/lint.js'
import { canonicalJson } from '../../src/documents/canonical.js'
import { listeningServer, openapi30, openapi31, passwdMarker, registryErrorAsync } from './helpers.js'

const descriptions = {
  checksum: 'sha256:descriptions',
  document: {
    rules: {
      'operation-description': {
        description: 'Operations need a description',
        message: '{{path}} has no description',
        severity: 'warn',
        given: '$.paths[*][get,put,post,delete,patch]',
        then: { field: 'description', function: 'truthy' },
      },
      'no-x-internal': {
        severity: 'error',
        given: '$..[?(@property.match(/^x-internal/))]',
        then: { function: 'falsy' },
      },
      'title-case': { severity: 'info', given: '$.info.title', then: { function: 'casing', functionOptions: { type: 'pascal' } } },
      'summary-hint': { severity: 'hint', given: '$.paths[*][*]', then: { field: 'summary', function: 'defined' } },
    },
  },
}

function doc(): Record<string, unknown> {
  return openapi30({
    info: { title: 'pets api', version: '1' },
    paths: {
      '/b': { get: { summary: 'b', responses: { '200': { description: 'ok' } } }, delete: { description: 'no summary', responses: { '204': { description: 'gone' } } } },
      '/a': {
        get: { summary: 'a', description: 'has one', responses: { '200': { description: 'ok' } } },
        post: { summary: 'a', 'x-internal': true, responses: { '200': { description: 'ok' } } },
      },
    },
  })
}

t.test('a ruleset with core functions lints with the expected findings, sorted', async (t) => {
  const findings = await lintDocument(canonicalJson(doc()), descriptions)
  t.same(findings, [
    { code: 'title-case', message: 'must be pascal case', severity: 'info', path: ['info', 'title'] },
    { code: 'operation-description', message: '#/paths/~1a/post has no description', severity: 'warn', path: ['paths', '/a', 'post'] },
    { code: 'no-x-internal', message: '"x-internal" property must be falsy', severity: 'error', path: ['paths', '/a', 'post', 'x-internal'] },
    { code: 'summary-hint', message: '"delete.summary" property must be defined', severity: 'hint', path: ['paths', '/b', 'delete'] },
    { code: 'operation-description', message: '#/paths/~1b/get has no description', severity: 'warn', path: ['paths', '/b', 'get'] },
  ])
  // Deterministic: same input, same output (and the compiled ruleset comes from the cache).
  t.same(await lintDocument(canonicalJson(doc()), descriptions), findings)
})

t.test('the default ruleset (spectral:oas recommended) lints OpenAPI 3.0 and 3.1', async (t) => {
  const ruleset = { checksum: 'sha256:default', document: { extends: [['spectral:oas', 'recommended']] } }
  const f30 = await lintDocument(canonicalJson(openapi30()), ruleset)
  t.ok(f30.some((f) => f.code === 'info-contact' && f.severity === 'warn'))
  t.ok(f30.some((f) => f.code === 'oas3-api-servers'))
  const f31 = await lintDocument(canonicalJson(openapi31()), ruleset)
  t.ok(f31.some((f) => f.code === 'info-contact'))
  for (const f of [...f30, ...f31]) {
    t.type(f.code, 'string')
    t.ok(['error', 'warn', 'info', 'hint'].includes(f.severity))
    t.ok(Array.isArray(f.path))
  }
  // A document no format of the ruleset recognizes gets Spectral's warning about that.
  const other = await lintDocument('{"hello":"world"}', ruleset)
  t.same(other.map((f) => f.code), ['unrecognized-format'])
})

t.test('an unusable ruleset is an invalid_document error', async (t) => {
  await t.rejects(lintDocument('{}', { checksum: 'sha256:bad', document: { rules: { r: { given: '$', then: { function: 'evil' } } } } }), {
    code: 'invalid_document',
    message: /the ruleset cannot be used for linting/,
  })
})

/**
 * A rule whose JSONPath filter calls a string method on `@property`: under an array, `@property` is an
 * index (a number, and 0 is falsy), so the filter throws on the second item. Plain Spectral throws too.
 */
const ERROR_BODIES_RULESET = {
  checksum: 'sha256:error-bodies',
  document: {
    rules: {
      'info-title': { severity: 'warn', given: '$.info', then: { field: 'title', function: 'truthy' } },
      'error-bodies': {
        severity: 'warn',
        given: '$..[responses][?(@property && @property.match(/^(4|5)/))][content]',
        then: { function: 'truthy' },
      },
    },
  },
}

/** An OpenAPI document with a schema example holding a `responses` array of two items. */
function docWithResponsesArray(items: number): Record<string, unknown> {
  return openapi30({
    components: {
      schemas: { Log: { type: 'object', example: { responses: Array.from({ length: items }, (_, i) => ({ content: `item ${i}` })) } } },
    },
  })
}

t.test('a ruleset whose rule throws on this document is a ruleset_failed error naming the rule', async (t) => {
  t.same(await lintDocument(canonicalJson(docWithResponsesArray(1)), ERROR_BODIES_RULESET), [], 'one item (index 0): the filter is false, no throw')
  const err = await registryErrorAsync(lintDocument(canonicalJson(docWithResponsesArray(2)), ERROR_BODIES_RULESET))
  t.equal(err.code, 'ruleset_failed')
  t.equal(err.status, 422)
  t.match(err.message, /^the ruleset fails on this document \(Spectral itself does\): rule 'error-bodies' threw TypeError: .*match is not a function/)
  t.same(err.errors?.map((e) => e.code), ['error-bodies'], 'only the rule that threw is named')
})

t.test('external $refs in a linted document are never read or fetched', async (t) => {
  const server = await listeningServer()
  t.teardown(server.close)
  const reads: string[] = []
  const original = { readFile: fs.readFile, readFileSync: fs.readFileSync, open: fs.open, promisesReadFile: fs.promises.readFile }
  const record = (p: unknown) => {
    const s = String(p)
    if (!s.includes('node_modules') && !s.endsWith('.js') && !s.endsWith('.json') && !s.endsWith('.ts')) reads.push(s)
  }
  t.teardown(() => Object.assign(fs, { readFile: original.readFile, readFileSync: original.readFileSync, open: original.open }))
  t.teardown(() => {
    fs.promises.readFile = original.promisesReadFile
  })
  Object.assign(fs, {
    readFile: (p: unknown, ...rest: unknown[]) => (record(p), (original.readFile as (...a: unknown[]) => unknown)(p, ...rest)),
    readFileSync: (p: unknown, ...rest: unknown[]) => (record(p), (original.readFileSync as (...a: unknown[]) => unknown)(p, ...rest)),
    open: (p: unknown, ...rest: unknown[]) => (record(p), (original.open as (...a: unknown[]) => unknown)(p, ...rest)),
  })
  fs.promises.readFile = ((p: unknown, ...rest: unknown[]) => (record(p), (original.promisesReadFile as (...a: unknown[]) => unknown)(p, ...rest))) as typeof fs.promises.readFile

  const document = openapi30({
    paths: {
      '/a': {
        get: {
          responses: {
            '200': { $ref: 'file:///etc/passwd' },
            '201': { $ref: `http://127.0.0.1:${server.port}/api.json#/x` },
            '202': { $ref: '../../../../etc/passwd' },
            '203': { $ref: 'shared.yaml#/components/responses/Ok' },
          },
        },
      },
    },
  })
  const ruleset = { checksum: 'sha256:oas', document: { extends: 'spectral:oas' } }
  const findings = await lintDocument(canonicalJson(document), ruleset)
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(server.connections(), 0, 'no connection was made')
  t.same(reads, [], 'no file was read')
  const marker = passwdMarker()
  if (marker) t.notMatch(JSON.stringify(findings), marker, '/etc/passwd contents appear nowhere')
  const refs = findings.filter((f) => f.code === 'invalid-ref')
  t.same(
    refs.map((f) => f.message),
    [
      "external $ref 'file:///etc/passwd' is not resolved: the registry never fetches files or URLs; bundle the document first",
      `external $ref 'http://127.0.0.1:${server.port}/api.json#/x' is not resolved: the registry never fetches files or URLs; bundle the document first`,
      "external $ref '../../../../etc/passwd' is not resolved: the registry never fetches files or URLs; bundle the document first",
      "external $ref 'shared.yaml#/components/responses/Ok' is not resolved: the registry never fetches files or URLs; bundle the document first",
    ],
  )
})
