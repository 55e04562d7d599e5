/**
 * The lint differential on a sample (issue 19 item 5; docs/lint.md): generated documents and seeded
 * edits of them, linted by the registry (validator cache on, warm across the whole sample) and by plain
 * Spectral (cache off, ruleset compiled afresh), with the default ruleset and a custom one whose rules
 * use the `schema` function; the findings, and Spectral's diagnostics with their ranges, must be the
 * same. `npm run lint:differential` runs the same comparison over the corpus.
 */
import t from 'tap'
import { generateOpenApi } from '../../bench/generate.js'
import { canonicalJson, checksumOf } from '../../src/documents/canonical.js'
import { DEFAULT_RULESET } from '../../src/documents/defaults.js'
import type { RulesetInput } from '../../src/documents/types.js'
import { documentEdits, EDIT_KINDS } from '../support/document-edits.js'
import { LintDifferential } from '../support/lint-differential.js'

const EDITS = 16

const rulesetInput = (document: unknown): RulesetInput => ({ checksum: checksumOf(canonicalJson(document)), document })

/**
 * The same schema in two rules, once with `allErrors` and once without: the generated examples break
 * it twice (too many members, a date of the wrong year), so a validator kept for one rule and answered
 * to the other changes what is found.
 */
const EXAMPLE_SHAPE = {
  type: 'object',
  maxProperties: 5,
  required: ['id'],
  properties: { id: { type: 'string', format: 'uuid' }, created_at: { type: 'string', pattern: '^2023-' }, status: { enum: ['active', 'pending'] } },
}
const CUSTOM_RULESET = {
  rules: {
    'example-shape': {
      description: 'Examples are small objects of 2023.', severity: 'warn', given: '$..content[*].example',
      then: { function: 'schema', functionOptions: { schema: EXAMPLE_SHAPE, allErrors: true } },
    },
    'example-shape-first-problem': {
      description: 'The first thing wrong with an example.', severity: 'info', given: '$..content[*].example',
      then: { function: 'schema', functionOptions: { schema: EXAMPLE_SHAPE } },
    },
    'schema-described': {
      description: 'Named schemas say what they are.', severity: 'hint', given: '$.components.schemas[*]',
      then: { function: 'schema', functionOptions: { schema: { type: 'object', required: ['description'] } } },
    },
    'summary-short': {
      description: 'Summaries fit a menu.', severity: 'warn', given: '$.paths[*][*].summary',
      then: { function: 'schema', functionOptions: { schema: { type: 'string', maxLength: 18 } } },
    },
  },
}

type Json = Record<string, any>

/**
 * A generated document made to tell validators apart: its named object schemas closed
 * (`additionalProperties: false`), so that its examples match their own schemas and no others; and a
 * schema whose example is valid in OpenAPI 3.0's dialect and not in 3.1's (draft 4 ignores
 * `dependentRequired`, 2020-12 enforces it), so that a validator answered for the other dialect shows.
 */
function sample(document: Json, openapi: string): Json {
  const schemas = Object.entries(document.components.schemas as Json)
    .map(([name, schema]) => [name, schema.properties ? { ...schema, additionalProperties: false } : schema])
  const dependent = {
    type: 'object', description: 'b comes with a.', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, dependentRequired: { a: ['b'] }, example: { a: 1 },
  }
  return { ...document, openapi, components: { ...document.components, schemas: { ...Object.fromEntries(schemas), Dependent: dependent } } }
}

/** Two generated documents: OpenAPI 3.1, and one read as 3.0 (other rules, another schema dialect). */
function sampleDocuments(): { name: string; document: Json; editSeed: number }[] {
  return [
    { name: 'OpenAPI 3.1 (seed 1)', document: sample(generateOpenApi(12_000, 1), '3.1.0'), editSeed: 105 },
    { name: 'OpenAPI 3.0 (seed 2)', document: sample(generateOpenApi(12_000, 2), '3.0.3'), editSeed: 115 },
  ]
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const member of Object.values(value)) deepFreeze(member)
    Object.freeze(value)
  }
  return value
}

t.test('document edits are seeded, change the document, and never touch the one given', async (t) => {
  const document = deepFreeze(generateOpenApi(12_000, 3))
  const before = canonicalJson(document)
  // A frozen input: an edit that wrote into it would throw here (modules are strict).
  const edits = documentEdits(document, 24, 11)
  t.equal(canonicalJson(document), before, 'the input is as it was')
  t.equal(edits.length, 24)
  t.same(new Set(edits.map((e) => e.kind)), new Set(EDIT_KINDS), 'every kind of edit is made')
  for (const edit of edits) t.not(canonicalJson(edit.document), before, `${edit.kind}: ${edit.description}`)
  const again = documentEdits(document, 24, 11)
  t.same(again.map((e) => [e.description, canonicalJson(e.document)]), edits.map((e) => [e.description, canonicalJson(e.document)]), 'the same seed, the same edits')
  const other = documentEdits(document, 24, 12)
  t.not(JSON.stringify(other.map((e) => e.description)), JSON.stringify(edits.map((e) => e.description)), 'another seed, other edits')
})

t.test('the registry finds what plain Spectral finds, on generated documents and their edits', async (t) => {
  const differential = new LintDifferential()
  t.teardown(() => differential.close())
  const rulesets = [
    { name: 'default', input: rulesetInput(JSON.parse(JSON.stringify(DEFAULT_RULESET))) },
    { name: 'custom', input: rulesetInput(CUSTOM_RULESET) },
  ]
  const differences: string[] = []
  const codes = new Map<string, number>()
  const distinct = new Map<string, Set<string>>()
  const edited: string[] = []
  let pairs = 0
  let relinted = 0
  for (const { name, document, editSeed } of sampleDocuments()) {
    const variants = [{ edit: 'as generated', document }, ...documentEdits(document, EDITS, editSeed).map((e) => ({ edit: `${e.kind}: ${e.description}`, document: e.document }))]
    edited.push(...variants.map((v) => v.edit))
    for (const variant of variants) {
      const canonical = canonicalJson(variant.document)
      for (const ruleset of rulesets) {
        // Each version in turn, as the next version of its document's lineage: the registry re-lints it.
        const result = await differential.compare(canonical, ruleset.input, name)
        pairs += 1
        if (result.relinted) relinted += 1
        if (result.error !== undefined) differences.push(`${name}, ${variant.edit}, ${ruleset.name}: threw ${result.error}`)
        if (result.difference) differences.push(`${name}, ${variant.edit}, ${ruleset.name}: ${JSON.stringify(result.difference)}`)
        for (const f of result.found) codes.set(f.code, (codes.get(f.code) ?? 0) + 1)
        const lists = distinct.get(`${name} ${ruleset.name}`) ?? new Set()
        lists.add(JSON.stringify(result.found))
        distinct.set(`${name} ${ruleset.name}`, lists)
      }
    }
  }
  t.equal(differences.length, 0, `${differences.length} differences in ${pairs} lints compared`, { first: differences.slice(0, 3) })
  t.ok(relinted >= 20, `the registry re-linted ${relinted} of them (new versions, with either ruleset, but for those naming schemas by URI)`)
  // What makes the comparison worth something: the edits that reach what the validator cache decides
  // on (the seeds are chosen for it), the rules that use validators finding things, and the edits
  // changing what was found.
  for (const [what, pattern] of [
    ['a schema given an $id', /given an \$id/], ['a $ref to a schema by its $id', /changed to the target's \$id/],
    ['a schema given a $schema', /: \$schema /], ['a schema that contains itself', /self referring/],
  ] as const) t.ok(edited.some((e) => pattern.test(e)), `the sample has ${what}`)
  for (const code of ['oas3-valid-media-example', 'oas3-valid-schema-example', 'example-shape', 'example-shape-first-problem', 'schema-described', 'summary-short']) {
    t.ok((codes.get(code) ?? 0) > 0, `${code} found something (${codes.get(code) ?? 0})`)
  }
  t.ok((codes.get('example-shape') ?? 0) > (codes.get('example-shape-first-problem') ?? 0), 'allErrors finds more than the first problem')
  for (const [which, lists] of distinct) t.ok(lists.size >= EDITS / 3, `${which}: the edits gave ${lists.size} different finding lists`)
})
