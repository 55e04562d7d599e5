import t from 'tap'
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
  t.same(dry, { checksum: version.checksum, unchanged: true, findings })
  t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${api.id}/versions` })).total, 1, 'a dry run stores nothing')

  const lint = json(await s.call({ method: 'POST', url: `/v1/rulesets/${rs.id}/lint`, payload: { document: docWithFinding('error') } })).data
  t.same(lint.counts, { error: 1, warn: 0, info: 0, hint: 0 })
  t.equal(lint.findings[0].code, 'needs-owner')
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
