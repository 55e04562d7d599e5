import t from 'tap'
import { compileRuleset, DEFAULT_RULESET, validateRuleset } from '../../src/documents/ruleset.js'
import { checkJsonPath, scriptParts } from '../../src/documents/jsonpath-guard.js'
import { registryError } from './helpers.js'

const rule = (fn: string, extra: Record<string, unknown> = {}) => ({
  given: '$.paths[*][*]',
  then: { field: 'description', function: fn },
  ...extra,
})

t.test('the default ruleset and the usual shapes compile', async (t) => {
  t.same(DEFAULT_RULESET, { extends: [['spectral:oas', 'recommended']] })
  const compiled = compileRuleset(JSON.parse(JSON.stringify(DEFAULT_RULESET)))
  t.ok(compiled.rules['operation-description'], 'spectral:oas rules are there')
  for (const doc of [
    { extends: 'spectral:oas' },
    { extends: ['spectral:oas', 'spectral:asyncapi', 'spectral:arazzo'] },
    { extends: [['spectral:oas', 'all'], ['spectral:asyncapi', 'off']] },
    { extends: 'spectral:oas', rules: { 'operation-description': 'error', 'info-contact': 'off', 'operation-tags': false } },
    { rules: { 'my-rule': rule('truthy') } },
    { rules: { 'my-rule': { ...rule('pattern'), then: [{ field: 'summary', function: 'pattern', functionOptions: { match: '^[A-Z]' } }, { function: 'defined', field: 'responses' }] } } },
    { formats: ['oas3', 'oas3.0', 'oas3.1', 'json-schema-loose', 'json-schema-draft-2020-12', 'asyncapi2', 'oas3_1'], rules: { r: rule('truthy', { formats: ['oas2'] }) } },
    {
      description: 'mine',
      documentationUrl: 'https://example.com/rules',
      parserOptions: { duplicateKeys: 'warn' },
      'x-owner': 'team',
      aliases: { PathItem: ['$.paths[*]'], Operation: ['#PathItem[get,put,post,delete]'] },
      rules: { r: { given: '#Operation', then: { field: 'summary', function: 'truthy' }, severity: 'warn' } },
    },
    { extends: 'spectral:oas', overrides: [{ files: ['**#/info'], rules: { 'info-contact': 'off' } }, { files: ['#/paths'], rules: { 'operation-tags': 'off' } }] },
    { overrides: [{ files: ['**'], rules: { r: rule('falsy') } }] },
    { rules: { s: { given: '$.components.schemas[*]', then: { function: 'schema', functionOptions: { schema: { type: 'object', required: ['type'] } } } } } },
    { rules: { k: { given: '$..[?(@property.match(/^x-/) && @.type === "object")]', then: { function: 'truthy' } } } },
  ]) {
    t.same(validateRuleset(doc), [], JSON.stringify(doc).slice(0, 120))
  }
})

t.test('extends names only spectral:oas, spectral:asyncapi, spectral:arazzo', async (t) => {
  for (const [doc, path] of [
    [{ extends: './local-rules.yaml' }, ['extends']],
    [{ extends: ['spectral:oas', '/etc/passwd'] }, ['extends', 1]],
    [{ extends: [['https://example.com/ruleset.yaml', 'all']] }, ['extends', 0, 0]],
    [{ extends: '@acme/spectral-ruleset' }, ['extends']],
    [{ extends: 'spectral:unknown' }, ['extends']],
    [{ overrides: [{ files: ['**'], extends: 'http://127.0.0.1:9/r.yaml' }] }, ['overrides', 0, 'extends']],
  ] as const) {
    const err = registryError(() => compileRuleset(doc))
    t.equal(err.code, 'invalid_document')
    const problem = err.errors?.[0]
    t.same(problem?.path, path)
    t.match(problem?.message, /^extends '.*' is not allowed: only spectral:oas, spectral:asyncapi, spectral:arazzo can be extended \(never files, URLs or packages\)$/)
  }
})

t.test('custom functions, functions and functionsDir are refused', async (t) => {
  const custom = registryError(() => compileRuleset({ rules: { r: rule('myFunction') } }))
  t.equal(custom.code, 'invalid_document')
  t.same(custom.errors?.[0]?.path, ['rules', 'r', 'then', 'function'])
  t.match(custom.errors?.[0]?.message, /^custom functions are not allowed: 'myFunction' is not one of Spectral's core functions \(.*truthy.*\)$/)

  const inArray = validateRuleset({ rules: { r: { given: '$', then: [{ function: 'truthy' }, { function: 'oasDocumentSchema' }] } } })
  t.same(inArray.map((p) => p.path), [['rules', 'r', 'then', 1, 'function']])

  const functions = validateRuleset({ functions: ['myFunction'], rules: { r: rule('truthy') } })
  t.same(functions[0]?.path, ['functions'])
  t.match(functions[0]?.message, /custom functions are not allowed/)

  const dir = validateRuleset({ functionsDir: './functions', rules: { r: rule('truthy') } })
  t.same(dir[0]?.path, ['functionsDir'])
  t.match(dir[0]?.message, /functionsDir is not allowed/)

  const inOverride = validateRuleset({ overrides: [{ files: ['**'], rules: { r: rule('evil') } }] })
  t.same(inOverride[0]?.path, ['overrides', 0, 'rules', 'r', 'then', 'function'])
})

t.test('other problems: formats, override patterns, Spectral validation', async (t) => {
  const format = validateRuleset({ formats: ['oas3', 'openapi-9'], rules: { r: rule('truthy') } })
  t.same(format, [{ path: ['formats', 1], message: format[0]?.message }])
  t.match(format[0]?.message, /^unknown format 'openapi-9': use one of oas2, oas3/)

  const files = validateRuleset({ overrides: [{ files: ['apis/**/*.json'], rules: { r: rule('truthy') } }] })
  t.same(files[0]?.path, ['overrides', 0, 'files', 0])
  t.match(files[0]?.message, /the registry has no file paths/)

  const missing = validateRuleset({ rules: { r: { given: '$' } } })
  t.same(missing[0]?.path, ['rules', 'r'])
  t.match(missing[0]?.message, /the rule must have at least "given" and "then" properties/)

  const options = validateRuleset({ rules: { r: { given: '$', then: { function: 'length', functionOptions: { minimum: 1 } } } } })
  t.same(options[0]?.path, ['rules', 'r', 'then', 'functionOptions', 'minimum'])
  t.match(options[0]?.message, /"length" function does not support "minimum" option/)

  const severity = validateRuleset({ rules: { r: { ...rule('truthy'), severity: 'fatal' } } })
  t.same(severity[0]?.path, ['rules', 'r', 'severity'])

  const unknownRule = validateRuleset({ extends: 'spectral:oas', rules: { 'no-such-rule': 'error' } })
  t.same(unknownRule[0]?.path, ['rules', 'no-such-rule'])
  t.match(unknownRule[0]?.message, /does not exist in the extended rulesets/)

  const empty = validateRuleset({ description: 'nothing' })
  t.match(empty[0]?.message, /must have rules or extends or overrides/)

  const except = validateRuleset({ extends: 'spectral:oas', except: { '#/info': ['info-contact'] } })
  t.match(except[0]?.message, /'except' is Spectral 5 syntax/)

  const unknownKey = validateRuleset({ rules: { r: rule('truthy') }, ruels: {} })
  t.same(unknownKey[0]?.path, ['ruels'])
  t.match(unknownKey[0]?.message, /^unknown member 'ruels': a ruleset has extends, rules/)
  const unknownRuleKey = validateRuleset({ rules: { r: { ...rule('truthy'), sevrity: 'warn' } } })
  t.same(unknownRuleKey[0]?.path, ['rules', 'r', 'sevrity'])
  const badSeverity = validateRuleset({ extends: [['spectral:oas', 'everything']] })
  t.same(badSeverity, [{ path: ['extends', 0, 1], message: 'the severity of an extended ruleset must be one of recommended, all, off' }])
  t.match(validateRuleset({ extends: 5 })[0]?.message, /^extends must be a ruleset name/)

  const alias = validateRuleset({ rules: { r: { given: '#Nope', then: { function: 'truthy' } } } })
  t.match(alias[0]?.message, /Alias "Nope" does not exist/)

  const externalSchema = validateRuleset({ rules: { r: { given: '$', then: { function: 'schema', functionOptions: { schema: { $ref: 'http://127.0.0.1:9/s.json' } } } } } })
  t.match(externalSchema[0]?.message, /^external \$ref 'http:\/\/127\.0\.0\.1:9\/s\.json' is not allowed/)

  t.match(registryError(() => compileRuleset(['spectral:oas'])).message, /must be an object/)
  const err = registryError(() => compileRuleset({ rules: { a: rule('x1'), b: rule('x2') } }))
  t.match(err.message, /^the ruleset is not valid: 2 problems, the first: custom functions are not allowed/)
})

t.test('JSONPath scripts cannot run code', async (t) => {
  const g = globalThis as { PWNED?: unknown }
  const attacks = [
    "$[?(@.constructor.constructor('globalThis.PWNED = 1')())]",
    "$..[?(@['constr' + 'uctor']['constr' + 'uctor']('globalThis.PWNED = 2')())]",
    '$..[?(@.__proto__.polluted = 1)]',
    '$..[?(@.toString.call.apply(1))]',
    '$..[?(this.x)]',
    '$..[?(process.exit())]',
    "$.paths[?(@property.constructor.constructor('globalThis.PWNED = 3')())]",
    "$..[?(@.x ? @.constructor.constructor('globalThis.PWNED = 4')() : 1)]",
    "$..[?(@property.match(/a/) && @.constructor.assign(@.__proto__, {x: 1}))]",
  ]
  for (const given of attacks) {
    const problems = validateRuleset({ rules: { r: { given, then: { function: 'truthy' } } } })
    t.equal(problems.length, 1, given)
    t.same(problems[0]?.path, ['rules', 'r', 'given'], given)
    t.match(problems[0]?.message, /^JSONPath '.*' is not allowed: /, given)
  }
  // Through an alias, and split across an alias and a rule.
  t.equal(validateRuleset({ aliases: { A: ["$..[?(@.constructor.constructor('globalThis.PWNED = 5')())]"] }, rules: { r: { given: '#A', then: { function: 'truthy' } } } }).length, 1)
  t.ok(validateRuleset({ aliases: { A: ['$..'] }, rules: { r: { given: "#A[?(@.constructor.constructor('globalThis.PWNED = 6')())]", then: { function: 'truthy' } } } }).length >= 1)
  t.ok(validateRuleset({ aliases: { A: ['$..[?(@.constructor'] }, rules: { r: { given: "#A.constructor('globalThis.PWNED = 7')())]", then: { function: 'truthy' } } } }).length >= 1)
  t.ok(validateRuleset({ rules: { r: { given: '$', then: { field: "$[?(@.constructor.constructor('globalThis.PWNED = 8')())]", function: 'truthy' } } } }).length >= 1, 'then.field')
  t.equal(g.PWNED, undefined, 'nothing ran')
})

t.test('the JSONPath guard lets ordinary filters through', async (t) => {
  for (const ok of [
    '$.paths[*][get,put,post]',
    "$..[?(@property === 'description')]",
    "$..parameters[?(@.in == 'path')]",
    '$..[?(@property.match(/^x-/i))]',
    '$..[?(@ && @.type === "object" && !@.properties)]',
    "$..[?(@.enum && @.enum.length > 0 && @path.join('.').includes('schemas'))]",
    '$..[?(@string() && @.length > 2)]',
    "$.paths.*[?( @property === 'get' || @property === 'put' )]",
    "$..content[?(@property.match(/^application\\/([a-zA-Z0-9._-]+\\+)?json(;.*)?$/))]..schema",
    "$['x-(weird)']",
  ]) {
    t.equal(checkJsonPath(ok), null, ok)
  }
  t.same(scriptParts("$..[?(@.a == ')' && @.b.match(/\\)/))].x"), ["?(@.a == ')' && @.b.match(/\\)/))"].map((s) => s.slice(2, -1)))
  t.equal(scriptParts('$..[?(@.a'), null)
})

t.test('compiling never touches Object.prototype', async (t) => {
  const doc = JSON.parse('{"rules":{"__proto__":{"given":"$","then":{"function":"truthy"}},"constructor":{"given":"$","then":{"function":"falsy"}}},"aliases":{"__proto__":["$.x"]}}')
  const problems = validateRuleset(doc)
  t.same(problems.map((p) => p.path), [['rules', '__proto__'], ['aliases', '__proto__']], 'refused by name')
  validateRuleset(JSON.parse('{"rules":{"r":{"given":"$","then":{"function":"truthy"},"__proto__":{"x":1}}}}'))
  t.equal(({} as Record<string, unknown>).given, undefined)
  t.equal(({} as Record<string, unknown>).x, undefined)
  t.equal(Object.getPrototypeOf({}), Object.prototype)
  t.equal(typeof ({} as { constructor: unknown }).constructor, 'function')
})
