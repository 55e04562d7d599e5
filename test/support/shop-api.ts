/**
 * Real-shaped documents for the diff tests (issue 20), written here rather than copied from the corpus:
 * an OpenAPI 3.0 shop API with shared components (a Customer every order response embeds, list
 * envelopes, shared parameters, responses and headers, security, a recursive category tree, a
 * callback), and a JSON Schema of an order event. Each call returns a fresh copy to change.
 */

type Json = any

const money = () => ({
  type: 'object',
  required: ['amount', 'currency'],
  properties: {
    amount: { type: 'integer', format: 'int64', minimum: 0, description: 'In the smallest unit of the currency.' },
    currency: { type: 'string', pattern: '^[A-Z]{3}$', example: 'EUR' },
  },
})

export function shopApi(): Json {
  return {
    openapi: '3.0.3',
    info: { title: 'Shop', version: '2.3.0', description: 'Orders, customers and products.', contact: { email: 'api@shop.example' } },
    servers: [{ url: 'https://api.shop.example/v2' }],
    security: [{ apiKey: [] }],
    tags: [{ name: 'orders' }, { name: 'customers' }, { name: 'products' }],
    paths: {
      '/orders': {
        get: {
          operationId: 'listOrders',
          tags: ['orders'],
          summary: 'List orders',
          parameters: [
            { $ref: '#/components/parameters/Limit' },
            { $ref: '#/components/parameters/Cursor' },
            { name: 'status', in: 'query', schema: { $ref: '#/components/schemas/OrderStatus' } },
            { name: 'customer', in: 'query', schema: { type: 'string' } },
          ],
          responses: {
            '200': {
              description: 'A page of orders.',
              headers: { 'X-Rate-Limit-Remaining': { $ref: '#/components/headers/RateLimitRemaining' } },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/OrderList' } } },
            },
            '400': { $ref: '#/components/responses/BadRequest' },
            default: { $ref: '#/components/responses/Error' },
          },
        },
        post: {
          operationId: 'createOrder',
          tags: ['orders'],
          summary: 'Place an order',
          parameters: [{ name: 'Idempotency-Key', in: 'header', schema: { type: 'string', maxLength: 64 } }],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/NewOrder' } } },
          },
          responses: {
            '201': {
              description: 'The order.',
              headers: { Location: { required: true, schema: { type: 'string', format: 'uri' } } },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } },
            },
            '400': { $ref: '#/components/responses/BadRequest' },
            default: { $ref: '#/components/responses/Error' },
          },
          callbacks: {
            orderShipped: {
              '{$request.body#/callback_url}': {
                post: {
                  requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } } },
                  responses: { '204': { description: 'Received.' } },
                },
              },
            },
          },
        },
      },
      '/orders/{orderId}': {
        parameters: [{ name: 'orderId', in: 'path', required: true, schema: { type: 'string', pattern: '^ord_[a-z0-9]+$' } }],
        get: {
          operationId: 'getOrder',
          tags: ['orders'],
          responses: {
            '200': { description: 'The order.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } } },
            '404': { $ref: '#/components/responses/NotFound' },
          },
        },
        patch: {
          operationId: 'updateOrder',
          tags: ['orders'],
          requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/OrderUpdate' } } } },
          responses: {
            '200': { description: 'The order.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } } },
            '404': { $ref: '#/components/responses/NotFound' },
          },
        },
        delete: {
          operationId: 'cancelOrder',
          tags: ['orders'],
          deprecated: true,
          responses: { '204': { description: 'Cancelled.' }, '404': { $ref: '#/components/responses/NotFound' } },
        },
      },
      '/customers/{customerId}': {
        get: {
          operationId: 'getCustomer',
          tags: ['customers'],
          parameters: [{ name: 'customerId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '200': { description: 'The customer.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Customer' } } } },
            '404': { $ref: '#/components/responses/NotFound' },
          },
        },
      },
      '/products': {
        get: {
          operationId: 'listProducts',
          tags: ['products'],
          security: [],
          parameters: [{ $ref: '#/components/parameters/Limit' }, { name: 'category', in: 'query', schema: { type: 'string' } }],
          responses: {
            '200': {
              description: 'Products.',
              content: {
                'application/json': {
                  schema: { type: 'object', required: ['data'], properties: { data: { type: 'array', items: { $ref: '#/components/schemas/Product' } } } },
                },
              },
            },
          },
        },
      },
      '/categories': {
        get: {
          operationId: 'listCategories',
          tags: ['products'],
          security: [{ oauth: ['catalog:read'] }],
          responses: {
            '200': {
              description: 'The category tree.',
              content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Category' } } } },
            },
          },
        },
      },
    },
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
        oauth: {
          type: 'oauth2',
          flows: { clientCredentials: { tokenUrl: 'https://auth.shop.example/token', scopes: { 'catalog:read': 'Read the catalog' } } },
        },
      },
      parameters: {
        Limit: { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
        Cursor: { name: 'cursor', in: 'query', schema: { type: 'string' } },
      },
      headers: {
        RateLimitRemaining: { required: true, schema: { type: 'integer' }, description: 'Requests left in the window.' },
      },
      responses: {
        BadRequest: { description: 'The request was malformed.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        NotFound: { description: 'No such resource.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        Error: { description: 'Something failed.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['code', 'message'],
          properties: { code: { type: 'string' }, message: { type: 'string' }, details: { type: 'array', items: { type: 'string' } } },
        },
        OrderStatus: { type: 'string', enum: ['pending', 'paid', 'shipped', 'cancelled'] },
        Money: money(),
        Address: {
          type: 'object',
          required: ['line1', 'city', 'country'],
          properties: {
            line1: { type: 'string', maxLength: 200 },
            line2: { type: 'string', maxLength: 200, nullable: true },
            city: { type: 'string' },
            postal_code: { type: 'string' },
            country: { type: 'string', minLength: 2, maxLength: 2 },
          },
        },
        Customer: {
          type: 'object',
          required: ['id', 'email', 'created_at'],
          properties: {
            id: { type: 'string', readOnly: true },
            email: { type: 'string', format: 'email' },
            name: { type: 'string' },
            address: { $ref: '#/components/schemas/Address' },
            tier: { type: 'string', enum: ['standard', 'gold'] },
            created_at: { type: 'string', format: 'date-time', readOnly: true },
          },
        },
        LineItem: {
          type: 'object',
          required: ['product_id', 'quantity'],
          properties: {
            product_id: { type: 'string' },
            quantity: { type: 'integer', minimum: 1, maximum: 1000 },
            unit_price: { $ref: '#/components/schemas/Money' },
          },
        },
        Order: {
          type: 'object',
          required: ['id', 'status', 'customer', 'items', 'total'],
          properties: {
            id: { type: 'string' },
            status: { $ref: '#/components/schemas/OrderStatus' },
            customer: { $ref: '#/components/schemas/Customer' },
            items: { type: 'array', items: { $ref: '#/components/schemas/LineItem' }, minItems: 1 },
            total: { $ref: '#/components/schemas/Money' },
            note: { type: 'string', maxLength: 500 },
            shipping_address: { $ref: '#/components/schemas/Address' },
            payment: {
              oneOf: [{ $ref: '#/components/schemas/CardPayment' }, { $ref: '#/components/schemas/InvoicePayment' }],
              discriminator: { propertyName: 'method' },
            },
            metadata: { type: 'object', additionalProperties: { type: 'string' } },
          },
        },
        CardPayment: { type: 'object', required: ['method'], properties: { method: { type: 'string' }, last4: { type: 'string' } } },
        InvoicePayment: { type: 'object', required: ['method'], properties: { method: { type: 'string' }, due_days: { type: 'integer' } } },
        NewOrder: {
          type: 'object',
          required: ['customer_id', 'items'],
          additionalProperties: false,
          properties: {
            customer_id: { type: 'string' },
            items: { type: 'array', items: { $ref: '#/components/schemas/LineItem' }, minItems: 1, maxItems: 50 },
            note: { type: 'string', maxLength: 500 },
            shipping_address: { $ref: '#/components/schemas/Address' },
            coupon: { type: 'string' },
            callback_url: { type: 'string', format: 'uri' },
            gift: { type: 'boolean', default: false },
          },
        },
        OrderUpdate: {
          type: 'object',
          properties: { status: { $ref: '#/components/schemas/OrderStatus' }, note: { type: 'string', maxLength: 500 } },
        },
        OrderList: {
          type: 'object',
          required: ['data', 'has_more'],
          properties: {
            data: { type: 'array', items: { $ref: '#/components/schemas/Order' } },
            has_more: { type: 'boolean' },
            next_cursor: { type: 'string', nullable: true },
          },
        },
        Product: {
          type: 'object',
          required: ['id', 'name', 'price'],
          properties: {
            id: { type: 'string' },
            name: { type: 'string' },
            price: { $ref: '#/components/schemas/Money' },
            category: { $ref: '#/components/schemas/Category' },
          },
        },
        Category: {
          type: 'object',
          required: ['id', 'name'],
          properties: {
            id: { type: 'string' },
            name: { type: 'string' },
            parent: { $ref: '#/components/schemas/Category' },
            children: { type: 'array', items: { $ref: '#/components/schemas/Category' } },
          },
        },
        LegacyCoupon: { type: 'object', properties: { code: { type: 'string' } }, description: 'Kept for SDK generation; no operation uses it.' },
      },
    },
  }
}

/** A JSON Schema (2020-12) of an order event, with local definitions. */
export function orderEventSchema(): Json {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://shop.example/schemas/order-event.json',
    title: 'Order event',
    type: 'object',
    required: ['id', 'type', 'order'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      type: { enum: ['order.created', 'order.paid', 'order.shipped'] },
      occurred_at: { type: 'string', format: 'date-time' },
      order: { $ref: '#/$defs/order' },
      attempt: { type: 'integer', minimum: 1, maximum: 10 },
    },
    $defs: {
      order: {
        type: 'object',
        required: ['id', 'total'],
        properties: {
          id: { type: 'string' },
          total: { $ref: '#/$defs/money' },
          note: { type: ['string', 'null'], maxLength: 500 },
          tags: { type: 'array', items: { type: 'string' }, uniqueItems: true },
        },
      },
      money: money(),
      legacy: { type: 'object', description: 'Unused.' },
    },
  }
}
