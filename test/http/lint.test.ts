import t from 'tap'
import { parse } from 'yaml'
import { SEVERITY_RULESET, countingDocuments, docWithFinding, holdNextTask, json, startTestServer } from '../helpers.js'

const SEVERITIES = ['error', 'warn', 'info', 'hint'] as const
const RANK = { error: 0, warn: 1, info: 2, hint: 3 }
const LIMIT = { off: -1, error: 0, warn: 1, info: 2 }

t.test('effective threshold for every API override and ruleset default', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  for (const rulesetDefault of ['off', 'error', 'warn', 'info'] as const) {
    const rs = json(await s.call({ method: 'POST', url: '/v1/rulesets', payload: { name: `rules ${rulesetDefault}`, blocking_severity: rulesetDefault, document: SEVERITY_RULESET } })).data
    t.equal(rs.blocking_severity, rulesetDefault)
    for (const override of ['unset', 'off', 'error', 'warn', 'info', 'null'] as const) {
      const body: Record<string, unknown> = { name: `api ${rulesetDefault} ${override}`, ruleset_id: rs.id }
      if (override !== 'unset' && override !== 'null') body.blocking_severity = override
      if (override === 'null') body.blocking_severity = 'info'
      let api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: body })).data
      if (override === 'null') {
        api = json(await s.call({ method: 'PATCH', url: `/v1/apis/${api.id}`, payload: { blocking_severity: null } })).data
      }
      const effective = override === 'unset' || override === 'null' ? rulesetDefault : override
      t.equal(api.blocking_severity, override === 'unset' || override === 'null' ? null : override)
      t.equal(api.effective_blocking_severity, effective, `${override} over ${rulesetDefault}`)
      for (const severity of SEVERITIES) {
        const res = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec?dry_run=true`, payload: { document: docWithFinding(severity) } })
        const blocks = severity !== 'hint' && RANK[severity] <= LIMIT[effective]
        t.equal(res.statusCode, blocks ? 422 : 200, `override ${override}, default ${rulesetDefault}, one ${severity} finding`)
        if (blocks) t.equal(json(res).code, 'lint_blocked')
      }
    }
  }
  const noRuleset = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'plain', blocking_severity: 'warn' } })).data
  t.equal(noRuleset.effective_blocking_severity, 'warn', 'an own value counts without a ruleset')
})

t.test('a blocked upload answers 422 with its findings and stores nothing; accepted versions keep theirs', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const rs = json(await s.call({ method: 'POST', url: '/v1/rulesets', payload: { name: 'r', blocking_severity: 'warn', document: SEVERITY_RULESET } })).data
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'a', ruleset_id: rs.id } })).data
  const blocked = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: docWithFinding('warn') } })
  t.equal(blocked.statusCode, 422)
  t.match(blocked.headers['content-type'], /application\/problem\+json/)
  const problem = json(blocked)
  t.match(problem, { type: 'about:blank', title: 'Unprocessable Entity', status: 422, code: 'lint_blocked' })
  t.match(problem.detail, /1 finding at or above 'warn'/)
  t.same(problem.errors, [{ code: 'needs-description', message: 'info needs a description', severity: 'warn', path: ['info'] }])
  t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/versions` })).total, 0, 'nothing stored')
  t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}` })).data.current, null)

  const ok = await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: docWithFinding('info') } })
  t.equal(ok.statusCode, 201)
  const version = json(ok).data
  t.same(version.lint, { ruleset_id: rs.id, ruleset_version_id: rs.current.id, counts: { error: 0, warn: 0, info: 1, hint: 0 } })
  const findings = json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/versions/${version.id}/findings` })).data
  t.same(findings.map((f: { code: string }) => f.code), ['needs-contact'])

  const dry = json(await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec?dry_run=true`, payload: { document: docWithFinding('info') } })).data
  t.same(dry, { checksum: version.checksum, unchanged: true, findings, converted_from: null })
  t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/versions` })).total, 1, 'a dry run stores nothing')

  const lint = json(await s.call({ method: 'POST', url: `/v1/rulesets/${rs.id}/lint`, payload: { document: docWithFinding('error') } })).data
  t.same(lint.counts, { error: 1, warn: 0, info: 0, hint: 0 })
  t.equal(lint.findings[0].code, 'needs-owner')
})

t.test('a ruleset that throws on the document is a 422 ruleset_failed naming the rule, and nothing is stored', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  // The filter calls a string method on `@property`, which is a number (an index) under an array.
  const ruleset = {
    rules: {
      'error-bodies': { severity: 'warn', given: '$..[responses][?(@property && @property.match(/^(4|5)/))][content]', then: { function: 'truthy' } },
    },
  }
  const rs = json(await s.call({ method: 'POST', url: '/v1/rulesets', payload: { name: 'r', blocking_severity: 'warn', document: ruleset } })).data
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'a', ruleset_id: rs.id } })).data
  const document = (items: number) => ({
    openapi: '3.0.3', info: { title: 'Logs', version: '1.0.0' }, paths: {},
    components: { schemas: { Log: { type: 'object', example: { responses: Array.from({ length: items }, (_, i) => ({ content: `line ${i}` })) } } } },
  })
  for (const url of [`/v1/apis/${api.id}/spec`, `/v1/apis/${api.id}/spec?dry_run=true`, `/v1/rulesets/${rs.id}/lint`]) {
    const res = await s.call({ method: 'POST', url, payload: { document: document(2) } })
    t.equal(res.statusCode, 422, url)
    t.match(res.headers['content-type'], /application\/problem\+json/)
    const problem = json(res)
    t.match(problem, { status: 422, code: 'ruleset_failed', detail: /rule 'error-bodies' threw TypeError: .*match is not a function/ }, url)
    t.match(problem.errors, [{ code: 'error-bodies', message: /TypeError/ }])
  }
  t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/versions` })).total, 0, 'nothing stored')
  // The same ruleset on a document where the filter never meets a non-zero index lints as usual.
  t.equal((await s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: document(1) } })).statusCode, 201)
})

t.test('a lint result is served from the cache on the second identical request', async (t) => {
  const counts = { lint: 0, check: 0, digest: 0 }
  const s = await startTestServer({ wrapDocuments: countingDocuments(counts) })
  t.teardown(s.close)
  const rs = json(await s.call({ method: 'POST', url: '/v1/rulesets', payload: { name: 'r', document: SEVERITY_RULESET } })).data
  const a = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'a', ruleset_id: rs.id } })).data
  const b = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'b', ruleset_id: rs.id } })).data
  const doc = docWithFinding('warn')
  const first = await s.call({ method: 'POST', url: `/v1/apis/${a.id}/spec`, payload: { document: doc } })
  t.equal(first.statusCode, 201)
  t.equal(counts.lint, 1, 'Spectral ran once')
  const checksAfterFirst = counts.check
  const second = await s.call({ method: 'POST', url: `/v1/apis/${b.id}/spec`, payload: { document: doc } })
  t.equal(second.statusCode, 201)
  t.equal(counts.lint, 1, 'the same document and ruleset version are not linted again')
  t.equal(counts.check, checksAfterFirst, 'nor validated again: no worker check at all')
  t.same(json(second).data.lint.counts, json(first).data.lint.counts)
  await s.call({ method: 'POST', url: `/v1/rulesets/${rs.id}/lint`, payload: { document: doc } })
  t.equal(counts.lint, 1, 'the lint route uses the same cache')

  await s.call({ method: 'POST', url: `/v1/rulesets/${rs.id}/document`, payload: { document: { ...SEVERITY_RULESET, description: 'v2' } } })
  await s.call({ method: 'POST', url: `/v1/apis/${a.id}/spec?dry_run=true`, payload: { document: doc } })
  t.equal(counts.lint, 2, 'a new ruleset version lints again')
})

/** Once armed, holds the next worker check until released, so a test can change things while an upload is in flight. */
t.test('a lint gate that changes while an upload is in flight applies to that upload', async (t) => {
  for (const change of ['attach a ruleset', 'tighten the threshold', 'new ruleset version'] as const) {
    const hold = holdNextTask('check')
    const s = await startTestServer({ wrapDocuments: hold.wrap })
    t.teardown(s.close)
    const loose = { rules: { 'needs-owner': { ...SEVERITY_RULESET.rules['needs-owner'], severity: 'hint' } } }
    const rs = json(await s.call({ method: 'POST', url: '/v1/rulesets', payload: { name: 'strict', document: change === 'new ruleset version' ? loose : SEVERITY_RULESET } })).data
    const apiBody: Record<string, unknown> = { name: 'a' }
    if (change === 'tighten the threshold') Object.assign(apiBody, { ruleset_id: rs.id, blocking_severity: 'off' })
    if (change === 'new ruleset version') apiBody.ruleset_id = rs.id
    const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: apiBody })).data
    hold.arm()
    const upload = s.call({ method: 'POST', url: `/v1/apis/${api.id}/spec`, payload: { document: docWithFinding('error') } })
    await hold.inFlight
    const changed = change === 'attach a ruleset'
      ? await s.call({ method: 'PATCH', url: `/v1/apis/${api.id}`, payload: { ruleset_id: rs.id } })
      : change === 'tighten the threshold'
        ? await s.call({ method: 'PATCH', url: `/v1/apis/${api.id}`, payload: { blocking_severity: 'error' } })
        : await s.call({ method: 'POST', url: `/v1/rulesets/${rs.id}/document`, payload: { document: SEVERITY_RULESET } })
    t.ok(changed.statusCode < 300, `${change}: ${changed.statusCode}`)
    hold.release()
    const res = await upload
    t.equal(res.statusCode, 422, `${change}: the upload meets the new gate`)
    t.equal(json(res).code, 'lint_blocked')
    t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/versions` })).total, 0, 'nothing stored')
  }
})

/** A ruleset with a blocking finding on an operation and one that does not block on `info`. */
const PLACED_RULESET = `rules:
  operation-description:
    given: "$.paths[*][get,put,post,delete]"
    severity: warn
    message: every operation needs a description
    then: { field: description, function: truthy }
  info-contact:
    given: $.info
    severity: info
    message: info needs a contact
    then: { field: contact, function: truthy }
`

/** The file a user wrote: `get:` under `/pets` (no description) is line 7, column 5; `info:` line 2. */
const PETS_YAML = `openapi: 3.1.0
info:
  title: Pets
  version: 1.0.0
paths:
  /pets:
    get:
      summary: List pets
      responses:
        '200':
          description: the pets
`

/** The same document as a JSON file: `"get"` is line 9, column 7; `"info"` line 3, column 3. */
const PETS_JSON = `{
  "openapi": "3.1.0",
  "info": {
    "title": "Pets",
    "version": "1.0.0"
  },
  "paths": {
    "/pets": {
      "get": {
        "summary": "List pets",
        "responses": { "200": { "description": "the pets" } }
      }
    }
  }
}
`

t.test('findings in a 422, a dry run and the lint route carry their line and column in the text sent', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const rs = json(await s.call({ method: 'POST', url: '/v1/rulesets', payload: { name: 'placed', document: PLACED_RULESET } })).data
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'pets', ruleset_id: rs.id, blocking_severity: 'warn' } })).data
  const spec = `/v1/apis/${api.id}/spec`
  const get = { code: 'operation-description', severity: 'warn', message: 'every operation needs a description', path: ['paths', '/pets', 'get'] }
  const multipart = (text: string) => {
    const payload = `--b0undary\r\nContent-Disposition: form-data; name="document"; filename="openapi.yaml"\r\n\r\n${text}\r\n--b0undary--\r\n`
    return { payload, headers: { 'content-type': 'multipart/form-data; boundary=b0undary' } }
  }
  const bodies = [
    { how: 'a YAML body', headers: { 'content-type': 'application/yaml' }, payload: PETS_YAML, get: { line: 7, column: 5 } },
    { how: 'a JSON body', headers: { 'content-type': 'application/json' }, payload: PETS_JSON, get: { line: 9, column: 7 } },
    { how: 'a multipart YAML file', ...multipart(PETS_YAML), get: { line: 7, column: 5 } },
    { how: 'a JSON file with its own media type', headers: { 'content-type': 'application/vnd.oai.openapi+json' }, payload: PETS_JSON, get: { line: 9, column: 7 } },
    { how: 'the YAML text in an envelope (as the CLI sends it)', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ document: PETS_YAML }), get: { line: 7, column: 5 } },
  ]
  for (const body of bodies) {
    for (const url of [spec, `${spec}?dry_run=true`]) {
      const res = await s.call({ method: 'POST', url, headers: body.headers, payload: body.payload })
      t.equal(res.statusCode, 422, `${body.how} to ${url}`)
      t.same(json(res).errors, [{ ...get, ...body.get }], `${body.how}: the line of get: under /pets`)
    }
  }

  const object = await s.call({ method: 'POST', url: spec, payload: { document: parse(PETS_YAML) } })
  t.same(json(object).errors, [get], 'a document sent as a JSON object has no text of its own: no line, no column')
  t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/versions` })).total, 0, 'nothing stored')

  // Below the threshold: the dry run answers its findings, placed too (and the cached lint result is placed again).
  const described = { yaml: PETS_YAML.replace('      summary: List pets\n', '      description: Lists pets.\n'), json: PETS_JSON.replace('"summary": "List pets"', '"description": "Lists pets."') }
  const contact = { code: 'info-contact', severity: 'info', message: 'info needs a contact', path: ['info'] }
  for (const [text, type, at] of [[described.yaml, 'application/yaml', { line: 2, column: 1 }], [described.json, 'application/json', { line: 3, column: 3 }]] as const) {
    const dry = await s.call({ method: 'POST', url: `${spec}?dry_run=true`, headers: { 'content-type': type }, payload: text })
    t.equal(dry.statusCode, 200, `${type} dry run`)
    t.same(json(dry).data.findings, [{ ...contact, ...at }], `${type}: the line of info:`)
    const lint = await s.call({ method: 'POST', url: `/v1/rulesets/${rs.id}/lint`, headers: { 'content-type': type }, payload: text })
    t.same(json(lint).data.findings, [{ ...contact, ...at }], `${type}: the lint route places them as well`)
  }
  const published = await s.call({ method: 'POST', url: spec, headers: { 'content-type': 'application/yaml' }, payload: described.yaml })
  t.equal(published.statusCode, 201)
  const stored = json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/versions/${json(published).data.id}/findings` })).data
  t.same(stored, [contact], "a version's stored findings keep their path alone")

  const description = json(await s.call({ method: 'GET', url: '/openapi.json', key: null }))
  const upload = description.paths['/v1/apis/{api}/spec'].post
  t.same(upload.responses['422'].content['application/problem+json'].schema, { $ref: '#/components/schemas/Problem' }, 'a 422 is a problem')
  const problemItem = description.components.schemas.Problem.properties.errors.items
  t.match(problemItem.properties, { line: { type: 'integer', minimum: 1 }, column: { type: 'integer', minimum: 1 } }, '/openapi.json describes them in errors[]')
  const dryRun = upload.responses['200'].content['application/json'].schema.anyOf
    .map((s: { properties: { data: { properties?: Record<string, { items?: { properties: object } }> } } }) => s.properties.data.properties?.findings)
    .find(Boolean)
  t.match(dryRun.items.properties, { line: { type: 'integer' }, column: { type: 'integer' } }, 'and in a dry run')
})
