/**
 * One test per check of the diff (src/documents/diff/checks.ts, the table in docs/changes.md): a pair
 * of versions of a real-shaped API where the check fires with its class, and where it must not.
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { CHECKS } from '../../src/documents/diff/checks.js'
import { diffJsonSchema } from '../../src/documents/diff/jsonschema.js'
import { diffOpenApi } from '../../src/documents/diff/openapi.js'
import { changesPage } from '../../src/documents/diff/result.js'
import type { Change, Classification } from '../../src/documents/diff/types.js'
import { orderEventSchema, shopApi } from '../support/shop-api.js'

type Doc = any
type Mutation = (doc: Doc) => void

/** Every change of the diff from `before` to `after`, as clients see them. */
function changes(mutate: Mutation, mutateBefore: Mutation = () => {}, base: () => Doc = shopApi): Change[] {
  const before = base()
  mutateBefore(before)
  const after = structuredClone(before)
  mutate(after)
  const result = base === shopApi ? diffOpenApi(before, after) : diffJsonSchema(before, after)
  return changesPage(result, 0, 100_000)
}

const at = (change: Change) => (change.operation ? `${change.operation.method} ${change.operation.path}` : change.component ?? '')

interface Expected {
  classification: Classification
  /** `method path`, a component, or '' for the document. */
  at?: string
  pointer?: string
  message?: RegExp
}

interface Case {
  name: string
  before?: Mutation
  change: Mutation
  fires: Expected[]
  /** A change where the check must not fire (with that class only, when `classification` is given). */
  quiet?: { name: string; before?: Mutation; change: Mutation; classification?: Classification }
  schema?: boolean
}

const orders = '/orders'
const order = '/orders/{orderId}'

const CASES: Record<string, Case[]> = {
  [CHECKS.operationAdded.id]: [{
    name: 'a PUT on an order',
    change: (d) => { d.paths[order].put = { responses: { '200': { description: 'ok' } } } },
    fires: [{ classification: 'non-breaking', at: `put ${order}`, pointer: '/paths/~1orders~1{orderId}/put' }],
  }],
  [CHECKS.operationRemoved.id]: [{
    name: 'PATCH of an order removed',
    change: (d) => { delete d.paths[order].patch },
    fires: [{ classification: 'breaking', at: `patch ${order}`, pointer: '/paths/~1orders~1{orderId}/patch', message: /operation was removed/ }],
    quiet: { name: 'a path parameter renamed keeps the operations', change: (d) => {
      d.paths['/orders/{id}'] = d.paths[order]
      delete d.paths[order]
      d.paths['/orders/{id}'].parameters[0].name = 'id'
    } },
  }],
  [CHECKS.deprecatedOperationRemoved.id]: [{
    name: 'the deprecated DELETE removed',
    change: (d) => { delete d.paths[order].delete },
    fires: [{ classification: 'non-breaking', at: `delete ${order}` }],
  }],
  [CHECKS.operationDeprecated.id]: [{
    name: 'GET of an order deprecated',
    change: (d) => { d.paths[order].get.deprecated = true },
    fires: [{ classification: 'non-breaking', at: `get ${order}`, pointer: '/paths/~1orders~1{orderId}/get/deprecated' }],
  }],
  [CHECKS.operationIdChanged.id]: [{
    name: 'listOrders renamed',
    change: (d) => { d.paths[orders].get.operationId = 'listAllOrders' },
    fires: [{ classification: 'non-breaking', at: `get ${orders}`, message: /"listOrders" to "listAllOrders"/ }],
  }],
  [CHECKS.securityAdded.id]: [
    {
      name: 'the open product list now needs the API key',
      change: (d) => { delete d.paths['/products'].get.security },
      fires: [{ classification: 'breaking', at: 'get /products', message: /now requires authentication: apiKey/ }],
      quiet: { name: 'another way to authenticate everywhere', change: (d) => { d.security.push({ oauth: [] }) } },
    },
    {
      name: 'a scope added to the category tree',
      change: (d) => { d.paths['/categories'].get.security[0].oauth.push('catalog:admin') },
      fires: [{ classification: 'breaking', at: 'get /categories', message: /oauth \(catalog:read\) must now use oauth \(catalog:read, catalog:admin\)/ }],
    },
  ],
  [CHECKS.securityRelaxed.id]: [{
    name: 'OAuth accepted besides the API key',
    change: (d) => { d.security.push({ oauth: [] }) },
    fires: [{ classification: 'non-breaking', at: `get ${orders}`, message: /also accepts oauth/ }],
    quiet: { name: 'the same requirements in another order', before: (d) => { d.security.push({ oauth: [] }) }, change: (d) => { d.security.reverse() } },
  }],
  [CHECKS.parameterAdded.id]: [{
    name: 'an optional sort parameter',
    change: (d) => { d.paths[orders].get.parameters.push({ name: 'sort', in: 'query', schema: { type: 'string' } }) },
    fires: [{ classification: 'non-breaking', at: `get ${orders}`, message: /optional query parameter `sort` was added/ }],
  }],
  [CHECKS.requiredParameterAdded.id]: [{
    name: 'a required region parameter',
    change: (d) => { d.paths[orders].get.parameters.push({ name: 'region', in: 'query', required: true, schema: { type: 'string' } }) },
    fires: [{ classification: 'breaking', at: `get ${orders}`, pointer: '/paths/~1orders/get/parameters/4' }],
  }],
  [CHECKS.parameterRemoved.id]: [{
    name: 'the customer filter removed',
    change: (d) => { d.paths[orders].get.parameters.splice(3, 1) },
    fires: [{ classification: 'breaking', at: `get ${orders}`, pointer: '/paths/~1orders/get/parameters/3', message: /query parameter `customer` was removed/ }],
    quiet: { name: 'a header parameter renamed only in case', change: (d) => { d.paths[orders].post.parameters[0].name = 'idempotency-key' } },
  }],
  [CHECKS.deprecatedParameterRemoved.id]: [{
    name: 'the deprecated customer filter removed',
    before: (d) => { d.paths[orders].get.parameters[3].deprecated = true },
    change: (d) => { d.paths[orders].get.parameters.splice(3, 1) },
    fires: [{ classification: 'non-breaking', at: `get ${orders}` }],
  }],
  [CHECKS.parameterBecameRequired.id]: [{
    name: 'the customer filter became required',
    change: (d) => { d.paths[orders].get.parameters[3].required = true },
    fires: [{ classification: 'breaking', at: `get ${orders}`, pointer: '/paths/~1orders/get/parameters/3/required' }],
  }],
  [CHECKS.parameterBecameOptional.id]: [{
    name: 'the customer filter became optional',
    before: (d) => { d.paths[orders].get.parameters[3].required = true },
    change: (d) => { delete d.paths[orders].get.parameters[3].required },
    fires: [{ classification: 'non-breaking', at: `get ${orders}` }],
  }],
  [CHECKS.parameterSerializationChanged.id]: [{
    name: 'the customer filter no longer explodes',
    change: (d) => { d.paths[orders].get.parameters[3].explode = false },
    fires: [{ classification: 'breaking', at: `get ${orders}`, message: /explode/ }],
  }],
  [CHECKS.parameterDeprecated.id]: [{
    name: 'the customer filter deprecated',
    change: (d) => { d.paths[orders].get.parameters[3].deprecated = true },
    fires: [{ classification: 'non-breaking', at: `get ${orders}` }],
  }],
  [CHECKS.requestBodyAdded.id]: [{
    name: 'an optional reason when cancelling',
    change: (d) => { d.paths[order].delete.requestBody = { content: { 'application/json': { schema: { type: 'object' } } } } },
    fires: [{ classification: 'non-breaking', at: `delete ${order}` }],
  }],
  [CHECKS.requiredRequestBodyAdded.id]: [{
    name: 'a required reason when cancelling',
    change: (d) => { d.paths[order].delete.requestBody = { required: true, content: { 'application/json': { schema: { type: 'object' } } } } },
    fires: [{ classification: 'breaking', at: `delete ${order}` }],
  }],
  [CHECKS.requestBodyRemoved.id]: [{
    name: 'the update body removed',
    change: (d) => { delete d.paths[order].patch.requestBody },
    fires: [{ classification: 'breaking', at: `patch ${order}`, pointer: '/paths/~1orders~1{orderId}/patch/requestBody' }],
  }],
  [CHECKS.requestBodyBecameRequired.id]: [{
    name: 'the update body became required',
    change: (d) => { d.paths[order].patch.requestBody.required = true },
    fires: [{ classification: 'breaking', at: `patch ${order}` }],
  }],
  [CHECKS.requestBodyBecameOptional.id]: [{
    name: 'the order body became optional',
    change: (d) => { delete d.paths[orders].post.requestBody.required },
    fires: [{ classification: 'non-breaking', at: `post ${orders}` }],
  }],
  [CHECKS.requestMediaTypeAdded.id]: [{
    name: 'orders also as a form',
    change: (d) => { d.paths[orders].post.requestBody.content['application/x-www-form-urlencoded'] = { schema: { $ref: '#/components/schemas/NewOrder' } } },
    fires: [{ classification: 'non-breaking', at: `post ${orders}` }],
  }],
  [CHECKS.requestMediaTypeRemoved.id]: [{
    name: 'orders only as a form',
    change: (d) => {
      d.paths[orders].post.requestBody.content = { 'application/x-www-form-urlencoded': { schema: { $ref: '#/components/schemas/NewOrder' } } }
    },
    fires: [{ classification: 'breaking', at: `post ${orders}`, message: /no longer has the media type application\/json/ }],
  }],
  [CHECKS.responseAdded.id]: [{
    name: 'a 409 for placing an order',
    change: (d) => { d.paths[orders].post.responses['409'] = { description: 'Conflict.' } },
    fires: [{ classification: 'non-breaking', at: `post ${orders}` }],
  }],
  [CHECKS.successResponseRemoved.id]: [{
    name: '201 replaced by 200',
    change: (d) => {
      d.paths[orders].post.responses['200'] = d.paths[orders].post.responses['201']
      delete d.paths[orders].post.responses['201']
    },
    fires: [{ classification: 'breaking', at: `post ${orders}`, pointer: '/paths/~1orders/post/responses/201' }],
  }],
  [CHECKS.responseRemoved.id]: [{
    name: 'the 400 of placing an order removed',
    change: (d) => { delete d.paths[orders].post.responses['400'] },
    fires: [{ classification: 'non-breaking', at: `post ${orders}` }],
  }],
  [CHECKS.responseMediaTypeAdded.id]: [{
    name: 'an order also as XML',
    change: (d) => { d.paths[order].get.responses['200'].content['application/xml'] = { schema: { $ref: '#/components/schemas/Order' } } },
    fires: [{ classification: 'non-breaking', at: `get ${order}` }],
  }],
  [CHECKS.responseMediaTypeRemoved.id]: [{
    name: 'an order only as XML',
    change: (d) => { d.paths[order].get.responses['200'].content = { 'application/xml': { schema: { $ref: '#/components/schemas/Order' } } } },
    fires: [{ classification: 'breaking', at: `get ${order}` }],
  }],
  [CHECKS.responseHeaderAdded.id]: [{
    name: 'a request id header',
    change: (d) => { d.paths[orders].get.responses['200'].headers['X-Request-Id'] = { schema: { type: 'string' } } },
    fires: [{ classification: 'non-breaking', at: `get ${orders}` }],
  }],
  [CHECKS.responseHeaderRemoved.id]: [{
    name: 'the required Location header removed',
    change: (d) => { delete d.paths[orders].post.responses['201'].headers.Location },
    fires: [{ classification: 'breaking', at: `post ${orders}`, message: /response 201 header `location` was removed/ }],
  }],
  [CHECKS.optionalResponseHeaderRemoved.id]: [{
    name: 'an optional trace header removed',
    before: (d) => { d.paths[orders].post.responses['201'].headers['X-Trace'] = { schema: { type: 'string' } } },
    change: (d) => { delete d.paths[orders].post.responses['201'].headers['X-Trace'] },
    fires: [{ classification: 'non-breaking', at: `post ${orders}` }],
  }],
  [CHECKS.responseHeaderBecameOptional.id]: [{
    name: 'the shared rate limit header no longer required',
    change: (d) => { d.components.headers.RateLimitRemaining.required = false },
    fires: [{ classification: 'breaking', at: `get ${orders}`, pointer: '/components/headers/RateLimitRemaining/required' }],
  }],
  [CHECKS.responseHeaderBecameRequired.id]: [{
    name: 'Location required again',
    before: (d) => { d.paths[orders].post.responses['201'].headers.Location.required = false },
    change: (d) => { d.paths[orders].post.responses['201'].headers.Location.required = true },
    fires: [{ classification: 'non-breaking', at: `post ${orders}` }],
  }],
  [CHECKS.typeChanged.id]: [{
    name: "a customer's name became an integer",
    change: (d) => { d.components.schemas.Customer.properties.name.type = 'integer' },
    fires: ['get /orders', 'post /orders', `get ${order}`, `patch ${order}`, 'get /customers/{customerId}'].map((op) => ({
      classification: 'breaking' as const, at: op, pointer: '/components/schemas/Customer/properties/name/type', message: /type of `Customer.name` changed from string to integer/,
    })),
  }],
  [CHECKS.typeWidened.id]: [{
    name: 'quantities may be fractional',
    change: (d) => { d.components.schemas.LineItem.properties.quantity.type = 'number' },
    fires: [
      { classification: 'non-breaking', at: `post ${orders}`, message: /^request body \(application\/json\): `LineItem.quantity` now also allows type number/ },
      { classification: 'breaking', at: `get ${order}`, message: /^response 200/ },
    ],
  }],
  [CHECKS.typeNarrowed.id]: [{
    name: 'quantities must be whole again',
    before: (d) => { d.components.schemas.LineItem.properties.quantity.type = 'number' },
    change: (d) => { d.components.schemas.LineItem.properties.quantity.type = 'integer' },
    fires: [
      { classification: 'breaking', at: `post ${orders}`, message: /^request body/ },
      { classification: 'non-breaking', at: `get ${order}`, message: /^response 200/ },
    ],
  }],
  [CHECKS.nullableAdded.id]: [{
    name: 'a city may be null',
    change: (d) => { d.components.schemas.Address.properties.city.nullable = true },
    fires: [
      { classification: 'breaking', at: `get ${order}`, pointer: '/components/schemas/Address/properties/city/nullable' },
      { classification: 'non-breaking', at: `post ${orders}`, message: /^request body/ },
    ],
  }],
  [CHECKS.nullableRemoved.id]: [{
    name: 'line2 may no longer be null',
    change: (d) => { delete d.components.schemas.Address.properties.line2.nullable },
    fires: [
      { classification: 'breaking', at: `post ${orders}`, message: /^request body/ },
      { classification: 'non-breaking', at: `get ${order}` },
    ],
  }],
  [CHECKS.formatChanged.id]: [{
    name: 'created_at became a date',
    change: (d) => { d.components.schemas.Customer.properties.created_at.format = 'date' },
    fires: [{ classification: 'breaking', at: 'get /customers/{customerId}', message: /"date-time" to "date"/ }],
  }],
  [CHECKS.formatRelaxed.id]: [{
    name: 'amounts widened from int32 to int64',
    before: (d) => { d.components.schemas.Money.properties.amount.format = 'int32' },
    change: (d) => { d.components.schemas.Money.properties.amount.format = 'int64' },
    fires: [{ classification: 'breaking', at: 'get /products' }, { classification: 'non-breaking', at: `post ${orders}` }],
  }],
  [CHECKS.formatTightened.id]: [{
    name: 'coupons must be UUIDs',
    change: (d) => { d.components.schemas.NewOrder.properties.coupon.format = 'uuid' },
    fires: [{ classification: 'breaking', at: `post ${orders}` }],
  }],
  [CHECKS.enumValueAdded.id]: [{
    name: 'a refunded order status',
    change: (d) => { d.components.schemas.OrderStatus.enum.push('refunded') },
    fires: [
      { classification: 'breaking', at: `get ${order}`, pointer: '/components/schemas/OrderStatus/enum/4', message: /^response 200 \(application\/json\): `OrderStatus` allows the new value "refunded"/ },
      { classification: 'non-breaking', at: `get ${orders}`, message: /^query parameter `status`/ },
      { classification: 'non-breaking', at: `patch ${order}`, message: /^request body/ },
    ],
  }],
  [CHECKS.enumValueRemoved.id]: [{
    name: 'the cancelled status removed',
    change: (d) => { d.components.schemas.OrderStatus.enum.pop() },
    fires: [
      { classification: 'breaking', at: `get ${orders}`, pointer: '/components/schemas/OrderStatus/enum/3', message: /^query parameter `status`: `OrderStatus` no longer allows the value "cancelled"/ },
      { classification: 'non-breaking', at: `get ${order}` },
    ],
  }],
  [CHECKS.enumAdded.id]: [{
    name: 'coupons limited to a list',
    change: (d) => { d.components.schemas.NewOrder.properties.coupon.enum = ['WELCOME', 'SPRING'] },
    fires: [{ classification: 'breaking', at: `post ${orders}` }],
  }],
  [CHECKS.enumRemoved.id]: [{
    name: 'customer tiers no longer a list',
    change: (d) => { delete d.components.schemas.Customer.properties.tier.enum },
    fires: [{ classification: 'breaking', at: 'get /customers/{customerId}' }],
  }],
  [CHECKS.constraintTightened.id]: [
    {
      name: 'shorter notes',
      change: (d) => { d.components.schemas.NewOrder.properties.note.maxLength = 200 },
      fires: [{ classification: 'breaking', at: `post ${orders}`, message: /maxLength of `NewOrder.note` changed from 500 to 200/ }],
    },
    {
      name: 'smaller pages',
      change: (d) => { d.components.parameters.Limit.schema.maximum = 50 },
      fires: [{ classification: 'breaking', at: `get ${orders}` }, { classification: 'breaking', at: 'get /products' }],
    },
  ],
  [CHECKS.constraintRelaxed.id]: [{
    name: 'longer address lines',
    change: (d) => { d.components.schemas.Address.properties.line1.maxLength = 300 },
    fires: [{ classification: 'breaking', at: `get ${order}` }, { classification: 'non-breaking', at: `post ${orders}` }],
  }],
  [CHECKS.constraintChanged.id]: [{
    name: 'another currency pattern',
    change: (d) => { d.components.schemas.Money.properties.currency.pattern = '^[a-z]{3}$' },
    fires: [{ classification: 'breaking', at: `post ${orders}` }, { classification: 'breaking', at: 'get /products' }],
  }],
  [CHECKS.propertyAdded.id]: [{
    name: 'orders show a discount',
    change: (d) => { d.components.schemas.Order.properties.discount = { $ref: '#/components/schemas/Money' } },
    fires: [{ classification: 'non-breaking', at: `get ${order}`, message: /optional property `Order.discount` was added/ }],
  }],
  [CHECKS.requiredPropertyAdded.id]: [{
    name: 'orders must name a channel',
    change: (d) => {
      d.components.schemas.NewOrder.properties.channel = { type: 'string' }
      d.components.schemas.NewOrder.required.push('channel')
    },
    fires: [{ classification: 'breaking', at: `post ${orders}` }],
    quiet: { name: 'a required read-only property is no request property', classification: 'breaking', change: (d) => {
      d.components.schemas.Customer.properties.updated_at = { type: 'string', readOnly: true }
      d.components.schemas.Customer.required.push('updated_at')
    } },
  }],
  [CHECKS.propertyRemoved.id]: [{
    name: "orders no longer show the note",
    change: (d) => { delete d.components.schemas.Order.properties.note },
    fires: [{ classification: 'breaking', at: `get ${order}`, pointer: '/components/schemas/Order/properties/note' }],
    quiet: { name: 'a request property of an open object removed', classification: 'breaking', change: (d) => { delete d.components.schemas.OrderUpdate.properties.note } },
  }],
  [CHECKS.closedPropertyRemoved.id]: [{
    name: 'coupons removed from new orders, which allow no other property',
    change: (d) => { delete d.components.schemas.NewOrder.properties.coupon },
    fires: [{ classification: 'breaking', at: `post ${orders}`, pointer: '/components/schemas/NewOrder/properties/coupon' }],
  }],
  [CHECKS.propertyBecameRequired.id]: [{
    name: 'notes required',
    change: (d) => { d.components.schemas.NewOrder.required.push('note') },
    fires: [{ classification: 'breaking', at: `post ${orders}`, pointer: '/components/schemas/NewOrder/required' }],
  }],
  [CHECKS.propertyBecameOptional.id]: [{
    name: 'the order total may be missing',
    change: (d) => { d.components.schemas.Order.required = ['id', 'status', 'customer', 'items'] },
    fires: [{ classification: 'breaking', at: `get ${order}`, message: /property `Order.total` is no longer required/ }],
  }],
  [CHECKS.additionalPropertiesNarrowed.id]: [{
    name: 'updates allow no other properties',
    change: (d) => { d.components.schemas.OrderUpdate.additionalProperties = false },
    fires: [{ classification: 'breaking', at: `patch ${order}` }],
  }],
  [CHECKS.additionalPropertiesWidened.id]: [{
    name: 'metadata values of any type',
    change: (d) => { delete d.components.schemas.Order.properties.metadata.additionalProperties },
    fires: [{ classification: 'breaking', at: `get ${order}` }],
  }],
  [CHECKS.variantAdded.id]: [{
    name: 'a wallet payment',
    change: (d) => {
      d.components.schemas.WalletPayment = { type: 'object', required: ['method'], properties: { method: { type: 'string' } } }
      d.components.schemas.Order.properties.payment.oneOf.push({ $ref: '#/components/schemas/WalletPayment' })
    },
    fires: [{ classification: 'breaking', at: `get ${order}`, message: /allows a new alternative WalletPayment/ }],
  }],
  [CHECKS.variantRemoved.id]: [{
    name: 'no more invoices',
    change: (d) => { d.components.schemas.Order.properties.payment.oneOf.pop() },
    fires: [{ classification: 'non-breaking', at: `get ${order}`, message: /no longer allows the alternative InvoicePayment/ }],
  }],
  [CHECKS.allOfMemberAdded.id]: [{
    name: 'new orders must also have a note',
    change: (d) => { d.components.schemas.NewOrder.allOf = [{ required: ['note'] }] },
    fires: [{ classification: 'breaking', at: `post ${orders}` }],
  }],
  [CHECKS.allOfMemberRemoved.id]: [{
    name: 'new orders no longer need a note',
    before: (d) => { d.components.schemas.NewOrder.allOf = [{ required: ['note'] }] },
    change: (d) => { delete d.components.schemas.NewOrder.allOf },
    fires: [{ classification: 'non-breaking', at: `post ${orders}` }],
  }],
  [CHECKS.defaultChanged.id]: [{
    name: 'larger default pages',
    change: (d) => { d.components.parameters.Limit.schema.default = 50 },
    fires: [{ classification: 'breaking', at: `get ${orders}`, message: /default of the schema changed from 20 to 50/ }, { classification: 'breaking', at: 'get /products' }],
  }],
  [CHECKS.discriminatorChanged.id]: [{
    name: 'payments discriminated by type',
    change: (d) => { d.components.schemas.Order.properties.payment.discriminator.propertyName = 'type' },
    fires: [{ classification: 'breaking', at: `get ${order}` }],
  }],
  [CHECKS.deprecated.id]: [{
    name: 'customer tiers deprecated',
    change: (d) => { d.components.schemas.Customer.properties.tier.deprecated = true },
    fires: [{ classification: 'non-breaking', at: 'get /customers/{customerId}' }],
  }],
  [CHECKS.accessChanged.id]: [{
    name: 'email read-only',
    change: (d) => { d.components.schemas.Customer.properties.email.readOnly = true },
    fires: [{ classification: 'non-breaking', at: 'get /customers/{customerId}', message: /`Customer.email` is now read-only/ }],
  }],
  [CHECKS.schemaChanged.id]: [{
    name: 'a country that must not be XX',
    change: (d) => { d.components.schemas.Address.properties.country.not = { enum: ['XX'] } },
    fires: [{ classification: 'breaking', at: `post ${orders}` }, { classification: 'breaking', at: `get ${order}` }],
  }],
  [CHECKS.componentAdded.id]: [{
    name: 'an unused schema',
    change: (d) => { d.components.schemas.Voucher = { type: 'object' } },
    fires: [{ classification: 'non-breaking', at: 'schemas/Voucher', pointer: '/components/schemas/Voucher' }],
  }],
  [CHECKS.componentRemoved.id]: [{
    name: 'the unused legacy coupon removed',
    change: (d) => { delete d.components.schemas.LegacyCoupon },
    fires: [{ classification: 'non-breaking', at: 'schemas/LegacyCoupon' }],
  }],
  [CHECKS.componentChanged.id]: [{
    name: 'an unused parameter changed',
    before: (d) => { d.components.parameters.Expand = { name: 'expand', in: 'query', schema: { type: 'string' } } },
    change: (d) => { d.components.parameters.Expand.required = true },
    fires: [{ classification: 'non-breaking', at: 'parameters/Expand' }],
  }],
  [CHECKS.securitySchemeChanged.id]: [{
    name: 'the API key in another header',
    change: (d) => { d.components.securitySchemes.apiKey.name = 'Authorization' },
    fires: [{ classification: 'breaking', at: 'securitySchemes/apiKey', pointer: '/components/securitySchemes/apiKey/name' }],
    quiet: { name: 'a new OAuth scope', change: (d) => { d.components.securitySchemes.oauth.flows.clientCredentials.scopes['catalog:write'] = 'Write' } },
  }],
  [CHECKS.externalReferenceChanged.id]: [{
    name: 'products refer to a newer registry schema',
    before: (d) => { d.components.schemas.Product.properties.category = { $ref: '/@shop/schemas/category/versions/1' } },
    change: (d) => { d.components.schemas.Product.properties.category = { $ref: '/@shop/schemas/category/versions/2' } },
    fires: [{ classification: 'non-breaking', at: 'get /products' }],
  }],
  [CHECKS.serversChanged.id]: [{
    name: 'a new server',
    change: (d) => { d.servers.push({ url: 'https://eu.api.shop.example/v2' }) },
    fires: [{ classification: 'non-breaking', at: '', pointer: '/servers' }],
  }],
  [CHECKS.openapiVersionChanged.id]: [{
    name: '3.0.3 to 3.0.2',
    change: (d) => { d.openapi = '3.0.2' },
    fires: [{ classification: 'non-breaking', at: '', pointer: '/openapi' }],
  }],
  [CHECKS.annotationChanged.id]: [{
    name: 'descriptions and the version',
    change: (d) => {
      d.info.version = '2.4.0'
      d.components.schemas.Customer.properties.name.description = 'The full name.'
      d.paths[orders].get.summary = 'List the orders'
    },
    fires: [
      { classification: 'annotation', at: '', pointer: '/info/version', message: /info.version changed from "2.3.0" to "2.4.0"/ },
      { classification: 'annotation', at: 'get /customers/{customerId}', message: /description of `Customer.name` was added/ },
      { classification: 'annotation', at: `get ${orders}`, pointer: '/paths/~1orders/get/summary' },
    ],
  }],
}

/** JSON Schemas: the class is backward compatibility's (the new schema reads data written with the old one). */
const SCHEMA_CASES: Case[] = [
  { name: 'an event type added (old data still valid)', change: (d) => { d.properties.type.enum.push('order.refunded') }, fires: [{ classification: 'non-breaking', message: /allows the new value "order.refunded"/ }] },
  { name: 'an event type removed', change: (d) => { d.properties.type.enum.shift() }, fires: [{ classification: 'breaking', pointer: '/properties/type/enum/0' }] },
  { name: 'occurred_at required', change: (d) => { d.required.push('occurred_at') }, fires: [{ classification: 'breaking', message: /property `occurred_at` became required/ }] },
  { name: 'more attempts allowed', change: (d) => { d.properties.attempt.maximum = 20 }, fires: [{ classification: 'non-breaking' }] },
  { name: 'a currency pattern in a definition', change: (d) => { d.$defs.money.properties.currency.pattern = '^[A-Z]{3,4}$' }, fires: [{ classification: 'breaking', pointer: '/$defs/money/properties/currency/pattern', message: /`money.currency`/ }] },
  { name: 'notes may no longer be null', change: (d) => { d.$defs.order.properties.note.type = 'string' }, fires: [{ classification: 'breaking', message: /may no longer be null/ }] },
  { name: 'an unused definition changed', change: (d) => { d.$defs.legacy.type = 'string' }, fires: [{ classification: 'non-breaking', pointer: '/$defs/legacy/type' }] },
]

function matches(change: Change, expected: Expected, check: string): boolean {
  return change.check === check && change.classification === expected.classification
    && (expected.at === undefined || at(change) === expected.at)
    && (expected.pointer === undefined || change.pointer === expected.pointer)
    && (expected.message === undefined || expected.message.test(change.message))
}

const listed = (all: Change[]) => all.map((c) => `${c.check} ${c.classification} ${at(c)} ${c.pointer} ${c.message}`).join('\n')

t.test('every check has a case, and a row in docs/changes.md with its classes', async (t) => {
  const doc = readFileSync(new URL('../../docs/changes.md', import.meta.url), 'utf8')
  for (const check of Object.values(CHECKS)) {
    t.ok(CASES[check.id], `${check.id} is tested`)
    t.ok(doc.includes(`| \`${check.id}\` | ${check.finds} | ${check.request} | ${check.response} |`), `${check.id} is in the table`)
  }
})

for (const [check, cases] of Object.entries(CASES)) {
  t.test(check, async (t) => {
    for (const c of cases) {
      const all = changes(c.change, c.before)
      for (const expected of c.fires) {
        const found = all.some((change) => matches(change, expected, check))
        t.ok(found, `${c.name}: ${check} ${expected.classification} at ${expected.at ?? 'anywhere'}`, found ? {} : { found: listed(all) })
      }
      if (c.quiet) {
        const quiet = changes(c.quiet.change, c.quiet.before)
        const only = c.quiet.classification
        const fired = quiet.some((change) => change.check === check && (only === undefined || change.classification === only))
        t.notOk(fired, `${c.quiet.name}: no ${only ? `${only} ` : ''}${check}`, fired ? { found: listed(quiet) } : {})
      }
    }
  })
}

t.test('a type changed in a referenced component is reported at every operation that uses it, and only there', async (t) => {
  const all = changes((d) => { d.components.schemas.Customer.properties.name.type = 'integer' })
  t.same(all.map(at).sort(), ['get /customers/{customerId}', 'get /orders', 'get /orders/{orderId}', 'patch /orders/{orderId}', 'post /orders'])
  t.ok(all.every((c) => c.pointer === '/components/schemas/Customer/properties/name/type' && c.classification === 'breaking'))
})

t.test('a schema no operation uses is compared keyword by keyword, every change non-breaking', async (t) => {
  const all = changes((d) => { d.components.schemas.LegacyCoupon.properties.code.type = 'integer' })
  t.match(all, [{ check: 'type-changed', classification: 'non-breaking', component: 'schemas/LegacyCoupon', operation: null, message: /type of `LegacyCoupon.code`/ }])
  t.equal(all.length, 1)
})

t.test('a recursive schema is compared once and its changes found wherever it recurs', async (t) => {
  const all = changes((d) => { d.components.schemas.Category.properties.slug = { type: 'string' }; d.components.schemas.Category.required.push('slug') })
  t.same(all.map((c) => `${at(c)} ${c.check} ${c.classification}`).sort(), [
    'get /categories required-property-added non-breaking',
    'get /products required-property-added non-breaking',
  ])
})

t.test('JSON Schema: backward compatibility (data written with the old schema is valid under the new one)', async (t) => {
  for (const c of SCHEMA_CASES) {
    const all = changes(c.change, c.before, orderEventSchema)
    for (const expected of c.fires) {
      const found = all.some((change) => change.classification === expected.classification
        && (expected.pointer === undefined || change.pointer === expected.pointer)
        && (expected.message === undefined || expected.message.test(change.message)))
      t.ok(found, c.name, found ? {} : { found: listed(all) })
      t.ok(all.every((change) => change.operation === null && change.component === null), 'schema changes name no operation or component')
    }
  }
})
