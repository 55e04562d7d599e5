/**
 * OpenAPI 3.2 is accepted wherever 3.1 is: upload (validated against the 3.2 schema), lint (Spectral's
 * oas3_2 format), bundle, diff (the `query` method and additionalOperations are operations) and the
 * PHP SDK generator.
 */
import t from 'tap'
import { generatePhp } from '../../src/sdk/php/generator.js'
import { json, startTestServer, type TestServer } from '../helpers.js'

type Json = any

function events32(): Json {
  return {
    openapi: '3.2.0',
    $self: 'https://api.example.com/openapi.yaml',
    info: { title: 'Events', version: '1.0.0', description: 'Events of a shop', contact: { name: 'Shop team' } },
    servers: [{ url: 'https://api.example.com' }],
    tags: [{ name: 'events', description: 'Events' }],
    paths: {
      '/events': {
        query: {
          operationId: 'searchEvents', summary: 'Search events', description: 'Searches events with a query body', tags: ['events'],
          requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Filter' } } } },
          responses: {
            '200': {
              description: 'a stream of events',
              content: { 'application/jsonl': { itemSchema: { $ref: '#/components/schemas/Event' } } },
            },
          },
        },
        additionalOperations: {
          COPY: {
            operationId: 'copyEvents', summary: 'Copy events', description: 'Copies the events', tags: ['events'],
            responses: { '204': { description: 'copied' } },
          },
        },
      },
    },
    components: {
      schemas: {
        Filter: { type: 'object', properties: { type: { type: 'string' } } },
        Event: { type: 'object', required: ['id'], properties: { id: { type: 'string' }, type: { type: 'string' } } },
      },
    },
  }
}

async function created(s: TestServer, url: string, payload: Json): Promise<Json> {
  const res = await s.call({ method: 'POST', url, payload })
  if (res.statusCode !== 201) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
  return json(res).data
}

t.test('a 3.2 document is stored, linted, bundled and diffed', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = await created(s, '/v1/apis', { name: 'Events' })
  const v1 = await created(s, `/v1/apis/${api.id}/spec`, { document: events32() })
  t.match(v1, { number: 1, openapi: '3.2.0', title: 'Events' })

  const findings = json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/versions/${v1.id}/findings` })).data as Json[]
  t.notOk(findings.some((f) => f.code === 'oas3-schema'), `the recommended ruleset's schema check accepts 3.2 (${JSON.stringify(findings)})`)

  const bundled = await s.call({ method: 'GET', url: `/v1/apis/${api.id}/versions/${v1.id}/document?bundle=true` })
  t.equal(bundled.statusCode, 200)
  t.equal(json(bundled).paths['/events'].query.operationId, 'searchEvents')

  const v2doc = events32()
  delete v2doc.paths['/events'].additionalOperations
  v2doc.paths['/events'].query.requestBody.required = true
  await created(s, `/v1/apis/${api.id}/spec`, { document: v2doc })
  const diff = json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/diff?limit=100` })).data
  const changes = diff.changes as Json[]
  t.ok(changes.some((c) => c.check === 'operation-removed' && c.operation.method === 'copy' && c.operation.path === '/events'
    && c.pointer === '/paths/~1events/additionalOperations/COPY'), `the removed additional operation (${JSON.stringify(changes)})`)
  t.ok(changes.some((c) => c.operation?.method === 'query'), 'a change seen through the query operation')

  const invalid = events32()
  invalid.paths['/events'].query.parameters = [{ name: 'q', in: 'body' }]
  const refused = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: invalid } })
  t.equal(refused.statusCode, 422)
  t.ok((json(refused).errors as Json[]).some((e) => e.path.join('/') === 'paths//events/query/parameters/0/in' && /querystring/.test(e.message)), json(refused).errors)
})

t.test('the PHP SDK has a method for the query operation and for each additional operation', async (t) => {
  const files = generatePhp({
    target: 'php', sdk: { name: 'Events', slug: 'events' }, config: {}, apis: [{ name: 'Events', slug: 'events', document: events32() }],
  })
  const php = files.filter((f) => f.path.endsWith('.php')).map((f) => f.content).join('\n')
  t.match(php, /function searchEvents\(/)
  t.match(php, /callApi\('QUERY', /)
  t.match(php, /function copyEvents\(/)
  t.match(php, /callApi\('COPY', /)
})
