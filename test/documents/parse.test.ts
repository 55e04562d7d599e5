import t from 'tap'
import { assertDocumentShape, parseDocumentText } from '../../src/documents/parse.js'
import { canonicalJson, checksumOf } from '../../src/documents/canonical.js'
import { MAX_DEPTH } from '../../src/documents/limits.js'
import { nested, registryError } from './helpers.js'

/** Parse + shape check, as every upload does. */
function load(text: string): unknown {
  const { document } = parseDocumentText(text)
  assertDocumentShape(document)
  return document
}

t.test('JSON, YAML and reordered keys have one checksum', async (t) => {
  const json = '{"openapi":"3.1.0","info":{"title":"T","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}},"tags":[{"name":"b"},{"name":"a"}]}'
  const pretty = JSON.stringify(JSON.parse(json), null, 2)
  const reordered = '{"tags":[{"name":"b"},{"name":"a"}],"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}},"info":{"version":"1","title":"T"},"openapi":"3.1.0"}'
  const yaml = [
    'info:',
    '  version: "1"',
    '  title: T',
    'openapi: 3.1.0',
    'tags:',
    '  - name: b',
    '  - {name: a}',
    'paths:',
    '  /a:',
    '    get:',
    '      responses:',
    "        '200':",
    '          description: ok',
    '',
  ].join('\n')
  const sums = [json, pretty, reordered, yaml].map((text) => checksumOf(canonicalJson(load(text))))
  t.equal(new Set(sums).size, 1, 'one checksum for all four')
  t.match(sums[0], /^sha256:[0-9a-f]{64}$/)
  t.equal(parseDocumentText(json).format, 'json')
  t.equal(parseDocumentText(yaml).format, 'yaml')
  t.equal(canonicalJson(load(yaml)), '{"info":{"title":"T","version":"1"},"openapi":"3.1.0","paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}},"tags":[{"name":"b"},{"name":"a"}]}')
  // Array order is data: it changes the checksum.
  const swapped = json.replace('{"name":"b"},{"name":"a"}', '{"name":"a"},{"name":"b"}')
  t.not(checksumOf(canonicalJson(load(swapped))), sums[0])
})

t.test('YAML is 1.2 core schema', async (t) => {
  t.same(load('a: yes\nb: on\nc: 0o17\nd: 012\ne: ~\nf: 1.5e3\n'), { a: 'yes', b: 'on', c: 15, d: 12, e: null, f: 1500 })
  t.same(load('\ufeff{"a": 1}'), { a: 1 }, 'a byte-order mark is ignored')
  t.same(load('  \n {"a": 1}'), { a: 1 })
  t.same(load('{a: 1, b: [x, y]}'), { a: 1, b: ['x', 'y'] }, 'YAML flow style that is not JSON')
})

t.test('an alias bomb is refused', async (t) => {
  const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
  for (let i = 1; i < 9; i++) {
    const prev = String.fromCharCode(96 + i)
    const name = String.fromCharCode(97 + i)
    lines.push(`${name}: &${name} [${Array(9).fill('*' + prev).join(',')}]`)
  }
  const started = Date.now()
  const err = registryError(() => load(lines.join('\n') + '\n'))
  t.equal(err.code, 'invalid_document')
  t.match(err.message, /alias/i)
  t.ok(Date.now() - started < 2000, 'refused quickly')
  // A few aliases are fine.
  t.same(load('base: &b {x: 1}\none: *b\ntwo: *b\n'), { base: { x: 1 }, one: { x: 1 }, two: { x: 1 } })
})

t.test('aliases that blow a document up are refused even under the alias count', async (t) => {
  const items = Array.from({ length: 20000 }, (_, i) => `  - v${i}`).join('\n')
  const text = `base: &a\n${items}\n` + Array.from({ length: 90 }, (_, i) => `k${i}: *a`).join('\n') + '\n'
  const err = registryError(() => load(text))
  t.match(err.message, /aliases expand the document too much/)
  const cyclic = registryError(() => load('a: &a [1, *a]\n'))
  t.match(cyclic.message, /alias/)
})

t.test('custom and non-JSON tags are refused', async (t) => {
  for (const text of ['a: !foo bar\n', 'a: !!binary aGVsbG8=\n', 'a: !!timestamp 2001-12-14\n', 'a: !!set {x}\n', '!<tag:example.com,2000:x> {a: 1}\n']) {
    const err = registryError(() => load(text))
    t.equal(err.code, 'invalid_document', text)
    t.match(err.message, /tag/, text)
    t.match(err.errors?.[0]?.message, /line 1, column \d+/, 'says where')
  }
  t.same(load('a: !!str 12\nb: !!int "7"\n'), { a: '12', b: 7 }, 'the core tags are fine')
})

t.test('YAML problems are refused with line and column', async (t) => {
  const dup = registryError(() => load('a: 1\nb: 2\na: 3\n'))
  t.match(dup.message, /duplicate keys/)
  t.match(dup.errors?.[0], { message: /line 3, column 1/, path: [] })

  const multi = registryError(() => load('a: 1\n---\nb: 2\n'))
  t.match(multi.message, /several documents/)

  t.same(load('x: &x {a: 1, b: 1}\ny:\n  <<: *x\n  b: 2\n'), { x: { a: 1, b: 1 }, y: { a: 1, b: 2 } },
    'merge keys expand, and explicit members win')
  const merged = load('e: &e {__proto__: {polluted: yes}}\ny:\n  <<: *e\n') as { y: object }
  t.same(Object.keys(merged.y), ['__proto__'], 'a merged __proto__ is an own member')
  t.equal(Object.getPrototypeOf(merged.y), Object.prototype)
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  const mergeBomb = ['a: &a {k0: 0, k1: 1, k2: 2, k3: 3, k4: 4, k5: 5, k6: 6, k7: 7, k8: 8, k9: 9}']
  for (let i = 1; i < 8; i++) mergeBomb.push(`l${i}: &l${i} [${Array(10).fill(i === 1 ? '*a' : `*l${i - 1}`).join(', ')}]`)
  registryError(() => load(mergeBomb.join('\n') + '\n'))
  t.same(load('"<<": quoted is just a key\n'), { '<<': 'quoted is just a key' })

  const bad = registryError(() => load('a:\n\tb: 1\n'))
  t.match(bad.errors?.[0]?.message, /line 2, column 1/)

  const complexKey = registryError(() => load('? [a, b]\n: c\n'))
  t.equal(complexKey.code, 'invalid_document')
})

t.test('broken JSON says what JSON and YAML made of it', async (t) => {
  const err = registryError(() => load('{"a": 1,, "b": 2}'))
  t.equal(err.code, 'invalid_document')
  t.match(err.message, /neither valid JSON nor valid YAML/)
  t.match(err.errors?.[0]?.message, /^as JSON: /)
  t.match(err.errors?.[1]?.message, /^as YAML: .*line 1, column/)
})

t.test('the top level must be an object', async (t) => {
  for (const [text, what] of [
    ['[1, 2]', 'an array'],
    ['"text"', 'a string'],
    ['42', 'a number'],
    ['null', 'null'],
    ['- a\n- b\n', 'an array'],
    ['just words\n', 'a string'],
    ['~\n', 'null'],
  ]) {
    const err = registryError(() => load(text))
    t.equal(err.code, 'invalid_document', text)
    t.equal(err.message, 'the document must be an object', text)
    t.same(err.errors, [{ message: `the document must be an object, not ${what}`, path: [] }], text)
  }
  t.equal(registryError(() => load('   \n')).message, 'the document is empty')
  t.equal(registryError(() => load('')).message, 'the document is empty')
})

t.test(`nesting deeper than ${MAX_DEPTH} is refused, 10,000 deep without a crash`, async (t) => {
  const deep = 'the document is nested too deeply (more than 256 levels)'
  for (const kind of ['array', 'object'] as const) {
    const json = `{"x":${nested(10_000, kind)}}`
    t.equal(registryError(() => load(json)).message, deep, `JSON ${kind}`)
    // The same text read as YAML (flow style) by taking the JSON fast path away.
    t.equal(registryError(() => load(`x: ${nested(10_000, kind)}\n`)).message, deep, `YAML flow ${kind}`)
  }
  t.equal(registryError(() => load('x:\n' + '  - '.repeat(1) + '- '.repeat(10_000) + 'v\n')).message, deep, 'YAML block sequences')
  let yamlMap = ''
  for (let i = 0; i < 300; i++) yamlMap += ' '.repeat(i) + 'k:\n'
  t.equal(registryError(() => load(yamlMap + ' '.repeat(300) + 'v\n')).message, deep, 'YAML block mappings')
  t.equal(registryError(() => load(`{"x":${nested(100_000, 'array')}}`)).message, deep, '100,000 deep')

  // The limit itself: the top-level object is level 1.
  t.ok(load(`{"x":${nested(MAX_DEPTH - 1, 'array')}}`), 'exactly the limit is fine')
  t.equal(registryError(() => load(`{"x":${nested(MAX_DEPTH, 'array')}}`)).message, deep, 'one more is not')
  t.equal(registryError(() => assertDocumentShape(JSON.parse(`{"x":${nested(MAX_DEPTH, 'object')}}`))).message, deep)
})

t.test('values JSON cannot hold are refused', async (t) => {
  const inf = registryError(() => load('a:\n  b: [1, .inf]\n'))
  t.match(inf.message, /cannot represent/)
  t.same(inf.errors?.[0]?.path, ['a', 'b', 1])
  t.match(registryError(() => load('a: .nan\n')).errors?.[0], { message: /NaN/, path: ['a'] })
  t.match(registryError(() => load('{"a": 1e400}')).errors?.[0], { message: /infinite/, path: ['a'] })
  t.match(registryError(() => assertDocumentShape({ a: () => 1 })).errors?.[0], { message: /function/, path: ['a'] })
})

t.test('__proto__ and constructor are data, never prototypes', async (t) => {
  const texts = [
    '{"__proto__": {"polluted": "json"}, "constructor": {"prototype": {"polluted": "json2"}}, "a": {"__proto__": {"isAdmin": true}}}',
    '__proto__:\n  polluted: yaml\nconstructor:\n  prototype:\n    polluted: yaml2\na:\n  __proto__:\n    isAdmin: true\n',
    '{__proto__: {polluted: flow}, a: {"__proto__": {isAdmin: true}}}',
  ]
  for (const text of texts) {
    const doc = load(text) as Record<string, unknown>
    t.ok(Object.prototype.hasOwnProperty.call(doc, '__proto__'), 'an own property')
    t.equal(Object.getPrototypeOf(doc), Object.prototype, 'the prototype is untouched')
    const a = doc.a as Record<string, unknown>
    t.equal(Object.getPrototypeOf(a), Object.prototype)
    t.equal((a as { isAdmin?: unknown }).isAdmin, undefined, 'nothing inherited')
    const canonical = canonicalJson(doc)
    t.match(canonical, /"__proto__":/, 'kept in the canonical form')
    t.same(JSON.parse(canonical), JSON.parse(canonical))
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is not polluted')
  t.equal(({} as Record<string, unknown>).isAdmin, undefined)
  t.equal(checksumOf(canonicalJson(load(texts[0]))), checksumOf(canonicalJson(load(JSON.stringify(load(texts[0]))))), 'stable through a round trip')
})
