/**
 * The re-lint (issue 19 item 2; docs/lint.md): a new version linted with the memo of the version
 * before it must find exactly what a whole lint of it finds. Each document below has findings of every
 * kind the re-lint puts together (kept per unit, found again in the changed units, and the three
 * computed over the whole document), and each seeded edit (change, add and remove an operation, a
 * schema, a `$ref` target, an example) is linted both ways, in a lineage: each version with the memo
 * of the one before.
 */
import t, { type Test } from 'tap'
import { generateOpenApi } from '../../bench/generate.js'
import { canonicalJson, checksumOf } from '../../src/documents/canonical.js'
import { DEFAULT_RULESET } from '../../src/documents/defaults.js'
import { relintDocument } from '../../src/documents/incremental-lint.js'
import { lintDocument } from '../../src/documents/lint.js'
import type { LintMemo, RulesetInput } from '../../src/documents/types.js'
import { documentEdits } from '../support/document-edits.js'

type Json = Record<string, any>

const rulesetInput = (document: unknown): RulesetInput => ({ checksum: checksumOf(canonicalJson(document)), document })
const DEFAULT = rulesetInput(DEFAULT_RULESET)

/** A generated document given one of each problem whose finding depends on more than one part. */
function withProblems(openapi: string, seed: number): Json {
  const document = JSON.parse(JSON.stringify(generateOpenApi(12_000, seed)).replaceAll('"id":"', '"ident":"')) as Json
  document.openapi = openapi
  const paths = document.paths
  const first = Object.keys(paths)[0]
  paths[first].post.operationId = paths[first].get.operationId // used twice
  paths[first].get.tags = ['nowhere'] // not a global tag
  const loose = { name: 'a', in: 'path', schema: { type: 'string' } } // not required: reported at the component
  document.components.parameters.Loose = loose
  paths['/v1/x/{a}'] = { get: { operationId: 'xa', parameters: [{ $ref: '#/components/parameters/Loose' }], responses: { 200: { description: 'ok' } } } }
  paths['/v1/x/{b}'] = { get: { operationId: 'xb', responses: { 200: { description: 'ok' } } } } // equivalent, b undefined
  document.components.schemas.Unused = { type: 'string', description: 'Nothing refers to it.' }
  paths['/v1/dangling'] = { get: { operationId: 'dangling', responses: { 200: { $ref: '#/components/responses/Nope' } } } }
  document.components.schemas.Badly = { type: 'object', description: 'Looks like a {{error}} template.', properties: { n: { type: 'integer' } }, example: { n: '{{value}}' } }
  paths['/v1/badly'] = { get: { operationId: 'badly', responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Badly' }, example: { n: 'two' } } } } } } }
  return document
}

/** Why the cut may refuse a document (lint-units.ts): the only reasons a new version may be linted whole. */
const CUT_REFUSALS = ['a schema named by URI', 'a draft-04 id', 'a missing $ref target referred to more than once']

async function lineage(t: Test, name: string, base: Json, ruleset: RulesetInput, edits: number, seed: number) {
  let memo: LintMemo | undefined
  let reusedRuns = 0
  /** New versions linted whole for another reason than the cut's refusals, with it. */
  const unexpectedlyWhole: string[] = []
  let findings = 0
  const versions = [{ description: 'the first version', document: base }, ...documentEdits(base, edits, seed)]
  for (const version of versions) {
    const canonical = canonicalJson(version.document)
    const relint = await relintDocument(canonical, ruleset, memo)
    const whole = await lintDocument(canonical, ruleset)
    t.same(relint.findings, whole, `${name}: ${version.description}`)
    if (relint.reused !== undefined) reusedRuns += 1
    else if (version !== versions[0] && !CUT_REFUSALS.includes(relint.whole ?? '')) unexpectedlyWhole.push(`${version.description}: ${relint.whole}`)
    findings += whole.length
    memo = relint.memo ?? memo
  }
  t.same(unexpectedlyWhole, [], `${name}: every new version the cut accepts reuses the memo (${reusedRuns} of ${versions.length - 1} did)`)
  return { reusedRuns, versions: versions.length, findings }
}

t.test('OpenAPI 3.1: every version re-linted finds what a whole lint finds', async (t) => {
  const base = withProblems('3.1.0', 1)
  const first = await lintDocument(canonicalJson(base), DEFAULT)
  for (const code of ['operation-operationId-unique', 'operation-tag-defined', 'path-params', 'oas3-unused-component', 'invalid-ref', 'oas3-valid-media-example', 'oas3-valid-schema-example']) {
    t.ok(first.some((f) => f.code === code), `the first version has a ${code} finding`)
  }
  t.ok(first.some((f) => f.code === 'path-params' && f.path[0] === 'components'), 'a path-params finding reported at the component a path item refers to')
  const { reusedRuns, versions, findings } = await lineage(t, '3.1', base, DEFAULT, 24, 19)
  t.ok(reusedRuns >= versions / 2, `the re-lint reused findings for ${reusedRuns} of ${versions - 1} new versions`)
  t.ok(findings > versions * 5, 'every version has findings to compare')
})

t.test('OpenAPI 3.0: the same', async (t) => {
  const { reusedRuns, versions } = await lineage(t, '3.0', withProblems('3.0.3', 2), DEFAULT, 16, 7)
  t.ok(reusedRuns >= versions / 2, `the re-lint reused findings for ${reusedRuns} of ${versions - 1} new versions`)
})

t.test('rules of a ruleset\'s own that look only inside what they match are re-linted too', async (t) => {
  const custom = rulesetInput({
    extends: [['spectral:oas', 'recommended']],
    rules: {
      'summary-short': { description: 'Summaries fit a menu.', severity: 'warn', given: '$.paths[*][*].summary', then: { function: 'length', functionOptions: { max: 18 } } },
      'operation-id-camel': { description: 'camelCase ids.', severity: 'info', given: '$.paths[*][*].operationId', then: { function: 'casing', functionOptions: { type: 'camel' } } },
      'example-shape': {
        description: 'Examples are small.', severity: 'warn', given: "$..content[?(@property === 'application/json')].example",
        then: { function: 'schema', functionOptions: { schema: { type: 'object', maxProperties: 5 }, allErrors: true } },
      },
      'schema-described': { description: 'Named schemas say what they are.', severity: 'hint', given: '$.components.schemas[*]', then: { field: 'description', function: 'truthy' } },
    },
  })
  const { reusedRuns, versions, findings } = await lineage(t, 'custom', withProblems('3.1.0', 3), custom, 12, 5)
  t.ok(reusedRuns >= versions / 2, `the re-lint reused findings for ${reusedRuns} of ${versions - 1} new versions`)
  t.ok(findings > versions * 5, 'every version has findings to compare')
})

t.test('a ruleset with a rule the re-lint does not know is linted whole, with the same findings', async (t) => {
  const own = (rule: object) => rulesetInput({ extends: [['spectral:oas', 'recommended']], rules: { own: { description: 'Its own.', severity: 'warn', ...rule } } })
  const unknown = {
    'a look at the root': own({ given: '$.paths[*][?(@.summary === @root.info.title)]', then: { function: 'falsy' } }),
    'a function reading the whole document': own({ given: '$.components.schemas', then: { function: 'unreferencedReusableObject', functionOptions: { reusableObjectsLocation: '#/components/schemas' } } }),
    'a schema named by URI': own({ given: '$.info', then: { function: 'schema', functionOptions: { schema: { $id: 'https://example.com/info', type: 'object' } } } }),
    'a rule of its own named as one of spectral:oas': rulesetInput({ extends: [['spectral:oas', 'recommended']], rules: { 'path-params': { description: 'Its own.', given: '$.paths', then: { function: 'truthy' } } } }),
  }
  const base = withProblems('3.1.0', 3)
  const changed = { ...base, info: { ...base.info }, paths: { ...base.paths, '/v1/r0': { ...base.paths['/v1/r0'], get: { ...base.paths['/v1/r0'].get, summary: 'Changed' } } } }
  for (const [what, ruleset] of Object.entries(unknown)) {
    const first = await relintDocument(canonicalJson(base), ruleset)
    t.match(first.whole, /a rule the re-lint does not know/, `${what}: linted whole, and it says why`)
    const next = await relintDocument(canonicalJson(changed), ruleset, first.memo)
    t.equal(next.reused, undefined, `${what}: nothing reused`)
    t.same(next.findings, await lintDocument(canonicalJson(changed), ruleset), `${what}: a whole lint's findings`)
  }
})

t.test('a version changing only a component nothing refers to re-lints that component alone', async (t) => {
  const base = withProblems('3.1.0', 5)
  const first = await relintDocument(canonicalJson(base), DEFAULT)
  const changed = { ...base, components: { ...base.components, schemas: { ...base.components.schemas, Unused: { type: 'integer', enum: [1, 1] } } } }
  const relint = await relintDocument(canonicalJson(changed), DEFAULT, first.memo)
  t.equal(relint.linted, 1, 'one unit linted again (its document has no path item at all)')
  const whole = await lintDocument(canonicalJson(changed), DEFAULT)
  t.ok(whole.some((f) => f.code === 'duplicated-entry-in-enum'), 'the change is found')
  t.same(relint.findings, whole)
})

t.test('a new frame, or a document named by URI, is linted whole', async (t) => {
  const base = withProblems('3.1.0', 4)
  const first = await relintDocument(canonicalJson(base), DEFAULT)
  t.ok(first.memo, 'the first lint leaves a memo')
  const tagged = { ...base, tags: [...(base.tags ?? []), { name: 'nowhere' }] }
  const again = await relintDocument(canonicalJson(tagged), DEFAULT, first.memo)
  t.equal(again.reused, undefined, 'another global tag: nothing reused')
  t.match(again.whole, /another frame/, 'and it says why')
  t.same(again.findings, await lintDocument(canonicalJson(tagged), DEFAULT))
  const named = { ...base, components: { ...base.components, schemas: { ...base.components.schemas, Named: { $id: 'https://example.com/named', type: 'string' } } } }
  const whole = await relintDocument(canonicalJson(named), DEFAULT, first.memo)
  t.equal(whole.memo, undefined, 'a schema with an $id: no memo')
  t.equal(whole.reused, undefined, 'and nothing reused')
  t.equal(whole.whole, 'a schema named by URI', 'and it says why')
  t.same(whole.findings, await lintDocument(canonicalJson(named), DEFAULT))
})

t.test('a release that bumps info.version and changes one operation re-lints that path item only', async (t) => {
  const base = withProblems('3.1.0', 9)
  const first = await relintDocument(canonicalJson(base), DEFAULT)
  const name = Object.keys(base.paths)[2]
  const units = Object.keys(base.paths).length + Object.values(base.components as Json).reduce((n: number, map: Json) => n + Object.keys(map).length, 0)
  const release = {
    ...base, info: { ...base.info, version: '2.0.0', description: '' }, // an empty description is a finding of the frame
    paths: { ...base.paths, [name]: { ...base.paths[name], get: { ...base.paths[name].get, summary: 'Changed.' } } },
  }
  const relint = await relintDocument(canonicalJson(release), DEFAULT, first.memo)
  t.equal(relint.linted, 1, 'one unit linted again')
  t.equal(relint.reused, units - 1, 'every other unit reused')
  const whole = await lintDocument(canonicalJson(release), DEFAULT)
  t.ok(whole.some((f) => f.code === 'info-description'), 'the frame\'s new finding is there')
  t.same(relint.findings, whole)
  // A $ref into info makes what it reaches part of the frame a memo is kept for.
  const pointing = {
    ...base, info: { ...base.info, 'x-responses': { 200: { description: 'ok' } } },
    paths: { ...base.paths, '/v1/noted': { get: { operationId: 'noted', responses: { $ref: '#/info/x-responses' } } } },
  }
  const pointed = await relintDocument(canonicalJson(pointing), DEFAULT)
  t.ok(pointed.memo, 'that document leaves a memo')
  const renoted = { ...pointing, info: { ...pointing.info, 'x-responses': { 400: { description: 'bad' } } } }
  const after = await relintDocument(canonicalJson(renoted), DEFAULT, pointed.memo)
  t.equal(after.reused, undefined, 'info changed where a $ref points: nothing reused')
  const renotedWhole = await lintDocument(canonicalJson(renoted), DEFAULT)
  t.ok(renotedWhole.some((f) => f.code === 'operation-success-response'), 'the operation without a 2xx response is found')
  t.same(after.findings, renotedWhole)
})

t.test('a missing target referred to a second time, from another unit, is linted whole', async (t) => {
  const base = withProblems('3.1.0', 10) // /v1/dangling refers to a response that does not exist
  const first = await relintDocument(canonicalJson(base), DEFAULT)
  t.ok(first.memo, 'one reference to a missing target: a memo')
  const copied = { ...base, paths: { ...base.paths, '/v1/dangling/copy': base.paths['/v1/dangling'] } }
  const relint = await relintDocument(canonicalJson(copied), DEFAULT, first.memo)
  t.equal(relint.whole, 'a missing $ref target referred to more than once', 'a whole lint, and why')
  const whole = await lintDocument(canonicalJson(copied), DEFAULT)
  t.equal(whole.filter((f) => f.code === 'invalid-ref').length, 1, 'Spectral reports the missing target once')
  t.same(relint.findings, whole)
})

t.test('OpenAPI 3.0: an id names a schema (draft 04), an id inside an example does not', async (t) => {
  const base = withProblems('3.0.3', 8)
  const withExample = { ...base, components: { ...base.components, schemas: { ...base.components.schemas, Ided: { type: 'object', example: { id: 'abc' } } } } }
  t.ok((await relintDocument(canonicalJson(withExample), DEFAULT)).memo, 'an id in an example: a memo')
  const example = { type: 'object', properties: { example: { type: 'string', id: 'urn:named' } } } // a property called example
  const withId = { ...base, components: { ...base.components, schemas: { ...base.components.schemas, Ided: example } } }
  const lint = await relintDocument(canonicalJson(withId), DEFAULT)
  t.equal(lint.whole, 'a draft-04 id', 'an id of a schema (a property called example): a whole lint')
  t.same(lint.findings, await lintDocument(canonicalJson(withId), DEFAULT))
  const draft04 = { ...withId, openapi: '3.1.0', jsonSchemaDialect: 'http://json-schema.org/draft-04/schema#' }
  t.equal((await relintDocument(canonicalJson(draft04), DEFAULT)).whole, 'a draft-04 id', 'the same in 3.1 under a draft-04 dialect')
  t.ok((await relintDocument(canonicalJson({ ...withId, openapi: '3.1.0' }), DEFAULT)).memo, 'and under 3.1\'s own dialect, where id names nothing, a memo')
})

t.test('a version changing one operation re-lints that path item only', async (t) => {
  const base = withProblems('3.1.0', 6)
  const first = await relintDocument(canonicalJson(base), DEFAULT)
  const name = Object.keys(base.paths)[1]
  const changed = { ...base, paths: { ...base.paths, [name]: { ...base.paths[name], get: { ...base.paths[name].get, description: 'Changed.' } } } }
  const relint = await relintDocument(canonicalJson(changed), DEFAULT, first.memo)
  t.equal(relint.linted, 1, 'one unit linted again')
  t.equal(relint.reused, Object.keys(base.paths).length + Object.values(base.components as Json).reduce((n: number, map: Json) => n + Object.keys(map).length, 0) - 1, 'every other unit reused')
  t.same(relint.findings, await lintDocument(canonicalJson(changed), DEFAULT))
})
