import t from 'tap'
import { json, petstore, SEVERITY_RULESET, docWithFinding, startTestServer, type TestServer } from '../helpers.js'

const settle = () => new Promise((resolve) => setTimeout(resolve, 100))

async function metricsText(s: TestServer, headers: Record<string, string> = {}): Promise<string> {
  const res = await s.call({ method: 'GET', url: '/metrics', key: null, headers })
  t.equal(res.statusCode, 200)
  return res.body
}

/** The value of the first sample whose line starts with `prefix` (0 when there is none). */
function sample(text: string, prefix: string): number {
  const line = text.split('\n').find((l) => l.startsWith(prefix))
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0
}

t.test('GET /metrics: requests by route pattern and status, latency, versions, blobs, lint cache, worker phases', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const rs = json(await s.call({ method: 'POST', url: '/v1/rulesets', payload: { name: 'rules', document: SEVERITY_RULESET } })).data
  const a = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'a', ruleset_id: rs.id, blocking_severity: 'off' } })).data
  const b = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'b', ruleset_id: rs.id, blocking_severity: 'off' } })).data
  const v1 = json(await s.call({ method: 'POST', url: `/v1/apis/${a.id}/spec`, payload: { document: docWithFinding('warn') } })).data
  await s.call({ method: 'POST', url: `/v1/apis/${b.id}/spec`, payload: { document: docWithFinding('warn') } })
  await s.call({ method: 'POST', url: `/v1/apis/${a.id}/spec`, payload: { document: docWithFinding('none') } })
  t.equal((await s.call({ method: 'POST', url: `/v1/apis/${a.id}/versions/${v1.id}/restore` })).statusCode, 201)
  for (let i = 0; i < 3; i++) await s.call({ method: 'GET', url: `/v1/apis/${a.id}` })
  await s.call({ method: 'GET', url: `/v1/apis/${a.id}/spec?format=yaml` })
  await s.call({ method: 'GET', url: '/v1/apis/01J00000000000000000000000' })
  await s.call({ method: 'GET', url: '/no/such/route' })
  await settle()

  const res = await s.call({ method: 'GET', url: '/metrics', key: null })
  t.equal(res.statusCode, 200, 'no key needed unless REGISTRY_METRICS_TOKEN is set')
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/)
  const text = res.body
  t.equal(sample(text, 'registry_http_requests_total{method="GET",route="/v1/apis/:api",status="200"}'), 3)
  t.equal(sample(text, 'registry_http_requests_total{method="GET",route="/v1/apis/:api",status="404"}'), 1)
  t.equal(sample(text, 'registry_http_requests_total{method="GET",route="unmatched",status="404"}'), 1)
  t.equal(sample(text, 'registry_http_requests_total{method="POST",route="/v1/apis/:api/spec",status="201"}'), 3)
  t.equal(sample(text, 'registry_http_request_duration_seconds_count{method="GET",route="/v1/apis/:api"}'), 4)
  t.equal(sample(text, 'registry_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/v1/apis/:api"}'), 4, 'a latency histogram')
  t.notMatch(text, new RegExp(a.id), 'never a raw URL or id as a label')
  t.notMatch(text, /no\/such\/route/)

  t.equal(sample(text, 'registry_versions_written_total{kind="api",source="upload"}'), 3)
  t.equal(sample(text, 'registry_versions_written_total{kind="api",source="restore"}'), 1)
  t.equal(sample(text, 'registry_versions_written_total{kind="ruleset",source="upload"}'), 1)
  t.equal(sample(text, 'registry_lint_cache_lookups_total{result="miss"}'), 2, 'two documents linted')
  t.equal(sample(text, 'registry_lint_cache_lookups_total{result="hit"}'), 1, 'the same document on another API came from the cache')
  t.ok(sample(text, 'registry_document_phase_duration_seconds_count{phase="lint"}') >= 2)
  t.ok(sample(text, 'registry_document_phase_duration_seconds_count{phase="validate"}') >= 3)
  t.ok(sample(text, 'registry_document_phase_duration_seconds_count{phase="digest"}') >= 4)
  t.equal(sample(text, 'registry_document_phase_duration_seconds_count{phase="convert"}'), 1)
  t.match(text, /^registry_document_queue_depth 0$/m)
  t.match(text, /^registry_ready\{component="storage"\} 1$/m)
  t.match(text, /^registry_ready\{component="workers"\} 1$/m)

  let blobs = 0
  let bytes = 0
  for await (const blob of s.registry.blobs.list()) { blobs++; bytes += blob.size }
  t.equal(sample(text, 'registry_blobs '), blobs, `${blobs} blobs, as on disk`)
  t.equal(sample(text, 'registry_blob_bytes '), bytes)
})

t.test('a restarted server counts the blobs already stored', async (t) => {
  const first = await startTestServer()
  const storage = first.storage
  const api = json(await first.call({ method: 'POST', url: '/v1/apis', payload: { name: 'a' } })).data
  await first.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore() } })
  await first.app.close()
  await first.registry.close()
  const second = await startTestServer({ storage })
  t.teardown(async () => { await second.close(); (await import('node:fs')).rmSync(storage, { recursive: true, force: true }) })
  // The count on disk runs in the background after start: wait for it (a loaded machine takes a while).
  let blobs = 0
  for (let i = 0; i < 100 && blobs !== 1; i++, await settle()) blobs = sample(await metricsText(second), 'registry_blobs ')
  t.equal(blobs, 1)
})

t.test('REGISTRY_METRICS_TOKEN protects /metrics', async (t) => {
  const s = await startTestServer({ config: { metricsToken: 'scrape-token-123' } })
  t.teardown(s.close)
  for (const authorization of [undefined, 'Bearer wrong', 'Bearer scrape-token-1234', `Bearer ${s.key}`]) {
    const res = await s.call({ method: 'GET', url: '/metrics', key: null, headers: authorization ? { authorization } : {} })
    t.equal(res.statusCode, 401)
    t.match(res.headers['content-type'], /^application\/problem\+json/)
    t.equal(json(res).code, 'unauthorized')
  }
  const ok = await s.call({ method: 'GET', url: '/metrics', key: null, headers: { authorization: 'Bearer scrape-token-123' } })
  t.equal(ok.statusCode, 200)
})

t.test('GET /readyz: 200 when storage and workers are ready, 503 problem+json when not', async (t) => {
  const workers = { ready: true }
  const s = await startTestServer({
    wrapDocuments: (inner) => ({
      digest: (task) => inner.digest(task), check: (task) => inner.check(task), lint: (task) => inner.lint(task),
      convert: (task) => inner.convert(task), bundle: (task) => inner.bundle(task), diff: (task) => inner.diff(task), terms: (task) => inner.terms(task),
      locate: (task) => inner.locate(task), close: () => inner.close(),
      get ready() { return workers.ready }, get queueSize() { return inner.queueSize },
    }),
  })
  t.teardown(s.close)
  const ready = await s.call({ method: 'GET', url: '/readyz', key: null })
  t.equal(ready.statusCode, 200)
  t.same(json(ready), { status: 'ready', storage: true, workers: true })
  workers.ready = false
  const notReady = await s.call({ method: 'GET', url: '/readyz', key: null })
  t.equal(notReady.statusCode, 503)
  t.match(notReady.headers['content-type'], /^application\/problem\+json/)
  t.match(json(notReady), { code: 'unavailable', detail: /no document worker is running/ })
  t.equal((await s.call({ method: 'GET', url: '/healthz', key: null })).statusCode, 200, 'healthz only says the process is up')
})

t.test('x-request-id: taken from the client when it is a plain token, else generated; on every response', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const given = await s.call({ method: 'GET', url: '/v1/apis', headers: { 'x-request-id': 'trace-42.a:b_c' } })
  t.equal(given.headers['x-request-id'], 'trace-42.a:b_c')
  for (const bad of ['has space', 'x'.repeat(129), '<script>', 'a/b']) {
    const res = await s.call({ method: 'GET', url: '/v1/apis', headers: { 'x-request-id': bad } })
    const id = String(res.headers['x-request-id'])
    t.ok(id !== bad && /^[\w.:-]{1,128}$/.test(id), `'${bad.slice(0, 20)}' is replaced by ${id}`)
  }
  for (const res of [
    await s.call({ method: 'GET', url: '/v1/apis', key: null }),
    await s.call({ method: 'GET', url: '/nowhere' }),
    await s.call({ method: 'GET', url: '/metrics' }),
    await s.call({ method: 'GET', url: '/@acme/apis', key: null }),
  ]) t.match(res.headers['x-request-id'], /^[\w.:-]{1,128}$/, `on a ${res.statusCode}`)
  const ids = await Promise.all([1, 2, 3].map(() => s.call({ method: 'GET', url: '/healthz' })))
  t.equal(new Set(ids.map((r) => r.headers['x-request-id'])).size, 3, 'each generated id is new')
})

t.test('probes and metrics are never rate limited (behind a proxy they share the traffic\'s address)', async (t) => {
  const s = await startTestServer({ config: { rateLimitPerMinute: 2 } })
  t.teardown(s.close)
  for (let i = 0; i < 5; i++) {
    for (const url of ['/healthz', '/readyz', '/metrics']) t.equal((await s.call({ method: 'GET', url, key: null })).statusCode, 200, `${url} #${i + 1}`)
  }
  let limited = 0
  for (let i = 0; i < 4; i++) if ((await s.call({ method: 'GET', url: '/@acme/apis', key: null })).statusCode === 429) limited++
  t.ok(limited > 0, 'other routes are')
})
