import { createHash } from 'node:crypto'
import t from 'tap'
import run, { check, digest } from '../../src/documents/worker.js'
import { canonicalJson, checksumOf } from '../../src/documents/canonical.js'
import { convertText } from '../../src/documents/convert.js'
import { parseDocumentText } from '../../src/documents/parse.js'
import type { CheckResult, DigestResult, TaskError } from '../../src/documents/types.js'
import { nested, openapi30, registryError } from './helpers.js'
import { generateOpenApi } from '../../bench/generate.js'
import { DEFAULT_RULESET } from '../../src/documents/defaults.js'

const yamlDoc = 'openapi: 3.1.0\ninfo:\n  title: Pets\n  version: "1"\npaths: {}\n'

function taskError(value: unknown): TaskError['error'] {
  if (value && typeof value === 'object' && 'error' in value) return (value as TaskError).error
  throw new Error(`expected a TaskError, got ${JSON.stringify(value)}`)
}

t.test('digest with the JSON envelope', async (t) => {
  const body = JSON.stringify({ document: { b: 1, a: { d: 2, c: 3 } } })
  const asObject = digest({ op: 'digest', shape: 'json', body })
  t.same(asObject, {
    unchanged: false,
    raw: `json:${createHash('sha256').update(body).digest('hex')}`,
    checksum: checksumOf('{"a":{"c":3,"d":2},"b":1}'),
    format: 'json',
    text: '{"b":1,"a":{"d":2,"c":3}}',
    digest: createHash('sha256').update('{"b":1,"a":{"d":2,"c":3}}').digest('hex'),
    canonical: '{"a":{"c":3,"d":2},"b":1}',
    summary: { openapi: '', title: '', version: '' },
    serialized: true,
  })
  const asYamlString = digest({ op: 'digest', shape: 'json', body: JSON.stringify({ document: yamlDoc }) }) as Extract<DigestResult, { unchanged: false }>
  t.equal(asYamlString.format, 'yaml')
  t.equal(asYamlString.text, yamlDoc, 'the stored bytes are the upload\'s own text')
  const asJsonString = digest({ op: 'digest', shape: 'json', body: JSON.stringify({ document: '{"openapi": "3.1.0"}' }) }) as Extract<DigestResult, { unchanged: false }>
  t.equal(asJsonString.format, 'json')
  t.equal(asJsonString.text, '{"openapi": "3.1.0"}')
  t.same(asJsonString.summary, { openapi: '3.1.0', title: '', version: '' }, 'the summary comes with the digest')
})

t.test('an application/json body without a document member is the document itself, stored as sent', async (t) => {
  const text = '{\n  "openapi": "3.1.0",\n  "info": {"title": "Pets", "version": "1"},\n  "paths": {}\n}\n'
  const raw = digest({ op: 'digest', shape: 'json', body: text }) as Extract<DigestResult, { unchanged: false }>
  t.equal(raw.format, 'json')
  t.equal(raw.text, text, 'its own text, whitespace and all')
  t.equal(raw.digest, createHash('sha256').update(text).digest('hex'))
  t.same(raw.summary, { openapi: '3.1.0', title: 'Pets', version: '1' })
  const enveloped = digest({ op: 'digest', shape: 'json', body: JSON.stringify({ document: JSON.parse(text) }) }) as Extract<DigestResult, { unchanged: false }>
  t.equal(enveloped.checksum, raw.checksum, 'the same document as in an envelope')
  const empty = digest({ op: 'digest', shape: 'json', body: '{}' }) as Extract<DigestResult, { unchanged: false }>
  t.equal(empty.canonical, '{}', 'an empty object is a document (a JSON Schema that allows anything)')
  t.equal(digest({ op: 'digest', shape: 'json', body: '{"doc": {}}' }).unchanged, false, 'no document member: the document itself')
  t.equal(registryError(() => digest({ op: 'digest', shape: 'json', body: 'openapi: 3.1.0' })).code, 'invalid_request', 'application/json must be JSON')
})

t.test('a body without a Content-Type is JSON when it is JSON, else YAML', async (t) => {
  const asJson = digest({ op: 'digest', shape: 'untyped', body: ' {"openapi": "3.1.0"}' }) as Extract<DigestResult, { unchanged: false }>
  t.equal(asJson.format, 'json')
  t.equal(asJson.text, ' {"openapi": "3.1.0"}')
  const enveloped = digest({ op: 'digest', shape: 'untyped', body: JSON.stringify({ document: yamlDoc }) }) as Extract<DigestResult, { unchanged: false }>
  t.equal(enveloped.text, yamlDoc, 'an envelope is an envelope')
  t.equal(enveloped.format, 'yaml')
  const asYaml = digest({ op: 'digest', shape: 'untyped', body: yamlDoc }) as Extract<DigestResult, { unchanged: false }>
  t.equal(asYaml.format, 'yaml')
  t.equal(asYaml.checksum, enveloped.checksum)
  const flow = digest({ op: 'digest', shape: 'untyped', body: '{openapi: 3.1.0}' }) as Extract<DigestResult, { unchanged: false }>
  t.equal(flow.format, 'yaml', 'a YAML flow mapping is YAML')
  t.equal(registryError(() => digest({ op: 'digest', shape: 'untyped', body: '{"openapi": ' })).code, 'invalid_document', 'neither JSON nor YAML')
})

t.test('envelope errors are invalid_request, document errors invalid_document', async (t) => {
  const unknown = registryError(() => digest({ op: 'digest', shape: 'json', body: '{"document": {"a": 1}, "format": "yaml", "x": 1}' }))
  t.equal(unknown.code, 'invalid_request')
  t.equal(unknown.message, "unknown fields 'format', 'x': the body has only 'document'")
  t.same(unknown.errors, [{ message: 'unknown field', path: ['format'] }, { message: 'unknown field', path: ['x'] }])


  const malformed = registryError(() => digest({ op: 'digest', shape: 'json', body: '{"document": {' }))
  t.equal(malformed.code, 'invalid_request')
  t.match(malformed.message, /^the request body is not valid JSON: /)

  for (const body of ['[]', '"x"', 'null', '42']) {
    const notObject = registryError(() => digest({ op: 'digest', shape: 'json', body }))
    t.equal(notObject.code, 'invalid_request', body)
    t.equal(notObject.message, 'the request body must be a JSON object: the document itself, or { "document": … }', body)
  }

  for (const [value, what] of [[42, 'a number'], [[1], 'an array'], [null, 'null'], [true, 'a boolean']] as const) {
    const bad = registryError(() => digest({ op: 'digest', shape: 'json', body: JSON.stringify({ document: value }) }))
    t.equal(bad.code, 'invalid_document')
    t.equal(bad.message, `'document' must be an object or a string holding JSON or YAML, not ${what}`)
  }
  t.equal(registryError(() => digest({ op: 'digest', shape: 'json', body: JSON.stringify({ document: '[1, 2]' }) })).message, 'the document must be an object')
  t.equal(registryError(() => digest({ op: 'digest', shape: 'json', body: JSON.stringify({ document: 'a: !custom x' }) })).code, 'invalid_document')
  t.equal(
    registryError(() => digest({ op: 'digest', shape: 'json', body: `{"document":{"x":${nested(10_000, 'object')}}}` })).message,
    'the document is nested too deeply (more than 256 levels)',
  )
})

t.test('digest of a raw body or an already-parsed member', async (t) => {
  const raw = digest({ op: 'digest', body: yamlDoc }) as Extract<DigestResult, { unchanged: false }>
  t.equal(raw.format, 'yaml')
  t.equal(raw.text, yamlDoc)
  const member = digest({ op: 'digest', document: JSON.parse(raw.canonical) }) as Extract<DigestResult, { unchanged: false }>
  t.equal(member.checksum, raw.checksum)
  t.equal(member.format, 'json')
  t.equal(registryError(() => digest({ op: 'digest', document: undefined })).code, 'invalid_request')
})

t.test('an unchanged upload short-circuits', async (t) => {
  const first = digest({ op: 'digest', body: yamlDoc, currentChecksum: null }) as Extract<DigestResult, { unchanged: false }>
  const reformatted = JSON.stringify(JSON.parse(first.canonical), null, 4)
  t.same(digest({ op: 'digest', body: reformatted, currentChecksum: first.checksum }), {
    unchanged: true,
    checksum: first.checksum,
    raw: `document:${createHash('sha256').update(reformatted).digest('hex')}`,
  })
  t.equal((digest({ op: 'digest', body: yamlDoc, currentChecksum: 'sha256:' + '0'.repeat(64) }) as DigestResult).unchanged, false)
})

t.test('a body identical to the one that gave the current checksum is unchanged before it is parsed', async (t) => {
  const first = digest({ op: 'digest', body: yamlDoc, currentChecksum: null }) as Extract<DigestResult, { unchanged: false }>
  t.equal(first.raw, `document:${first.digest}`, 'a bare body is stored as sent: its hash is the blob digest')
  const again = digest({ op: 'digest', body: yamlDoc, currentChecksum: first.checksum, currentRaw: first.raw })
  t.same(again, { unchanged: true, checksum: first.checksum, raw: first.raw })
  // Proof that nothing was parsed: a body that cannot parse, claimed by its own raw key, is unchanged.
  const broken = 'openapi: [unclosed'
  const brokenRaw = `document:${createHash('sha256').update(broken).digest('hex')}`
  t.same(digest({ op: 'digest', body: broken, currentChecksum: first.checksum, currentRaw: brokenRaw }).unchanged, true)
  t.equal(registryError(() => digest({ op: 'digest', body: broken, currentChecksum: first.checksum, currentRaw: first.raw })).code,
    'invalid_document', 'another body is parsed as ever')
  const enveloped = digest({ op: 'digest', shape: 'json', body: JSON.stringify({ document: yamlDoc }), currentChecksum: null })
  t.not(enveloped.raw?.slice(9), first.raw?.slice(9), 'the shape and the text make the key')
  t.match(enveloped.raw, /^json:/)
  const jsonText = '{"openapi": "3.1.0"}'
  const asJson = digest({ op: 'digest', shape: 'json', body: jsonText, currentChecksum: null }) as Extract<DigestResult, { unchanged: false }>
  const asDocument = digest({ op: 'digest', shape: 'document', body: jsonText, currentChecksum: null }) as Extract<DigestResult, { unchanged: false }>
  t.equal(asJson.checksum, asDocument.checksum, 'a raw JSON document reads the same as JSON or as a document')
  t.not(asJson.raw, asDocument.raw, 'but under another key')
  t.equal(digest({ op: 'digest', body: yamlDoc, currentChecksum: null, currentRaw: first.raw }).unchanged, false,
    'without a current checksum nothing is unchanged')
})

t.test('a body as UTF-8 bytes digests as its text; a byte-order mark is dropped as TextDecoder drops it', async (t) => {
  const asText = digest({ op: 'digest', body: yamlDoc, currentChecksum: null }) as Extract<DigestResult, { unchanged: false }>
  const asBytes = digest({ op: 'digest', body: new Uint8Array(Buffer.from(yamlDoc)), currentChecksum: null })
  t.same(asBytes, asText, 'the same result, raw key and blob digest included')
  const withBom = digest({ op: 'digest', body: new Uint8Array(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(yamlDoc)])) }) as Extract<DigestResult, { unchanged: false }>
  t.equal(withBom.text, yamlDoc, 'stored without the mark')
  t.equal(withBom.digest, asText.digest, 'the blob digest is of the stored text')
  t.equal(withBom.checksum, asText.checksum)
  t.not(withBom.raw, asText.raw, 'the raw key is of the bytes sent')
  const envelope = Buffer.from(`\ufeff${JSON.stringify({ document: { openapi: '3.1.0' } })}`)
  t.equal((digest({ op: 'digest', shape: 'json', body: new Uint8Array(envelope) }) as Extract<DigestResult, { unchanged: false }>).text, '{"openapi":"3.1.0"}')
})

t.test('check validates by kind, and lints when given a ruleset', async (t) => {
  const canonical = canonicalJson(openapi30())
  t.same(await check({ op: 'check', kind: 'openapi', canonical }), { summary: { openapi: '3.0.3', title: 'Pets', version: '1.0.0' } })

  const invalid = taskError(await run({ op: 'check', kind: 'openapi', canonical: canonicalJson(openapi30({ paths: { '/p': { get: { responses: { '200': {} } } } } })) }))
  t.equal(invalid.code, 'invalid_document')
  t.equal(invalid.detail, "the OpenAPI document is not valid at /paths/~1p/get/responses/200: missing required property 'description'")
  t.same(invalid.errors, [{ path: ['paths', '/p', 'get', 'responses', '200'], message: "missing required property 'description'" }])

  const swagger = taskError(await run({ op: 'check', kind: 'openapi', canonical: '{"swagger":"2.0","info":{},"paths":{}}' }))
  t.match(swagger.detail, /Swagger 2\.0 is not supported/)

  t.same(await check({ op: 'check', kind: 'jsonschema', canonical: '{"type":"object"}' }), {})
  const badSchema = taskError(await run({ op: 'check', kind: 'jsonschema', canonical: '{"type":"objekt"}' }))
  t.match(badSchema.detail, /^the JSON Schema is not valid at \/type: /)

  t.same(await check({ op: 'check', kind: 'ruleset', canonical: '{"extends":"spectral:oas"}' }), {})
  const badRuleset = taskError(await run({ op: 'check', kind: 'ruleset', canonical: '{"functionsDir":"x","rules":{}}' }))
  t.equal(badRuleset.code, 'invalid_document')
  t.match(badRuleset.detail, /functionsDir is not allowed/)

  const skipped = await check({ op: 'check', kind: 'openapi', canonical: '{"openapi":"3.1.0","info":{"title":"T","version":"9"}}', skipValidation: true })
  t.same(skipped, { summary: { openapi: '3.1.0', title: 'T', version: '9' } }, 'no validation, still the summary')

  const linted = (await check({
    op: 'check',
    kind: 'openapi',
    canonical,
    ruleset: { checksum: 'sha256:r', document: { rules: { 'has-summary': { given: '$.paths[*][*]', then: { field: 'summary', function: 'truthy' } } } } },
  })) as CheckResult
  t.same(linted.findings, [{ code: 'has-summary', message: '"get.summary" property must be truthy', severity: 'warn', path: ['paths', '/pets', 'get'] }])

  const lint = await run({ op: 'lint', canonical: '{"a":{"b":1}}', ruleset: { checksum: 'sha256:r2', document: { rules: { b: { given: '$.a', then: { field: 'b', function: 'falsy' }, severity: 'error' } } } } })
  t.same(lint, { findings: [{ code: 'b', message: '"b" property must be falsy', severity: 'error', path: ['a', 'b'] }] })
})

t.test('convert between JSON and YAML', async (t) => {
  const doc = openapi30({ 'x-strings': ['yes', 'no', 'on', '1.0', '0x1F', 'null', '~', 'true', '2001-12-14', ' padded ', 'a: b', '#not a comment', 'multi\nline'] })
  const json = JSON.stringify(doc)
  const yaml = convertText(json, 'json', 'yaml')
  t.notMatch(yaml, /&|\*a/, 'no anchors or aliases')
  t.equal(canonicalJson(parseDocumentText(yaml).document), canonicalJson(doc), 'YAML reads back as the same document')
  t.match(yaml, /- "yes"\n\s+- "no"\n\s+- "on"/, 'strings YAML 1.1 would read as booleans are quoted')
  t.equal(convertText(yaml, 'yaml', 'json'), JSON.stringify(parseDocumentText(yaml).document), 'compact JSON')
  t.equal(convertText(json, 'json', 'json'), json, 'same format: untouched')
  const converted = await run({ op: 'convert', text: yamlDoc, from: 'yaml', to: 'json' })
  t.same(converted, { text: '{"openapi":"3.1.0","info":{"title":"Pets","version":"1"},"paths":{}}' })
  t.match(convertText('{"__proto__":{"x":1}}', 'json', 'yaml'), /__proto__:/)
})

t.test('a new version validated with the memo of the one before answers what a whole validation answers', async (t) => {
  const ruleset = { checksum: checksumOf(canonicalJson(DEFAULT_RULESET)), document: JSON.parse(JSON.stringify(DEFAULT_RULESET)) }
  const base = JSON.parse(JSON.stringify(generateOpenApi(12_000, 3)).replaceAll('"id":"', '"ident":"')) as Record<string, any>
  const first = (await check({ op: 'check', kind: 'openapi', canonical: canonicalJson(base), ruleset })) as CheckResult
  t.ok(first.lintMemo, 'the first version leaves a memo')
  const withMemo = (document: unknown) => run({ op: 'check', kind: 'openapi', canonical: canonicalJson(document), ruleset, previousLint: first.lintMemo })
  const withoutMemo = (document: unknown) => run({ op: 'check', kind: 'openapi', canonical: canonicalJson(document), ruleset })
  const edited = (edit: (document: Record<string, any>) => void) => {
    const copy = structuredClone(base)
    edit(copy)
    return copy
  }
  const [firstPath, secondPath] = Object.keys(base.paths)
  const firstSchema = Object.keys(base.components.schemas)[0]
  const versions: [string, Record<string, any>, 'valid' | 'invalid'][] = [
    ['an operation changed, valid', edited((d) => { d.paths[firstPath].get.summary = 'Changed.' }), 'valid'],
    ['a response without its description', edited((d) => { d.paths[firstPath].get.responses = { 200: {} } }), 'invalid'],
    ['a member OpenAPI does not allow in a new path item', edited((d) => { d.paths['/v9/new'] = { get: { responses: { default: { description: 'd' } } }, notAMethod: {} } }), 'invalid'],
    ['a schema that is a string', edited((d) => { d.components.schemas[firstSchema] = 'a string' }), 'invalid'],
    ['a component that unchanged path items refer to, removed', edited((d) => { delete d.components.schemas[firstSchema] }), 'invalid'],
    ['the frame changed too, with a broken path item', edited((d) => { d.info.title = 'Other'; d.paths[secondPath] = { get: 'not an operation' } }), 'invalid'],
  ]
  for (const [label, document, expected] of versions) {
    const reused = { ...((await withMemo(document)) as CheckResult) }
    delete reused.relinted
    t.strictSame(reused, await withoutMemo(document), label)
    t.equal('error' in (reused as object) ? 'invalid' : 'valid', expected, `${label}: ${expected}`)
  }
  t.ok(((await withMemo(versions[0][1])) as CheckResult).relinted, 'the valid version was re-linted with the memo')
})
