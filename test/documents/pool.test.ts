import t from 'tap'
import { createHash } from 'node:crypto'
import { DocumentWorkers } from '../../src/documents/pool.js'
import { RegistryError } from '../../src/errors.js'
import { canonicalJson } from '../../src/documents/canonical.js'
import { bigOpenApi, listeningServer, openapi30, passwdMarker, registryErrorAsync } from './helpers.js'
import { workerExecArgv } from '../helpers.js'

const oas = { checksum: 'sha256:oas', document: { extends: [['spectral:oas', 'recommended']] } }

t.test('the pool digests, checks, lints and converts; errors come back as RegistryErrors', async (t) => {
  const workers = new DocumentWorkers({ execArgv: workerExecArgv(), threads: 2, timeoutMs: 30_000, memoryMb: 512 })
  t.teardown(() => workers.close())
  const yaml = 'openapi: 3.0.3\ninfo: {title: Pets, version: "1"}\npaths: {}\n'
  const digests = await Promise.all(Array.from({ length: 6 }, () => workers.digest({ body: yaml, currentChecksum: null })))
  t.equal(new Set(digests.map((d) => d.checksum)).size, 1)
  const d = digests[0]
  if (d.unchanged) throw new Error('unexpected')
  t.equal(d.format, 'yaml')
  t.same(await workers.digest({ body: yaml, currentChecksum: d.checksum }), { unchanged: true, checksum: d.checksum, raw: d.raw })
  const bytes = Buffer.alloc(Buffer.byteLength(yaml))
  bytes.write(yaml)
  t.same(await workers.digest({ body: bytes, currentChecksum: null }), d, 'bytes digest as their text')
  t.equal(bytes.byteLength, 0, 'bytes that own their buffer move to the worker instead of being copied')
  const slice = Buffer.from(yaml)
  t.same(await workers.digest({ body: slice, currentChecksum: null }), d)
  t.equal(slice.toString(), yaml, 'a slice of a shared pool is copied, never moved')
  t.equal(Buffer.from(d.text).toString('utf8'), yaml, 'the text to store comes back as its UTF-8 bytes')
  t.equal(Buffer.from(d.canonical).toString('utf8'), '{"info":{"title":"Pets","version":"1"},"openapi":"3.0.3","paths":{}}', 'and the canonical JSON too')

  const checked = await workers.check({ kind: 'openapi', canonical: d.canonical, ruleset: oas })
  t.same(checked.summary, { openapi: '3.0.3', title: 'Pets', version: '1' })
  t.ok(checked.findings?.some((f) => f.code === 'info-contact'))
  t.same(await workers.convert({ text: yaml, from: 'yaml', to: 'json' }), { text: '{"openapi":"3.0.3","info":{"title":"Pets","version":"1"},"paths":{}}' })

  const envelope = await registryErrorAsync(workers.digest({ shape: 'json', body: '{"document": {}, "extra": 1}' }))
  t.ok(envelope instanceof RegistryError)
  t.equal(envelope.code, 'invalid_request')
  t.equal(envelope.status, 400)
  t.same(envelope.errors, [{ message: 'unknown field', path: ['extra'] }])

  const invalid = await registryErrorAsync(workers.check({ kind: 'openapi', canonical: '{"openapi":"3.1.0","info":{"title":"x"},"paths":{}}' }))
  t.equal(invalid.code, 'invalid_document')
  t.equal(invalid.status, 422)
  t.same(invalid.errors, [{ path: ['info'], message: "missing required property 'version'" }])
  t.ok(workers.queueSize >= 0 && workers.utilization >= 0)
})

t.test("a body's bytes come back as the text to store, a byte-order mark dropped, other characters kept", async (t) => {
  const workers = new DocumentWorkers({ execArgv: workerExecArgv(), threads: 1, timeoutMs: 30_000, memoryMb: 512, warm: false })
  t.teardown(() => workers.close())
  const yaml = 'openapi: 3.0.3\ninfo: {title: "Café 🐈", version: "1"}\npaths: {}\n'
  const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')
  for (const [label, body] of [['as sent', Buffer.from(yaml)], ['after a byte-order mark', Buffer.from(`\ufeff${yaml}`)]] as const) {
    const owned = new Uint8Array(body)
    const d = await workers.digest({ body: owned, currentChecksum: null })
    if (d.unchanged) throw new Error('unexpected')
    t.equal(Buffer.from(d.text).toString('utf8'), yaml, `${label}: the text`)
    t.equal(d.digest, sha256(d.text), `${label}: the blob's digest is the hash of those bytes`)
    t.equal(Buffer.from(d.canonical).toString('utf8'), '{"info":{"title":"Café 🐈","version":"1"},"openapi":"3.0.3","paths":{}}', `${label}: the canonical JSON`)
  }
})

t.test('a check after its digest goes to the worker that holds the canonical JSON, and is sent again with it when that worker does not hold it', async (t) => {
  const workers = new DocumentWorkers({ execArgv: workerExecArgv(), threads: 1, timeoutMs: 30_000, memoryMb: 512, warm: false })
  t.teardown(() => workers.close())
  const digested = async (title: string) => {
    const d = await workers.digest({ body: `openapi: 3.0.3\ninfo: {title: ${title}, version: "1"}\npaths: {}\n`, currentChecksum: null })
    if (d.unchanged) throw new Error('unexpected')
    return d
  }
  const a = await digested('A')
  // The canonical JSON given here is another document's: only the worker's own copy of A's can answer "A".
  const held = await workers.check({ kind: 'openapi', canonical: '{"openapi":"3.0.3","info":{"title":"Not sent","version":"1"},"paths":{}}', checksum: a.checksum })
  t.same(held, { summary: { openapi: '3.0.3', title: 'A', version: '1' } }, 'the worker checked the document it digested, which was not sent again')
  const b = await digested('B')
  const again = await workers.check({ kind: 'openapi', canonical: a.canonical, checksum: a.checksum, ruleset: oas })
  t.same(again.summary, { openapi: '3.0.3', title: 'A', version: '1' }, 'that worker has digested B since: A was sent again, with its canonical JSON')
  t.notOk('canonicalMissing' in again, 'the miss stays between the pool and the worker')
  t.ok(again.findings?.some((f) => f.code === 'info-contact'), 'and linted')
  t.same((await workers.check({ kind: 'openapi', canonical: b.canonical, checksum: b.checksum })).summary, { openapi: '3.0.3', title: 'B', version: '1' })
})

t.test('a version checked with the lineage of the one before re-lints only what changed (the pool keeps the memo, not a worker)', async (t) => {
  const workers = new DocumentWorkers({ execArgv: workerExecArgv(), threads: 2, timeoutMs: 30_000, memoryMb: 512 })
  t.teardown(() => workers.close())
  const version = (description: string) => canonicalJson({
    openapi: '3.1.0', info: { title: 'Pets', version: '1' },
    paths: Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`/pets${i}`, { get: { operationId: `pets${i}`, description: i === 3 ? description : 'Pets.', responses: { 200: { description: 'ok' } } } }])),
  })
  const first = await workers.check({ kind: 'openapi', canonical: version('first'), ruleset: oas, lineage: 'api-1' })
  t.equal(first.relinted, undefined, 'the first version is linted whole')
  t.equal(first.lintMemo, undefined, 'the memo stays in the pool')
  // Both workers busy with other lineages' lints: the next version lands on whichever is free.
  const [second] = await Promise.all([
    workers.check({ kind: 'openapi', canonical: version('second'), ruleset: oas, lineage: 'api-1' }),
    workers.check({ kind: 'openapi', canonical: version('other'), ruleset: oas, lineage: 'api-2' }),
  ])
  t.same(second.relinted, { reused: 7, linted: 1 }, 'one path item linted again, seven reused')
  const whole = await workers.check({ kind: 'openapi', canonical: version('second'), ruleset: oas })
  t.same(second.findings, whole.findings, 'the findings of a whole lint')
  t.equal((await workers.check({ kind: 'openapi', canonical: version('third'), ruleset: { ...oas, checksum: 'sha256:other' }, lineage: 'api-1' })).relinted, undefined,
    'another ruleset version: linted whole')
})

t.test('external references are refused in validation and never fetched or read, in lint either', async (t) => {
  const server = await listeningServer()
  t.teardown(server.close)
  const workers = new DocumentWorkers({ execArgv: workerExecArgv(), threads: 1, timeoutMs: 30_000, memoryMb: 512 })
  t.teardown(() => workers.close())
  const doc = openapi30({
    paths: {
      '/a': { get: { responses: { '200': { $ref: 'file:///etc/passwd' }, '201': { $ref: `http://127.0.0.1:${server.port}/x.yaml` } } } },
    },
  })
  const canonical = canonicalJson(doc)
  const refused = await registryErrorAsync(workers.check({ kind: 'openapi', canonical, ruleset: oas }))
  t.equal(refused.code, 'invalid_document')
  t.same(
    refused.errors?.map((e) => e.message),
    [
      "external $ref 'file:///etc/passwd' is not allowed: the registry never fetches files or URLs; bundle the document first",
      `external $ref 'http://127.0.0.1:${server.port}/x.yaml' is not allowed: the registry never fetches files or URLs; bundle the document first`,
    ],
  )
  const { findings } = await workers.lint({ canonical, ruleset: oas })
  t.equal(findings.filter((f) => f.code === 'invalid-ref').length, 2)
  const skipped = await workers.check({ kind: 'openapi', canonical, ruleset: oas, skipValidation: true })
  t.equal(skipped.findings?.filter((f) => f.code === 'invalid-ref').length, 2)
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(server.connections(), 0, 'nothing connected to the server')
  const marker = passwdMarker()
  if (marker) {
    t.notMatch(JSON.stringify({ refused, errors: refused.errors, findings, skipped }), marker, 'no /etc/passwd contents anywhere')
  }
})

t.test('a task over the time limit is lint_timeout, and the pool keeps serving', async (t) => {
  // A limit that a small task meets even on a loaded machine (a replacement worker's first YAML digest
  // took 91 ms at a load of 14), and a lint that takes longer than it on an idle one.
  const workers = new DocumentWorkers({ execArgv: workerExecArgv(), threads: 1, timeoutMs: 1000, memoryMb: 512 })
  t.teardown(() => workers.close())
  // A first task waits for the worker to start: start-up time does not count against the limit.
  t.equal((await workers.digest({ body: '{"a":1}' })).unchanged, false)
  const canonical = canonicalJson(bigOpenApi(600))
  const started = Date.now()
  const err = await registryErrorAsync(workers.lint({ canonical, ruleset: oas }))
  t.equal(err.code, 'lint_timeout')
  t.equal(err.status, 503)
  t.equal(err.message, 'validation and lint took longer than 1000 ms; nothing was stored')
  t.ok(Date.now() - started < 5_000, 'ended promptly')
  // The worker was replaced; the next tasks are served.
  const next = await workers.digest({ body: 'a: 1\n' })
  t.equal(next.unchanged, false)
  t.same(await workers.convert({ text: '{"a":1}', from: 'json', to: 'yaml' }), { text: 'a: 1\n' })
})

t.test('a worker that runs out of memory is lint_resource_limit, and is replaced', async (t) => {
  const workers = new DocumentWorkers({ execArgv: workerExecArgv(), threads: 1, timeoutMs: 60_000, memoryMb: 64, warm: false })
  t.teardown(() => workers.close())
  // The overrun happens in JavaScript (the YAML parser), where V8 can stop the worker: a document within
  // the heap budget (1/32 of the heap, 2 MB here) whose parse still needs more than the heap.
  const err = await registryErrorAsync(workers.digest({ body: `items:\n${'- 0\n'.repeat(500_000)}` }))
  t.equal(err.code, 'lint_resource_limit')
  t.equal(err.status, 503)
  t.match(err.message, /more than the 64 MB of memory/)
  t.equal((await workers.digest({ body: '{"a":1}' })).unchanged, false)
})

t.test('a document over the heap budget is payload_too_large before it reaches a worker', async (t) => {
  const workers = new DocumentWorkers({ execArgv: workerExecArgv(), threads: 1, timeoutMs: 60_000, memoryMb: 64, warm: false })
  t.teardown(() => workers.close())
  t.equal(workers.maxDocumentBytes, 2 * 1024 * 1024)
  // A single huge native allocation (JSON.parse of this) at the heap limit would abort the process.
  const err = await registryErrorAsync(workers.digest({ body: `[${'0,'.repeat(8 * 1024 * 1024)}0]` }))
  t.equal(err.code, 'payload_too_large')
  t.equal(err.status, 413)
  t.match(err.message, /the document is 16\.0 MB; this server validates documents of at most 2\.0 MB/)
  t.equal((await workers.digest({ body: '{"a":1}' })).unchanged, false)
})
