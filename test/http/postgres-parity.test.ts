/**
 * The same registry on both storage adapters answers the same (issue 16, item 4: "every behaviour of the
 * LMDB adapter holds on PostgreSQL, byte for byte in API answers"): one script of requests runs against a
 * registry on LMDB and one on a real PostgreSQL database, and every answer (status, content type, body)
 * must be equal once the values that differ by nature are named by their order of appearance: ids
 * (ULIDs), times, keys and secrets, and the checksum-free fields derived from them.
 */
import t from 'tap'
import { petstore, startTestServer, type TestServer } from '../helpers.js'
import { postgresForFile } from '../support/postgres.js'

interface Step {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  url: string
  payload?: unknown
  headers?: Record<string, string>
}

/** Values that differ between two runs by nature, replaced by a name given in order of first appearance. */
const VARYING = [
  /\b[0-9A-HJKMNP-TV-Z]{26}\b/g, // ULIDs: ids of everything
  /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z\b/g, // times
  /\bsk_[A-Za-z0-9_-]{20,}\b/g, // API keys
  /\bwhsec_[A-Za-z0-9+/=]{20,}/g, // webhook secrets
]

function normalizer(): (text: string) => string {
  const names = new Map<string, string>()
  // A key's last use is written after the answer that used it (batched), so whether a listing shows it yet is timing.
  const unbatched = (text: string) => text.replace(/"last_used_at":(?:null|"[^"]*")/g, '"last_used_at":"<last use>"')
  return (text) => VARYING.reduce((current, pattern) => current.replace(pattern, (value) => {
    let name = names.get(value)
    if (!name) names.set(value, (name = `<${names.size + 1}>`))
    return name
  }), unbatched(text))
}

const yamlPetstore = `openapi: 3.1.0
info:
  title: Yaml pets
  version: 2.0.0
  description: From YAML.
paths: {}
`

/** The script: the core flows, each step's path may name what an earlier answer gave (`{api}`, `{site}`…). */
function script(): Step[] {
  return [
    { method: 'POST', url: '/v1/rulesets', payload: { name: 'Strict', document: { extends: [['spectral:oas', 'off']], rules: { 'info-contact': 'error' } } } },
    { method: 'POST', url: '/v1/apis', payload: { name: 'Pets', visibility: 'public', description: 'All the pets' } },
    { method: 'POST', url: '/v1/apis', payload: { name: 'Äpfel', compatibility: 'backward' } },
    { method: 'POST', url: '/v1/apis', payload: { name: 'Pets' } },
    { method: 'POST', url: '/v1/apis/pets/spec', payload: { document: petstore('1.0.0') } },
    { method: 'POST', url: '/v1/apis/pets/spec', payload: { document: petstore('1.0.0') } },
    { method: 'POST', url: '/v1/apis/pets/spec', payload: yamlPetstore, headers: { 'content-type': 'application/yaml' } },
    { method: 'POST', url: '/v1/apis/pets/spec', payload: { document: petstore('1.1.0', { description: 'More pets.' }) } },
    { method: 'POST', url: '/v1/apis/pets/spec', payload: { document: { openapi: '3.1.0', info: {} } } },
    { method: 'GET', url: '/v1/apis/pets' },
    { method: 'GET', url: '/v1/apis?limit=2' },
    { method: 'GET', url: '/v1/apis?q=%C3%A4PFEL' },
    { method: 'GET', url: '/v1/apis?sort=-name' },
    { method: 'GET', url: '/v1/apis/pets/versions' },
    { method: 'GET', url: '/v1/apis/pets/versions/2' },
    { method: 'GET', url: '/v1/apis/pets/spec' },
    { method: 'GET', url: '/v1/apis/pets/spec', headers: { accept: 'application/yaml' } },
    { method: 'GET', url: '/v1/apis/pets/diff' },
    { method: 'GET', url: '/v1/apis/pets/diff?from=1&to=3' },
    { method: 'GET', url: '/v1/apis/pets/changelog' },
    { method: 'POST', url: '/v1/apis/pets/versions/1/restore' },
    { method: 'PATCH', url: '/v1/apis/pets', payload: { ruleset_id: '{ruleset}', blocking_severity: 'error' } },
    { method: 'POST', url: '/v1/apis/pets/spec', payload: { document: petstore('1.2.0') } },
    { method: 'POST', url: '/v1/apis/apfel/spec', payload: { document: petstore('1.0.0') } },
    { method: 'POST', url: '/v1/apis/apfel/spec', payload: { document: { ...petstore('2.0.0'), paths: {} } } },
    { method: 'POST', url: '/v1/schemas', payload: { name: 'Pet', document: { type: 'object', properties: { id: { type: 'integer' } } } } },
    { method: 'GET', url: '/v1/schemas/pet/versions' },
    { method: 'POST', url: '/v1/sites', payload: { name: 'Docs', api_ids: ['{api}'], domains: ['docs.example.com'] } },
    { method: 'POST', url: '/v1/sites', payload: { name: 'Docs', domains: ['docs.example.com'] } },
    { method: 'PUT', url: '/v1/sites/docs/guides/start', payload: { title: 'Start', markdown: '# Start\n\nHello.' } },
    { method: 'GET', url: '/v1/sites/docs/guides' },
    { method: 'POST', url: '/v1/webhooks', payload: { url: 'https://hooks.example.com/in', event_types: ['version.created'] } },
    { method: 'GET', url: '/v1/webhooks' },
    { method: 'GET', url: '/v1/keys' },
    { method: 'GET', url: '/v1/search?q=pets' },
    { method: 'GET', url: '/v1/overview' },
    { method: 'DELETE', url: '/v1/rulesets/strict' },
    { method: 'DELETE', url: '/v1/apis/pets-2' },
    { method: 'DELETE', url: '/v1/apis/pets' },
    { method: 'GET', url: '/v1/sites/docs' },
    { method: 'GET', url: '/v1/apis' },
    { method: 'GET', url: '/v1/apis/pets' },
    { method: 'GET', url: '/@acme' },
  ]
}

/** Runs the script; `{api}` and `{ruleset}` name the first API's and ruleset's ids as this registry gave them. */
async function run(s: TestServer): Promise<{ step: string; status: number; type: string; body: string }[]> {
  const ids: Record<string, string> = {}
  const normalize = normalizer()
  const answers = []
  for (const step of script()) {
    const fill = (text: string) => text.replace(/\{(api|ruleset)\}/g, (_, name: string) => ids[name])
    const payload = step.payload === undefined ? undefined
      : typeof step.payload === 'string' ? step.payload : JSON.parse(fill(JSON.stringify(step.payload)))
    const response = await s.call({ method: step.method, url: fill(step.url), payload: payload as never, headers: step.headers })
    if (step.method === 'POST' && response.statusCode === 201 && step.url === '/v1/rulesets') ids.ruleset ??= JSON.parse(response.body).data.id
    if (step.method === 'POST' && response.statusCode === 201 && step.url === '/v1/apis') ids.api ??= JSON.parse(response.body).data.id
    answers.push({
      step: `${step.method} ${step.url}`, status: response.statusCode,
      type: String(response.headers['content-type'] ?? ''), body: normalize(response.body),
    })
  }
  return answers
}

const server = await postgresForFile(t)
if (server) {
  t.test('one script, the same answers from LMDB and from PostgreSQL', async (t) => {
    const lmdb = await startTestServer()
    t.teardown(lmdb.close)
    const postgres = await startTestServer({ databaseUrl: await server.createDatabase() })
    t.teardown(postgres.close)
    const expected = await run(lmdb)
    const actual = await run(postgres)
    t.ok(expected.filter((a) => a.status < 300).length > 30, 'most steps succeed')
    t.ok(expected.some((a) => a.status === 422) && expected.some((a) => a.status === 409), 'and the refusals are in the script')
    for (const [i, answer] of actual.entries()) t.same(answer, expected[i], answer.step)
  })
}
