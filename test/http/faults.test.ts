import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { stringify } from 'yaml'
import { DocumentWorkers } from '../../src/documents/pool.js'
import { verifyStorage } from '../../src/domain/operations/maintenance.js'
import { FsBlobStore } from '../../src/storage/lmdb/fs-blob-store.js'
import type { BlobStore } from '../../src/storage/records.js'
import { json, petstore, startTestServer, workerExecArgv, type TestServer } from '../helpers.js'

const CRASHING_WORKER = new URL('../fixtures/crashing-worker.ts', import.meta.url).href

function expectProblem(t: any, res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, code: string) {
  t.equal(res.statusCode, status, `${status} ${code}`)
  t.match(res.headers['content-type'], /^application\/problem\+json/)
  const body = JSON.parse(res.body)
  t.match(body, { status, code, type: 'about:blank' })
  t.notMatch(res.body, /\/tmp\/|node_modules|at .*\.(js|ts):\d+/, 'no internal paths or stack in the body')
  return body
}

async function metric(s: TestServer, line: RegExp): Promise<number> {
  const text = (await s.call({ method: 'GET', url: '/metrics', key: null })).body
  const match = text.split('\n').find((l) => line.test(l))
  return match ? Number(match.split(' ').pop()) : 0
}

async function apiWithVersion(s: TestServer) {
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'pets' } })).data
  const v1 = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('1.0.0') } })
  t.equal(v1.statusCode, 201)
  return { api, v1: json(v1).data }
}

async function versionsOf(s: TestServer, apiId: string) {
  return json(await s.call({ method: 'GET', url: `/v1/apis/${apiId}/versions` }))
}

t.test('a worker that crashes answers 500 problem+json, is replaced, and the server keeps serving', async (t) => {
  const s = await startTestServer({
    wrapDocuments: (inner, metrics) => {
      void inner.close()
      return new DocumentWorkers({ execArgv: workerExecArgv({ typescript: true }), threads: 1, timeoutMs: 60_000, memoryMb: 512, warm: false, filename: CRASHING_WORKER, observer: metrics })
    },
  })
  t.teardown(s.close)
  const { api, v1 } = await apiWithVersion(s)
  for (const how of ['exit', 'throw']) {
    const res = await s.call({
      method: 'POST', url: `/v1/apis/${api.id}/spec`, headers: { 'content-type': 'application/yaml' },
      payload: stringify({ ...petstore('2.0.0'), 'x-crash': how }),
    })
    const body = expectProblem(t, res, 500, 'internal')
    t.match(body.detail, /worker stopped unexpectedly; nothing was stored/)
    t.equal((await versionsOf(s, api.id)).total, 1, `nothing stored after a worker ${how}`)
    t.equal(json(await s.call({ method: 'GET', url: '/readyz' })).status, 'ready')
  }
  // An error thrown inside a task is a bug, not a crash: that request fails, the worker lives on.
  const bug = await s.call({
    method: 'POST', url: `/v1/apis/${api.id}/spec`, headers: { 'content-type': 'application/yaml' },
    payload: stringify({ ...petstore('2.0.0'), 'x-crash': 'bug' }),
  })
  t.match(expectProblem(t, bug, 500, 'internal').detail, /processing the document failed unexpectedly/)
  t.notMatch(bug.body, /a bug in the worker|TypeError/, 'the error itself is only logged')
  const next = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('2.0.0') } })
  t.equal(next.statusCode, 201, 'the replacement worker takes the next upload')
  t.equal(json(next).data.number, v1.number + 1)
  t.equal(await metric(s, /^registry_document_workers_replaced_total\{reason="crash"\}/), 2)
})

/** A blob store whose writes fail with an errno while `fault` is set. */
function faultyBlobs(fault: { code?: string }) {
  return (inner: BlobStore): BlobStore => ({
    put: async (ref, bytes) => {
      if (fault.code) throw Object.assign(new Error(`${fault.code}: simulated, write '/storage/tmp/x.tmp'`), { code: fault.code })
      return inner.put(ref, bytes)
    },
    get: (ref) => inner.get(ref),
    has: (ref) => inner.has(ref),
    list: () => inner.list(),
    remove: (ref, since) => inner.remove(ref, since),
  })
}

t.test('no space left on the storage: 507 storage_full, the index is unchanged, the next write succeeds', async (t) => {
  const fault: { code?: string } = {}
  const s = await startTestServer({ wrapBlobs: faultyBlobs(fault) })
  t.teardown(s.close)
  const { api, v1 } = await apiWithVersion(s)
  fault.code = 'ENOSPC'
  expectProblem(t, await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('2.0.0') } }), 507, 'storage_full')
  expectProblem(t, await s.call({ method: 'POST', url: '/v1/schemas', payload: { name: 's', document: { type: 'object' } } }), 507, 'storage_full')
  fault.code = 'EIO'
  expectProblem(t, await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('2.0.0') } }), 500, 'internal')
  const versions = await versionsOf(s, api.id)
  t.equal(versions.total, 1, 'no version was added')
  t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}` })).data.current.id, v1.id, 'the current version is unchanged')
  t.equal(json(await s.call({ method: 'GET', url: '/v1/schemas' })).total, 0, 'no schema was created')
  t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/spec` })).info.version, '1.0.0')

  delete fault.code
  const next = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('2.0.0') } })
  t.equal(next.statusCode, 201, 'the fault is gone: the same upload succeeds')
  t.equal(json(next).data.number, 2, 'with the next number: a failed write used none')
  t.equal((await s.call({ method: 'POST', url: '/v1/schemas', payload: { name: 's', document: { type: 'object' } } })).statusCode, 201)
})

t.test('a real file-system fault while writing a blob: 500, nothing half-written, then it recovers', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const { api } = await apiWithVersion(s)
  const blobCount = async () => { let n = 0; for await (const _ of s.registry.blobs.list()) n++; return n }
  const before = await blobCount()
  // The temporary directory becomes a file: the blob write fails before anything reaches blobs/.
  const tmp = join(s.storage, 'tmp')
  rmSync(tmp, { recursive: true, force: true })
  writeFileSync(tmp, 'not a directory')
  expectProblem(t, await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('3.0.0') } }), 500, 'internal')
  t.equal((await versionsOf(s, api.id)).total, 1, 'no version was added')
  t.equal(await blobCount(), before, 'no blob was added')
  rmSync(tmp)
  mkdirSync(tmp)
  const next = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: petstore('3.0.0') } })
  t.equal(next.statusCode, 201)
  t.equal(json(next).data.number, 2)
  t.same(readdirSync(tmp), [], 'no temporary file is left behind')
  const report = await verifyStorage(s.registry.storage, new FsBlobStore(s.storage))
  t.equal(report.ok, true, report.problems.join('\n'))
})

t.test('a corrupted blob: reads do not re-hash, registry verify is the guard and names it', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const { api, v1 } = await apiWithVersion(s)
  const shardDir = join(s.storage, 'blobs', 'sha256')
  const shard = readdirSync(shardDir)[0]
  const file = join(shardDir, shard, readdirSync(join(shardDir, shard))[0])
  // Same content, other bytes (the digest no longer matches), then other content (the checksum neither).
  // Verified as the CLI does, with a blob store that reads the disk (the server's keeps a cache).
  const disk = new FsBlobStore(s.storage)
  writeFileSync(file, `${readFileSync(file, 'utf8')}\n`)
  let report = await verifyStorage(s.registry.storage, disk)
  t.equal(report.ok, false)
  t.match(report.problems.join('\n'), /bytes have SHA-256/)
  writeFileSync(file, JSON.stringify({ ...petstore('6.6.6') }))
  report = await verifyStorage(s.registry.storage, disk)
  t.match(report.problems.join('\n'), /content has checksum/)
  t.match(report.problems.join('\n'), new RegExp(v1.checksum.slice('sha256:'.length)))
  t.equal((await s.call({ method: 'GET', url: `/v1/apis/${api.id}` })).statusCode, 200, 'the server keeps serving')
})
