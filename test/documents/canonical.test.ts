/**
 * The canonical form is fast-json-stable-stringify's text, byte for byte: every stored checksum was
 * computed from it. canonical.ts writes most documents another way (a sorted copy and the engine's
 * JSON.stringify), so this compares the two on documents built to find where they could differ.
 */
import stableStringify from 'fast-json-stable-stringify'
import t from 'tap'
import { generateOpenApi, seededRandom } from '../../bench/generate.js'
import { canonicalJson } from '../../src/documents/canonical.js'
import { parseDocumentText } from '../../src/documents/parse.js'

/** Keys where sorting and the engine's own order of keys part: integer keys, and those sorted before digits. */
const KEYS = ['a', 'b', 'B', '', ' ', '$ref', '#', '-1', '0', '1', '2', '9', '10', '01', '200', '404', '2XX', '4294967294', '4294967295', '1.5',
  'default', 'é', 'z\u0000', '\ud83d\ude00', '\ud800', '"q"', 'back\\slash', 'toJSON', 'constructor', 'hasOwnProperty', 'x-tag']
const STRINGS = ['', 'plain', 'line\nbreak', 'tab\t', '\u0000', '\u001f', '"', '\\', '\u2028', '\ud800', '\udc00x', '\ud83d\ude00', 'é', '</script>']
const NUMBERS = [0, -0, 1, -1, 0.1, 1e21, 1e-7, 123456789012345680000, Number.MAX_SAFE_INTEGER, 5e-324, -1.5]

function randomValue(random: () => number, depth: number): unknown {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]
  const roll = random()
  if (depth > 4 || roll < 0.35) {
    const kind = Math.floor(random() * 4)
    return kind === 0 ? pick(STRINGS) : kind === 1 ? pick(NUMBERS) : kind === 2 ? random() < 0.5 : null
  }
  if (roll < 0.55) return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1))
  const object: Record<string, unknown> = {}
  const size = Math.floor(random() * 6)
  for (let i = 0; i < size; i++) object[pick(KEYS)] = randomValue(random, depth + 1)
  return object
}

t.test('the same text as fast-json-stable-stringify, whatever the keys and values', async (t) => {
  const random = seededRandom(19)
  let differing = 0
  let withIntegerKeys = 0
  for (let i = 0; i < 3000; i++) {
    const value = randomValue(random, 0)
    const expected = stableStringify(value)
    if (canonicalJson(value) !== expected) differing += 1
    if (/"(?:0|[1-9]\d*)":/.test(expected)) withIntegerKeys += 1
  }
  t.equal(differing, 0, 'no value of 3,000 written otherwise')
  t.ok(withIntegerKeys > 300, `many had integer keys (${withIntegerKeys})`)
})

t.test('values whose objects are already in sorted order, in whole or in part, and the value left as it was', async (t) => {
  const random = seededRandom(23)
  // Objects rebuilt with their keys inserted in sorted order: kept as they are where the engine lists
  // them so (integer keys aside), copied where a member below is not.
  const sortedTree = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(sortedTree)
    if (value === null || typeof value !== 'object') return value
    const object = value as Record<string, unknown>
    const keys = Object.keys(object)
    if (random() < 0.2) return Object.fromEntries(keys.map((key) => [key, sortedTree(object[key])]))
    return Object.fromEntries(keys.sort().map((key) => [key, sortedTree(object[key])]))
  }
  let differing = 0
  let changed = 0
  for (let i = 0; i < 3000; i++) {
    const value = sortedTree(randomValue(random, 0))
    const before = JSON.stringify(value)
    if (canonicalJson(value) !== stableStringify(value)) differing += 1
    if (JSON.stringify(value) !== before) changed += 1
  }
  t.equal(differing, 0, 'no value of 3,000 written otherwise')
  t.equal(changed, 0, 'and none was changed (its keys reordered, a member replaced)')
  const shared = { b: [{ d: 1, c: 2 }], a: { x: 1 } }
  const sorted = { a: shared.a, b: shared.b, c: { 1: 'one', 2: 'two' }, d: { 10: 'ten', 9: 'nine' } }
  t.equal(canonicalJson(sorted), stableStringify(sorted), 'an object in order whose member is not, and integer keys either way')
})

t.test('objects the engine would order otherwise, and values that are not JSON data', async (t) => {
  const cases: [string, unknown][] = [
    ['integer keys of two lengths', { 10: 'ten', 9: 'nine', a: 1 }],
    ['a key sorted before the digits', { $ref: '#/x', 200: { description: 'ok' } }],
    ['the largest integer key and the one past it', { 4294967295: 1, 4294967294: 2, 10: 3 }],
    ['a __proto__ key (as JSON.parse makes it)', JSON.parse('{"b":1,"__proto__":{"polluted":true},"a":[1]}')],
    ['undefined members and items', { a: undefined, b: [undefined, 1], c: 2 }],
    ['non-finite numbers', { a: Number.NaN, b: [Infinity, -Infinity] }],
    ['a Date', { when: new Date(0) }],
    ['an object of no prototype', Object.assign(Object.create(null) as object, { b: 1, a: 2 })],
    ['a function', { f: () => 1, g: [() => 2] }],
    ['a toJSON member that is data', { toJSON: 'text', a: { toJSON: { nested: true } } }],
    ['no document at all', undefined],
  ]
  for (const [label, value] of cases) t.equal(canonicalJson(value), stableStringify(value), label)
  t.equal(canonicalJson(JSON.parse('{"__proto__":1}')), '{"__proto__":1}', 'a __proto__ key is kept as data')
})

t.test('generated OpenAPI documents, as JSON and as YAML reads them', async (t) => {
  for (const seed of [1, 2, 3]) {
    const document = generateOpenApi(60_000, seed)
    t.equal(canonicalJson(document), stableStringify(document), `generated #${seed}`)
  }
  const yaml = parseDocumentText(`openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        '200': {description: ok}\n        default: {description: d}\n        2XX: {description: two}\n        '100': {description: continue}\n`).document
  t.equal(canonicalJson(yaml), stableStringify(yaml), 'a YAML document with status codes')
})
