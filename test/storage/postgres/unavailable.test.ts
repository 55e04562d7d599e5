/**
 * PostgreSQL going away under a running registry (docs/scale-out.md, failure behaviour): requests that
 * need the database answer 503 `unavailable` with Retry-After (not 500 `internal`), without naming the
 * database; `/readyz` says not ready; nothing is half-written; and when the database is back the same
 * process answers again, without a restart.
 */
import t from 'tap'
import { json, petstore, startTestServer } from '../../helpers.js'
import { postgresForFile } from '../../support/postgres.js'

const server = await postgresForFile(t)

if (server) {
  t.test('the database stopped and started again under a running registry: 503 meanwhile, then answers as before', async (t) => {
    const s = await startTestServer({ databaseUrl: await server.createDatabase() })
    t.teardown(s.close)
    const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Pets' } })).data
    t.equal((await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('1.0.0') } })).statusCode, 201)

    server.pause()
    let resumed = false
    t.teardown(() => { if (!resumed) server.resume() })
    const requests = [
      { method: 'GET', url: `/v1/apis/${api.id}` },
      { method: 'GET', url: '/@default/apis' },
      { method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('2.0.0') } },
      { method: 'POST', url: '/v1/apis', payload: { name: 'Orders' } },
    ] as const
    for (const request of requests) {
      const answer = await s.call({ ...request })
      t.equal(answer.statusCode, 503, `${request.method} ${request.url}: ${answer.body}`)
      t.match(json(answer), { status: 503, code: 'unavailable', detail: 'the database cannot be reached; retry later' })
      t.equal(answer.headers['retry-after'], '5')
      t.notMatch(answer.body, server.socketDirectory, 'the database is not named')
    }
    t.equal((await s.call({ method: 'GET', url: '/readyz', key: null })).statusCode, 503, 'not ready')

    server.resume()
    resumed = true
    const back = await s.call({ method: 'GET', url: `/v1/apis/${api.id}` })
    t.equal(back.statusCode, 200, `the same process answers again: ${back.body}`)
    t.equal(json(back).data.current.number, 1, 'the upload sent during the outage was not stored')
    t.equal((await s.call({ method: 'GET', url: '/v1/apis?limit=100' })).body.includes('"Orders"'), false, 'nor the create')
    t.equal((await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('2.0.0') } })).statusCode, 201, 'writes go on: version 2')
    t.equal((await s.call({ method: 'GET', url: '/readyz', key: null })).statusCode, 200, 'ready again')
  })

  t.test('a session the server ends in the middle of a transaction: that transaction is unavailable, and the process goes on', async (t) => {
    const s = await startTestServer({ databaseUrl: await server.createDatabase() })
    t.teardown(s.close)
    let resumed = false
    t.teardown(() => { if (!resumed) server.resume() })
    // The server stops while the transaction's session is idle between two queries: no query is
    // there to receive the error, only the client.
    const interrupted = s.registry.storage.transaction(async (tx) => {
      await tx.organizations.bySlug('acme')
      server.pause()
      await new Promise((resolve) => setTimeout(resolve, 500))
      return tx.organizations.bySlug('acme')
    })
    await t.rejects(interrupted, { code: 'unavailable' }, 'the transaction is answered unavailable')
    server.resume()
    resumed = true
    t.equal((await s.call({ method: 'GET', url: '/v1/apis' })).statusCode, 200, 'the same process answers again')
  })
}
