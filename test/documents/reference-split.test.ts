/**
 * Splitting a large OpenAPI document into reference parts: every operation lands in exactly one part,
 * in the document's tag order, large groups in pieces, and every part is a valid document of its own
 * whose `$ref`s all resolve (components reached through chains, cycles, path-level parameters).
 */
import t, { type Test } from 'tap'
import { validateOpenApi } from '../../src/documents/openapi.js'
import { planReference, referencePart, type PlannedPart } from '../../src/documents/reference-split.js'
import { shopApi } from '../support/shop-api.js'

type Json = Record<string, any>

const LIMITS = { maxOperations: 4, maxBytes: 1_000_000 }
const ok = (description: string, schema?: Json) => ({ description, ...(schema ? { content: { 'application/json': { schema } } } : {}) })
const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` })

/** A shop: tagged operations (orders in pieces), untagged ones under /v2, webhooks, shared components. */
function shop(): Json {
  const paths: Json = {}
  for (let i = 0; i < 6; i++) {
    paths[`/v2/orders/${i}`] = {
      parameters: [ref('parameters', 'Shop')],
      get: { operationId: `getOrder${i}`, summary: `Get order ${i}`, tags: ['orders'], responses: { '200': ok('the order', ref('schemas', 'Order')), default: ref('responses', 'Error') } },
    }
  }
  paths['/v2/pets'] = {
    get: { operationId: 'listPets', summary: 'List pets', tags: ['pets'], responses: { '200': ok('the pets', { type: 'array', items: ref('schemas', 'Pet') }) } },
    post: { operationId: 'addPet', summary: 'Add a pet', tags: ['pets'], requestBody: ref('requestBodies', 'NewPet'), responses: { '201': ok('added') } },
  }
  paths['/v2/stores/{store}'] = {
    get: { operationId: 'getStore', summary: 'Get a store', responses: { '200': ok('the store', ref('schemas', 'Store')) } },
  }
  paths['/v2/stores/{store}/hours'] = {
    get: { operationId: 'getHours', summary: 'Opening hours', responses: { '200': ok('hours', { type: 'string' }) } },
  }
  paths['/v2/health'] = { get: { operationId: 'health', summary: 'Health', responses: { '200': ok('up') } } }
  return {
    openapi: '3.1.0',
    info: { title: 'Shop', version: '2.0.0' },
    servers: [{ url: 'https://shop.example.com' }],
    security: [{ key: [] }],
    tags: [{ name: 'pets', description: 'Everything about **pets**.' }, { name: 'orders' }, { name: 'unused' }],
    'x-tagGroups': [{ name: 'All', tags: ['pets', 'orders'] }],
    paths,
    webhooks: { orderShipped: { post: { summary: 'An order shipped', requestBody: { content: { 'application/json': { schema: ref('schemas', 'Order') } } }, responses: { '200': ok('seen') } } } },
    components: {
      securitySchemes: { key: { type: 'http', scheme: 'bearer' } },
      parameters: { Shop: { name: 'shop', in: 'header', schema: ref('schemas', 'ShopId') } },
      requestBodies: { NewPet: { content: { 'application/json': { schema: ref('schemas', 'Pet') } } } },
      responses: { Error: ok('an error', ref('schemas', 'Error')) },
      schemas: {
        ShopId: { type: 'string' },
        Error: { type: 'object', properties: { message: { type: 'string' } } },
        // A chain (Order → Line → Product → Money) and a cycle (Category ↔ parent).
        Order: { type: 'object', properties: { lines: { type: 'array', items: ref('schemas', 'Line') } } },
        Line: { type: 'object', properties: { product: ref('schemas', 'Product') } },
        Product: { type: 'object', properties: { price: ref('schemas', 'Money'), category: ref('schemas', 'Category') } },
        Money: { type: 'object', properties: { value: { type: 'integer' } } },
        Category: { type: 'object', properties: { parent: ref('schemas', 'Category'), name: { type: 'string' } } },
        // A discriminator mapping names subtypes by string: the base does not pull them in.
        Pet: {
          type: 'object', properties: { kind: { type: 'string' } },
          discriminator: { propertyName: 'kind', mapping: { cat: '#/components/schemas/Cat' } },
        },
        Cat: { allOf: [ref('schemas', 'Pet')], properties: { lives: { type: 'integer' } } },
        Store: { type: 'object', properties: { id: { type: 'string' } } },
        Unused: { type: 'string' },
      },
    },
  }
}

const summaries = (doc: Json) => {
  const found: string[] = []
  for (const section of ['paths', 'webhooks']) {
    for (const item of Object.values(doc[section] ?? {}) as Json[]) {
      for (const [method, op] of Object.entries(item)) if (method !== 'parameters') found.push((op as Json).summary)
    }
  }
  return found
}
/** Whether `#/components/{name}` is reached from the part's operations (security schemes always are). */
function reachable(part: Json, name: string): boolean {
  if (name.startsWith('securitySchemes/')) return true
  const seen = new Set<string>()
  const stack: unknown[] = [part.paths, part.webhooks]
  while (stack.length > 0) {
    const node = stack.pop()
    if (node === null || typeof node !== 'object') continue
    const { $ref } = node as Json
    if (typeof $ref === 'string' && $ref.startsWith('#/components/') && !seen.has($ref)) {
      seen.add($ref)
      const [kind, item] = $ref.slice('#/components/'.length).split('/')
      stack.push(part.components[kind]?.[item])
    }
    stack.push(...Object.values(node))
  }
  return seen.has(`#/components/${name}`)
}
const componentNames = (doc: Json) => Object.entries(doc.components ?? {}).flatMap(([kind, items]) => Object.keys(items as Json).map((name) => `${kind}/${name}`)).sort()

t.test('the plan: groups in tag order, untagged by path, webhooks apart, large groups in pieces', async (t) => {
  const plan = planReference(shop(), LIMITS)
  t.same(plan.map((p) => [p.name, p.piece, p.operations.length]), [
    ['pets', null, 2],
    ['orders', { index: 1, of: 2 }, 4],
    ['orders', { index: 2, of: 2 }, 2],
    ['/v2/stores', null, 2],
    ['/v2/health', null, 1],
    ['Webhooks', null, 1],
  ], 'declared tags first in their order (an unused tag gives no part), then untagged groups under the shared /v2 prefix')
  t.equal(plan[0].description, 'Everything about **pets**.')
  t.equal(plan[1].description, null)
  t.same(plan[5].operations, [{ section: 'webhooks', path: 'orderShipped', method: 'post' }])
  for (const part of plan) t.ok(part.bytes > 0, `${part.name} has an estimated size`)
})

t.test('every operation is in exactly one part, and every part is a valid document whose refs resolve', async (t) => {
  for (const [name, doc] of [['a 3.1 document', shop()], ['a 3.0 document with callbacks and shared headers', shopApi()]] as const) {
    t.test(name, async (t) => everyOperationOnce(t, doc))
  }
})

function everyOperationOnce(t: Test, doc: Json) {
  const plan = planReference(doc, { maxOperations: 2, maxBytes: 1_000_000 })
  const seen: string[] = []
  for (const planned of plan) {
    const part: Json = referencePart(doc, planned)
    const { problems } = validateOpenApi(part)
    t.same(problems, [], `${planned.name} ${planned.piece?.index ?? ''}: valid, every $ref resolves`)
    seen.push(...summaries(part))
    t.same(part.info, doc.info)
    t.same(part.servers, doc.servers)
    t.same(part.security, doc.security)
    t.same(part.components.securitySchemes, doc.components.securitySchemes, 'every security scheme, used or not')
    t.notOk('x-tagGroups' in part, "the document's tag groups name tags the part does not have")
    for (const name of componentNames(part)) t.ok(reachable(part, name), `${name} is there because an operation reaches it`)
  }
  t.same(seen.sort(), summaries(doc).sort(), 'each operation once')
}

t.test('a part holds its operations and exactly the components they reach', async (t) => {
  const doc = shop()
  const plan = planReference(doc, LIMITS)
  const part = (name: string, index = 1): Json => referencePart(doc, plan.find((p) => p.name === name && (p.piece?.index ?? 1) === index)!)

  const orders = part('orders', 2)
  t.same(Object.keys(orders.paths), ['/v2/orders/4', '/v2/orders/5'])
  t.same(orders.paths['/v2/orders/4'].parameters, [ref('parameters', 'Shop')], "the path item's own members come along")
  t.same(orders.tags, [{ name: 'orders' }])
  t.same(componentNames(orders), [
    'parameters/Shop', 'responses/Error', 'schemas/Category', 'schemas/Error', 'schemas/Line', 'schemas/Money',
    'schemas/Order', 'schemas/Product', 'schemas/ShopId', 'securitySchemes/key',
  ], 'the chain through parameters, responses and schemas, the cycle once')

  const pets = part('pets')
  t.same(componentNames(pets), ['requestBodies/NewPet', 'schemas/Pet', 'securitySchemes/key'], 'a mapping string pulls in no subtype')
  t.same(pets.tags, [{ name: 'pets', description: 'Everything about **pets**.' }])

  const stores = part('/v2/stores')
  t.notOk('tags' in stores, 'an untagged group declares no tag')
  t.same(Object.keys(stores.paths), ['/v2/stores/{store}', '/v2/stores/{store}/hours'])

  const webhooks = part('Webhooks')
  t.same(webhooks.paths, {}, 'a webhooks part has empty paths')
  t.same(Object.keys(webhooks.webhooks), ['orderShipped'])
  t.ok(componentNames(webhooks).includes('schemas/Order'))
})

t.test('parts close at their size: an operation that brings many new components starts a new part', async (t) => {
  const big = (n: number) => ({ type: 'object', description: 'x'.repeat(n) })
  const doc: Json = {
    openapi: '3.0.3', info: { title: 'Sizes', version: '1' },
    paths: Object.fromEntries(['a', 'b', 'c'].map((name) => [`/${name}`, {
      get: { tags: ['all'], responses: { '200': ok(name, ref('schemas', name.toUpperCase())) } },
    }])),
    components: { schemas: { A: big(600), B: big(600), C: big(30) } },
  }
  const plan = planReference(doc, { maxOperations: 100, maxBytes: 1000 })
  t.same(plan.map((p) => p.operations.map((o) => o.path)), [['/a'], ['/b', '/c']],
    '/b would take the first part over 1000 bytes with 600 new bytes; /c adds 30 (under a tenth) and joins')
  t.same(plan.map((p) => p.piece), [{ index: 1, of: 2 }, { index: 2, of: 2 }])
})

t.test('a document without paths, or with operations without tags or a shared prefix', async (t) => {
  t.same(planReference({ openapi: '3.1.0', info: { title: 'x', version: '1' } }, LIMITS), [])
  const doc: Json = {
    openapi: '3.1.0', info: { title: 'x', version: '1' },
    paths: { '/': { get: { responses: { '200': ok('root') } } }, '/users': { get: { responses: { '200': ok('users') } } } },
  }
  const plan: PlannedPart[] = planReference(doc, LIMITS)
  t.same(plan.map((p) => p.name), ['/', '/users'])
  t.same(validateOpenApi(referencePart(doc, plan[0])).problems, [])
})

t.test('a 3.0 document\'s x-webhooks form the Webhooks part and stay out of every other part', async (t) => {
  const doc: Json = {
    openapi: '3.0.3', info: { title: 'Hooks', version: '1' },
    paths: { '/repos': { get: { tags: ['repos'], responses: { '200': ok('repos', ref('schemas', 'Repo')) } } } },
    'x-webhooks': { push: { post: { summary: 'A push', requestBody: { content: { 'application/json': { schema: ref('schemas', 'Push') } } }, responses: { '200': ok('seen') } } } },
    components: { schemas: { Repo: { type: 'string' }, Push: { type: 'object', properties: { repo: ref('schemas', 'Repo') } } } },
  }
  const plan = planReference(doc, LIMITS)
  t.same(plan.map((p) => p.name), ['repos', 'Webhooks'])
  t.same(plan[1].operations, [{ section: 'x-webhooks', path: 'push', method: 'post' }])
  const repos = referencePart(doc, plan[0])
  t.notOk('x-webhooks' in repos, 'a part of paths carries none of the webhooks')
  t.same(componentNames(repos), ['schemas/Repo'])
  const hooks = referencePart(doc, plan[1])
  t.same(Object.keys(hooks['x-webhooks'] as Json), ['push'])
  t.same(componentNames(hooks), ['schemas/Push', 'schemas/Repo'])
  t.same(validateOpenApi(hooks).problems, [])
})
