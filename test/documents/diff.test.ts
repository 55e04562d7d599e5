import t from 'tap'
import { stringify } from 'yaml'
import { changesPage, changeTotal } from '../../src/documents/diff/result.js'
import { diff } from '../../src/documents/worker.js'
import { orderEventSchema, shopApi } from '../support/shop-api.js'

type Json = any

/** The same document with every key order reversed, at every level. */
function reordered(value: Json): Json {
  if (Array.isArray(value)) return value.map(reordered)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reordered(v)]))
}

/** Every local `$ref` replaced by a copy of what it names, except where a schema contains itself. */
function inlined(document: Json): Json {
  const lookup = (ref: string) => ref.slice(2).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((node: Json, key) => node[key], document)
  const inline = (value: Json, open: string[]): Json => {
    if (Array.isArray(value)) return value.map((v) => inline(v, open))
    if (value === null || typeof value !== 'object') return value
    if (typeof value.$ref === 'string' && value.$ref.startsWith('#/')) {
      if (open.includes(value.$ref)) return value
      return inline(structuredClone(lookup(value.$ref)), [...open, value.$ref])
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inline(v, open)]))
  }
  return inline(document, [])
}

t.test('a document against itself reformatted, keys reordered and $refs inlined: no change at all', async (t) => {
  const original = shopApi()
  const other = reordered(inlined(shopApi()))
  t.not(JSON.stringify(other).includes('#/components/schemas/Customer'), true, 'the copy has no $ref to Customer left')
  const text = JSON.stringify(original, null, 2)
  const result = diff({ op: 'diff', kind: 'openapi', before: text, after: stringify(other) })
  t.same(result.counts, { breaking: 0, 'non-breaking': 0, annotation: 0 })
  t.same(result.entries, [])
  const back = diff({ op: 'diff', kind: 'openapi', before: stringify(other), after: text })
  t.same(back.entries, [], 'and the other way round')

  const schema = diff({ op: 'diff', kind: 'jsonschema', before: JSON.stringify(orderEventSchema()), after: stringify(reordered(inlined(orderEventSchema()))) })
  t.same(schema.entries, [], 'a JSON Schema likewise')
})

t.test('a change reached from many operations is one entry; clients see one change per operation, paged', async (t) => {
  const before = shopApi()
  const after = shopApi()
  after.components.schemas.Customer.properties.name.type = 'integer'
  after.components.schemas.OrderStatus.enum.push('refunded')
  after.info.description = 'Orders and more.'
  const result = diff({ op: 'diff', kind: 'openapi', before: JSON.stringify(before), after: JSON.stringify(after) })
  const nameChange = result.entries.filter((e) => e.check === 'type-changed')
  t.equal(nameChange.length, 2, 'one entry per place in the operations (response 200, response 201) …')
  t.equal(nameChange.reduce((n, e) => n + e.operations!.length, 0), 5, '… naming the five operations between them')

  const all = changesPage(result, 0, 1000)
  t.equal(all.length, changeTotal(result))
  t.same(all.map((c) => c.classification), [...all.map((c) => c.classification)].sort((x, y) =>
    ['breaking', 'non-breaking', 'annotation'].indexOf(x) - ['breaking', 'non-breaking', 'annotation'].indexOf(y)), 'breaking changes first')
  const paged = [0, 3, 6, 9, 12, 15, 18].flatMap((offset) => changesPage(result, offset, 3))
  t.same(paged, all.slice(0, 21), 'pages of 3 are the list in order')
  const breaking = changesPage(result, 0, 1000, 'breaking')
  t.equal(breaking.length, result.counts.breaking)
  t.ok(breaking.every((c) => c.classification === 'breaking'))
  t.same(changesPage(result, 2, 2, 'breaking'), breaking.slice(2, 4))
  t.match(all.find((c) => c.operation === null), { check: 'annotation-changed', pointer: '/info/description', component: null })
})

t.test('documents that are not what their kind says still compare without throwing', async (t) => {
  const result = diff({ op: 'diff', kind: 'openapi', before: '{"openapi":"3.1.0","paths":[]}', after: '{"openapi":"3.1.0","paths":{"/a":"x"}}' })
  t.ok(Array.isArray(result.entries))
  const schema = diff({ op: 'diff', kind: 'jsonschema', before: '{"type":"object"}', after: '{"$ref":"#/nowhere"}' })
  t.ok(Array.isArray(schema.entries))
})
