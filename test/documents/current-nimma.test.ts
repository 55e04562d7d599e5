/**
 * Spectral's rules are matched by nimma's build for current engines (src/documents/current-nimma.ts),
 * and with either build a lint finds the same things. (The lint differential compares the registry's
 * side, on the current build, with plain Spectral on the legacy one over many more documents.)
 */
import { createRequire } from 'node:module'
import t from 'tap'
import { DEFAULT_RULESET } from '../../src/documents/defaults.js'
import { lintDocument } from '../../src/documents/lint.js'
import { spectral } from '../../src/documents/spectral.js'
import { nimmaModule, useCurrentNimma } from '../../src/documents/current-nimma.js'

const require = createRequire(import.meta.url)
const spectralRequire = createRequire(require.resolve('@stoplight/spectral-core'))
type Engine = { prototype: { query: (...args: unknown[]) => unknown } }
const ruleset = { checksum: 'current-nimma-test', document: JSON.parse(JSON.stringify(DEFAULT_RULESET)) }

const document = JSON.stringify({
  openapi: '3.0.3', info: { title: 'Nimma', version: '1' },
  paths: {
    '/a/{id}': { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/A' }, example: { n: 'x' } } } } } } },
    '/b': { post: { operationId: 'b', tags: ['undeclared'], responses: { default: { description: 'd' } } } },
  },
  components: { schemas: { A: { type: 'object', properties: { n: { type: 'integer', enum: [1, 1] } } }, Unused: { type: 'string' } } },
})

/** Counts the queries each build of nimma answers while `run` lints. */
async function queriesDuring(run: () => Promise<unknown>): Promise<{ current: number; legacy: number }> {
  const counts = { current: 0, legacy: 0 }
  const engines = { current: (spectralRequire('nimma') as { default: Engine }).default, legacy: (createRequire(spectralRequire.resolve('nimma/legacy'))('./core/index.js') as { default: Engine }).default }
  const originals = { current: engines.current.prototype.query, legacy: engines.legacy.prototype.query }
  for (const build of ['current', 'legacy'] as const) {
    engines[build].prototype.query = function (this: unknown, ...args: unknown[]) {
      counts[build] += 1
      return originals[build].apply(this, args)
    }
  }
  try {
    await run()
  } finally {
    engines.current.prototype.query = originals.current
    engines.legacy.prototype.query = originals.legacy
  }
  return counts
}

t.test('Spectral lints with nimma\'s current build, and finds what it finds with the legacy one', async (t) => {
  spectral()
  t.teardown(() => useCurrentNimma(true))
  let current: unknown
  const onCurrent = await queriesDuring(async () => { current = await lintDocument(document, ruleset) })
  t.ok(onCurrent.current > 0 && onCurrent.legacy === 0, `the current build answered every query (${JSON.stringify(onCurrent)})`)
  useCurrentNimma(false)
  let legacy: unknown
  const onLegacy = await queriesDuring(async () => { legacy = await lintDocument(document, ruleset) })
  t.ok(onLegacy.legacy > 0 && onLegacy.current === 0, `switched back, the legacy build did (${JSON.stringify(onLegacy)})`)
  t.same(current, legacy, 'the same findings')
  t.ok((current as unknown[]).length >= 4, `there were findings to compare (${(current as unknown[]).length})`)
})

t.test('the JSONPath guard parses with the build that runs', async (t) => {
  spectral()
  const running = (spectralRequire('nimma/legacy') as { default: Engine }).default
  t.equal(running.prototype, (nimmaModule()('./core/index.js') as { default: Engine }).default.prototype, 'the engine Spectral runs is of the build whose parsers the guard loads')
  t.match(spectralRequire.resolve('nimma'), /nimma\/dist\/cjs\/index\.js$/, 'the current build, not the legacy one')
})

t.test('each set of expressions is compiled once, for the options Spectral runs with; the findings stay the same', async (t) => {
  spectral()
  type Made = { query: (input: unknown, callbacks: Record<string, (scope: { path: unknown[] }) => void>) => void }
  const Running = (spectralRequire('nimma/legacy') as { default: new (expressions: string[], options: object) => Made }).default
  const { jsonPathPlus } = spectralRequire('nimma/fallbacks') as { jsonPathPlus: object }
  // What Spectral's runner passes (spectral-core runner.js, `execute`).
  const asSpectral = () => ({ fallback: jsonPathPlus, unsafe: false, output: 'auto', customShorthands: {} })
  const first = new Running(['$.paths[*][*]', '$..enum'], asSpectral())
  t.equal(new Running(['$.paths[*][*]', '$..enum'], asSpectral()), first, 'the same expressions: the engine made before')
  t.not(new Running(['$..enum', '$.paths[*][*]'], asSpectral()), first, 'other expressions (or another order): another engine')
  t.not(new Running(['$.paths[*][*]', '$..enum'], { ...asSpectral(), unsafe: true }), first, 'other options: a new engine')
  t.ok(first instanceof Running, 'still an instance of the engine Spectral constructs')

  // One engine answers query after query, each with its own input and callbacks.
  const matched = (input: unknown) => {
    const paths: string[] = []
    first.query(input, { '$.paths[*][*]': (scope) => paths.push(JSON.stringify(scope.path)), '$..enum': (scope) => paths.push(JSON.stringify(scope.path)) })
    return paths
  }
  t.same(matched({ paths: { '/a': { get: {} } } }), ['["paths","/a","get"]'])
  t.same(matched({ components: { schemas: { S: { enum: [1] } } } }), ['["components","schemas","S","enum"]'])
  t.same(matched({ paths: { '/a': { get: {} } } }), ['["paths","/a","get"]'], 'the first input again: the same matches')

  const lints = [await lintDocument(document, ruleset), await lintDocument(document, ruleset)]
  t.same(lints[1], lints[0], 'a second lint with the engines kept finds what the first found')
})
