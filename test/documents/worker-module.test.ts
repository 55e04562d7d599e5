import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { workerModule } from '../../src/worker-exec-argv.js'

const SOURCE_POOL = new URL('../../src/documents/pool.ts', import.meta.url).href
const COMPILED_POOL = new URL('../../dist/documents/pool.js', import.meta.url).href

t.test('compiled code starts the compiled worker, whatever the node options', async (t) => {
  t.equal(workerModule(COMPILED_POOL, 'worker', undefined), new URL('../../dist/documents/worker.js', import.meta.url).href)
  t.equal(workerModule(COMPILED_POOL, 'worker', ['--import=tsx']), new URL('../../dist/documents/worker.js', import.meta.url).href)
})

t.test('the TypeScript source starts the source worker when the thread loads tsx or inherits the options', async (t) => {
  const source = new URL('../../src/documents/worker.ts', import.meta.url).href
  t.equal(workerModule(SOURCE_POOL, 'worker', undefined), source, 'inherited options (tsx, as this process has)')
  t.equal(workerModule(SOURCE_POOL, 'worker', ['--import=tsx']), source)
  t.equal(workerModule(SOURCE_POOL, 'worker', ['--import', 'tsx', '--max-old-space-size=512']), source)
  t.equal(workerModule(SOURCE_POOL, 'worker', ['--loader=tsx/esm']), source)
})

t.test('the TypeScript source given options without tsx starts the compiled twin in dist/', async (t) => {
  const twin = workerModule(SOURCE_POOL, 'reference-worker', ['--max-old-space-size=512'])
  t.equal(twin, new URL('../../dist/documents/reference-worker.js', import.meta.url).href)
  t.equal(workerModule(SOURCE_POOL, 'worker', []), new URL('../../dist/documents/worker.js', import.meta.url).href)
  t.ok(existsSync(fileURLToPath(twin)), 'the build wrote it (npm test builds first)')
})
