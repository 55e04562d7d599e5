/**
 * Deterministic OpenAPI documents of a chosen size with a realistic shape: resources with list, get,
 * create, update and delete operations, parameters, request bodies and responses by $ref, schemas
 * that refer to each other, and examples that match their schemas.
 */

/** A small seeded PRNG (mulberry32): the same seed gives the same sequence on every machine. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS = ['account', 'order', 'invoice', 'customer', 'shipment', 'product', 'payment', 'refund', 'coupon',
  'review', 'warehouse', 'supplier', 'ticket', 'session', 'report', 'webhook', 'subscription', 'plan', 'team', 'member']

type Json = Record<string, unknown>

function resource(i: number, rnd: () => number): { name: string; schema: Json; example: Json } {
  const name = `${WORDS[i % WORDS.length]}${Math.floor(i / WORDS.length) || ''}`
  const Name = name[0].toUpperCase() + name.slice(1)
  const properties: Json = {
    id: { type: 'string', format: 'uuid', description: `Identifier of the ${name}.` },
    created_at: { type: 'string', format: 'date-time' },
    status: { type: 'string', enum: ['active', 'pending', 'closed'] },
  }
  const example: Json = { id: '3fa85f64-5717-4562-b3fc-2c963f66afa6', created_at: '2024-01-01T00:00:00Z', status: 'active' }
  const fields = 4 + Math.floor(rnd() * 8)
  for (let f = 0; f < fields; f++) {
    const field = `${WORDS[(i + f * 7) % WORDS.length]}_${f}`
    if (f % 3 === 0) {
      properties[field] = { type: 'integer', minimum: 0, description: `Count of ${field}.` }
      example[field] = Math.floor(rnd() * 1000)
    } else if (f % 3 === 1) {
      properties[field] = { type: 'string', maxLength: 200, description: `The ${field} of this ${name}.` }
      example[field] = `${field} value ${Math.floor(rnd() * 1e6)}`
    } else {
      properties[field] = { type: 'array', items: { type: 'string' }, description: `Tags for ${field}.` }
      example[field] = ['a', 'b']
    }
  }
  // Like real descriptions: resources refer to a few shared schemas, not to long chains of each other.
  properties.address = { $ref: '#/components/schemas/Address' }
  properties.amount = { $ref: '#/components/schemas/Money' }
  const schema: Json = { type: 'object', description: `A ${name}.`, required: ['id', 'status'], properties, example }
  return { name: `${Name}${i}`, schema, example }
}

function operations(i: number, name: string, example: Json): Json {
  const ref = { $ref: `#/components/schemas/${name}` }
  const error = { $ref: '#/components/responses/Error' }
  const tag = [WORDS[i % WORDS.length]]
  const one = { description: `The ${name}.`, content: { 'application/json': { schema: ref, example } } }
  return {
    [`/v1/r${i}`]: {
      get: {
        operationId: `list${name}`, summary: `List ${name} items`, description: `Lists ${name} items, newest first.`, tags: tag,
        parameters: [{ $ref: '#/components/parameters/Limit' }, { $ref: '#/components/parameters/Cursor' }],
        responses: {
          '200': { description: 'A page.', content: { 'application/json': { schema: { type: 'object', properties: { data: { type: 'array', items: ref }, next: { type: 'string' } } } } } },
          '400': error,
        },
      },
      post: {
        operationId: `create${name}`, summary: `Create a ${name}`, description: `Creates a ${name}.`, tags: tag,
        requestBody: { required: true, content: { 'application/json': { schema: ref } } },
        responses: { '201': one, '400': error, '409': error },
      },
    },
    [`/v1/r${i}/{id}`]: {
      parameters: [{ name: 'id', in: 'path', required: true, description: 'The identifier.', schema: { type: 'string' } }],
      get: { operationId: `get${name}`, summary: `Get a ${name}`, description: `Answers one ${name}.`, tags: tag, responses: { '200': one, '404': error } },
      put: {
        operationId: `update${name}`, summary: `Update a ${name}`, description: `Replaces a ${name}.`, tags: tag,
        requestBody: { required: true, content: { 'application/json': { schema: ref } } },
        responses: { '200': one, '400': error, '404': error },
      },
      delete: { operationId: `delete${name}`, summary: `Delete a ${name}`, description: `Deletes a ${name}.`, tags: tag, responses: { '204': { description: 'Deleted.' }, '404': error } },
    },
  }
}

/** An OpenAPI 3.1 document whose JSON text is about `targetBytes` long. */
export function generateOpenApi(targetBytes: number, seed = 1, title = 'Generated API'): Json {
  const rnd = seededRandom(seed)
  const doc: Json = {
    openapi: '3.1.0',
    info: {
      title, version: `1.0.${seed}`, description: 'A generated API for benchmarks.',
      contact: { name: 'Bench', email: 'bench@example.com' }, license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: 'https://api.example.com' }],
    tags: WORDS.map((name) => ({ name, description: `Everything about ${name}s.` })),
    paths: {} as Json,
    components: {
      schemas: {
        Error: { type: 'object', required: ['code'], properties: { code: { type: 'string' }, message: { type: 'string' } } },
        Address: {
          type: 'object', description: 'A postal address.',
          properties: { line1: { type: 'string' }, city: { type: 'string' }, country: { type: 'string', minLength: 2, maxLength: 2 } },
        },
        Money: {
          type: 'object', description: 'An amount in a currency.', required: ['value', 'currency'],
          properties: { value: { type: 'integer' }, currency: { type: 'string', minLength: 3, maxLength: 3 } },
        },
      } as Json,
      parameters: {
        Limit: { name: 'limit', in: 'query', description: 'Page size.', schema: { type: 'integer', minimum: 1, maximum: 100 } },
        Cursor: { name: 'cursor', in: 'query', description: 'Where the page starts.', schema: { type: 'string' } },
      },
      responses: {
        Error: { description: 'An error.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    },
  }
  const paths = doc.paths as Json
  const schemas = (doc.components as { schemas: Json }).schemas
  let size = JSON.stringify(doc).length
  for (let i = 0; size < targetBytes; i++) {
    const { name, schema, example } = resource(i, rnd)
    schemas[name] = schema
    const ops = operations(i, name, example)
    Object.assign(paths, ops)
    size += JSON.stringify(schema).length + JSON.stringify(ops).length + name.length * 2 + 40
  }
  return doc
}
