/**
 * The diff skips path items and components that are equal in both versions down to everything their
 * `$ref`s lead to (src/documents/diff/unchanged.ts). Skipping must never change an answer: each edit
 * below is diffed with and without it and the changes clients see must be the same, and the edits that
 * reach an unchanged-looking path item only through a reference must still be reported there.
 */
import t from 'tap'
import { diffOpenApi } from '../../src/documents/diff/openapi.js'
import { changesPage } from '../../src/documents/diff/result.js'
import { shopApi } from '../support/shop-api.js'

type Json = any

interface Edit {
  name: string
  /** Changes the new version; `before` is given for edits that set up both versions first. */
  change: (after: Json, before: Json) => void
  /** Operations (METHOD path) that must be named by a change; none for edits that change nothing. */
  reaches: string[]
}

const edits: Edit[] = [
  { name: 'nothing', change: () => {}, reaches: [] },
  {
    name: 'a type deep in a component two references away (Order → Customer → Address)',
    change: (after) => { after.components.schemas.Address.properties.city = { type: 'integer' } },
    reaches: ['GET /customers/{customerId}', 'GET /orders/{orderId}'],
  },
  {
    name: 'a shared parameter component narrowed',
    change: (after) => { after.components.parameters.Limit.schema.maximum = 50 },
    reaches: ['GET /orders', 'GET /products'],
  },
  {
    name: 'a response header component made optional',
    change: (after) => { after.components.headers.RateLimitRemaining.required = false },
    reaches: ['GET /orders'],
  },
  {
    name: 'the document security every operation inherits',
    change: (after) => { after.security = [{ oauth: ['orders:read'] }] },
    reaches: ['GET /orders', 'GET /customers/{customerId}'],
  },
  {
    name: 'the OpenAPI version (schemas read differently)',
    change: (after) => { after.openapi = '3.1.0' },
    reaches: [],
  },
  {
    name: 'an alias component pointed elsewhere (a chain of references changed in its middle)',
    change: (after, before) => {
      for (const doc of [before, after]) {
        doc.components.schemas.Buyer = { $ref: '#/components/schemas/Customer' }
        doc.paths['/customers/{customerId}'].get.responses['200'].content['application/json'].schema = { $ref: '#/components/schemas/Buyer' }
      }
      after.components.schemas.Buyer = { $ref: '#/components/schemas/Error' }
    },
    reaches: ['GET /customers/{customerId}'],
  },
  {
    name: 'a path parameter renamed (the path item is matched, not equal)',
    change: (after) => {
      after.paths['/orders/{id}'] = after.paths['/orders/{orderId}']
      delete after.paths['/orders/{orderId}']
      after.paths['/orders/{id}'].parameters[0].name = 'id'
    },
    reaches: ['GET /orders/{id}'],
  },
  {
    name: 'a reference that leads nowhere in the old version and somewhere in the new',
    change: (after, before) => {
      for (const doc of [before, after]) doc.paths['/categories'].get.responses['200'].content['application/json'].schema.items = { $ref: '#/components/schemas/Later' }
      after.components.schemas.Later = { type: 'string' }
    },
    reaches: [],
  },
  {
    name: 'an unused component changed, one added, one removed',
    change: (after) => {
      after.components.schemas.Unused = { type: 'object' }
      delete after.components.schemas.InvoicePayment
      after.components.schemas.CardPayment.properties.brand = { type: 'string' }
    },
    reaches: ['POST /orders'],
  },
  {
    name: 'a callback request body schema changed',
    change: (after) => { after.components.schemas.OrderStatus.enum.push('refunded') },
    reaches: ['POST /orders', 'GET /orders'],
  },
]

const named = (change: { operation: { method: string; path: string } | null }) =>
  change.operation === null ? null : `${change.operation.method.toUpperCase()} ${change.operation.path}`

for (const edit of edits) {
  t.test(edit.name, async (t) => {
    const before = shopApi()
    const after = shopApi()
    edit.change(after, before)
    const skipping = diffOpenApi(before, after)
    const walking = diffOpenApi(before, after, { skipUnchanged: false })
    const seen = changesPage(skipping, 0, 10_000)
    t.same(seen, changesPage(walking, 0, 10_000), 'the same changes whether unchanged parts are skipped or walked')
    t.same(skipping.counts, walking.counts)
    const operations = new Set(seen.map(named))
    for (const operation of edit.reaches) t.ok(operations.has(operation), `reported at ${operation}`)
    if (edit.name === 'nothing') t.same(seen, [])
    else t.ok(seen.length > 0, 'the edit is seen')
  })
}

t.test('a path item nothing in which changed is not walked: the operations it has are not listed', async (t) => {
  const before = shopApi()
  const after = shopApi()
  after.components.parameters.Limit.schema.maximum = 50
  const result = diffOpenApi(before, after)
  const listed = result.operations.map((o) => `${o.method.toUpperCase()} ${o.path}`)
  t.ok(listed.includes('GET /products'), 'an operation that uses the changed parameter is there')
  t.notOk(listed.includes('GET /customers/{customerId}'), 'one whose path item reaches nothing changed is not')
  t.ok(diffOpenApi(before, after, { skipUnchanged: false }).operations.length > result.operations.length)
})
