/**
 * Uploading a document the obvious ways (issue 15, item 4): the file as the body with its own media
 * type, `application/json` whose top level is the document, no Content-Type at all, and `curl -F`.
 * The curl cases run the real curl against the app listening on a loopback port, as they were hit.
 */
import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { stringify } from 'yaml'
import { json, petstore, startTestServer, tempDir, type TestServer } from '../helpers.js'

const run = promisify(execFile)

async function create(s: TestServer, kind: 'apis' | 'schemas' | 'rulesets', name: string): Promise<string> {
  const res = await s.call({ method: 'POST', url: `/v1/${kind}`, payload: { name } })
  if (res.statusCode !== 201) throw new Error(`create: ${res.statusCode} ${res.body}`)
  return json(res).data.id
}

/** The stored bytes of a version, as served in their own format. */
async function storedText(s: TestServer, path: string, versionId: string, format: string): Promise<string> {
  return (await s.call({ method: 'GET', url: `${path}/versions/${versionId}/document?format=${format}` })).body
}

/** Runs curl against the listening app with the key; returns the status and the body. */
async function curl(base: string, key: string, args: string[]): Promise<{ status: number; body: string; headers: string }> {
  const { stdout } = await run('curl', ['-s', '-D', '-', '-H', `Authorization: Bearer ${key}`, ...args.map((a) => a.replace('$R', base))])
  const split = stdout.indexOf('\r\n\r\n')
  const headers = stdout.slice(0, split)
  return { status: Number(/^HTTP\/[\d.]+ (\d+)/.exec(headers)![1]), headers: headers.toLowerCase(), body: stdout.slice(split + 4) }
}

const pretty = `${JSON.stringify(petstore(), null, 2)}\n`
const yamlText = `# the petstore\n${stringify(petstore('2.0.0'))}`

t.test('curl as a user types it: a JSON file as the body, a file field, and no Content-Type', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const base = await s.app.listen({ port: 0, host: '127.0.0.1' })
  const dir = tempDir()
  writeFileSync(join(dir, 'openapi.json'), pretty)
  writeFileSync(join(dir, 'openapi.yaml'), yamlText)
  const api = await create(s, 'apis', 'Petstore')
  const spec = `$R/v1/apis/${api}/spec`

  const raw = await curl(base, s.key, ['--data-binary', `@${join(dir, 'openapi.json')}`, '-H', 'content-type: application/json', spec])
  t.equal(raw.status, 201, 'curl --data-binary @openapi.json -H \'content-type: application/json\'')
  const v1 = JSON.parse(raw.body).data
  t.match(v1, { number: 1, format: 'json', title: 'Petstore', size: Buffer.byteLength(pretty) })
  t.equal(await storedText(s, `/v1/apis/${api}`, v1.id, 'json'), pretty, 'the stored bytes are the file, as sent')

  const form = await curl(base, s.key, ['-F', `document=@${join(dir, 'openapi.yaml')}`, spec])
  t.equal(form.status, 201, 'curl -F document=@openapi.yaml')
  const v2 = JSON.parse(form.body).data
  t.match(v2, { number: 2, format: 'yaml', version: '2.0.0' })
  t.equal(await storedText(s, `/v1/apis/${api}`, v2.id, 'yaml'), yamlText, 'a file field is stored as the file')

  const again = await curl(base, s.key, ['-F', `document=@${join(dir, 'openapi.yaml')};type=application/yaml`, spec])
  t.equal(again.status, 200, 'the same file again is unchanged')

  const untyped = await curl(base, s.key, ['--data-binary', `@${join(dir, 'openapi.json')}`, '-H', 'content-type:', spec])
  t.equal(untyped.status, 201, 'no Content-Type at all: read as JSON')
  t.match(JSON.parse(untyped.body).data, { number: 3, format: 'json' })

  const form415 = await curl(base, s.key, ['--data-binary', `@${join(dir, 'openapi.yaml')}`, spec])
  t.equal(form415.status, 415, "curl's default type (a form) is refused")
  const problem = JSON.parse(form415.body)
  t.equal(problem.code, 'unsupported_media_type')
  for (const type of ['application/json', 'application/vnd.oai.openapi', 'application/vnd.oai.openapi+json', 'application/yaml', 'multipart/form-data']) {
    t.ok(problem.detail.includes(type), `the 415 names ${type}`)
  }
  t.match(problem.detail, /Content-Type: application\/x-www-form-urlencoded$/)
  t.match(form415.headers, /accept-post: application\/json, application\/vnd\.oai\.openapi, /)
  t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${api}/versions` })).total, 3, 'nothing stored by the refused upload')
})

t.test('every upload route takes the raw document in each accepted type, with the right bytes and format', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const api = await create(s, 'apis', 'Petstore')
  const schema = await create(s, 'schemas', 'Pet')
  const ruleset = await create(s, 'rulesets', 'House')
  const upload = (url: string, type: string, payload: string) =>
    s.call({ method: 'POST', url, headers: { 'content-type': type }, payload })

  const cases: [string, string, string, string][] = [
    [`/v1/apis/${api}/spec`, 'application/vnd.oai.openapi+json', JSON.stringify(petstore('1')), 'json'],
    [`/v1/apis/${api}/spec`, 'application/vnd.oai.openapi;version=3.1', stringify(petstore('2')), 'yaml'],
    [`/v1/apis/${api}/spec`, 'application/json; charset=utf-8', JSON.stringify(petstore('3'), null, 1), 'json'],
    [`/v1/apis/${api}/spec`, 'text/yaml', stringify(petstore('4')), 'yaml'],
    [`/v1/schemas/${schema}/document`, 'application/schema+json', '{"type": "object", "properties": {"id": {"type": "integer"}}}', 'json'],
    [`/v1/schemas/${schema}/document`, 'application/json', '{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "string"}', 'json'],
    [`/v1/rulesets/${ruleset}/document`, 'application/json', '{"extends": [["spectral:oas", "off"]]}', 'json'],
    [`/v1/rulesets/${ruleset}/document`, 'application/x-yaml', 'extends: [["spectral:oas", "all"]]\n', 'yaml'],
  ]
  for (const [url, type, text, format] of cases) {
    const res = await upload(url, type, text)
    t.equal(res.statusCode, 201, `${type} to ${url}${res.statusCode === 201 ? '' : `: ${res.body}`}`)
    const version = json(res).data
    t.equal(version.format, format, `${type}: format ${format}`)
    t.equal(await storedText(s, url.replace(/\/(spec|document)$/, ''), version.id, format), text, `${type}: stored as sent`)
  }

  const dryRun = await upload(`/v1/apis/${api}/spec?dry_run=true`, 'application/json', JSON.stringify(petstore('5')))
  t.equal(dryRun.statusCode, 200, 'a dry run takes a raw JSON document')
  t.match(json(dryRun).data, { unchanged: false, findings: [] })
  const lint = await upload(`/v1/rulesets/${ruleset}/lint`, 'application/vnd.oai.openapi', stringify(petstore('6')))
  t.equal(lint.statusCode, 200, 'the lint route takes a raw YAML document')
  t.ok(json(lint).data.findings.length > 0, 'and lints it')
  t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${api}/versions` })).total, 4, 'dry run and lint stored nothing')
})

t.test('the envelope rule: an object with a document member is the envelope, with no other member', async (t) => {
  const s = await startTestServer()
  t.teardown(s.close)
  const schema = await create(s, 'schemas', 'Anything')
  const url = `/v1/schemas/${schema}/document`
  const post = (payload: unknown) => s.call({ method: 'POST', url, payload: payload as string, headers: { 'content-type': 'application/json' } })

  const enveloped = await post(JSON.stringify({ document: { type: 'string' } }))
  t.equal(enveloped.statusCode, 201)
  t.equal(await storedText(s, `/v1/schemas/${schema}`, json(enveloped).data.id, 'json'), '{"type":"string"}', 'the member is the document')
  const extra = await post(JSON.stringify({ document: { type: 'string' }, format: 'yaml' }))
  t.equal(extra.statusCode, 400)
  t.equal(json(extra).detail, "unknown field 'format': the body has only 'document'")
  const itself = await post('{}')
  t.equal(itself.statusCode, 201, '{} is the document itself: a schema that allows anything')
  t.equal(await storedText(s, `/v1/schemas/${schema}`, json(itself).data.id, 'json'), '{}')
  const array = await post('[1]')
  t.equal(array.statusCode, 400)
  t.equal(json(array).detail, 'the request body must be a JSON object: the document itself, or { "document": … }')
  const empty = await post('')
  t.equal(empty.statusCode, 400)
  t.match(json(empty).detail, /no body/)
})

t.test('multipart bodies: one field named document, bounded by the body limit, upload routes only', async (t) => {
  const s = await startTestServer({ config: { bodyLimit: 4096 } })
  t.teardown(s.close)
  const api = await create(s, 'apis', 'Petstore')
  const multipart = (url: string, parts: { name: string; filename?: string; text: string }[]) => {
    const boundary = 'b0undary'
    const payload = parts.map((p) => `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}\r\n\r\n${p.text}\r\n`).join('') + `--${boundary}--\r\n`
    return s.call({ method: 'POST', url, payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } })
  }
  const spec = `/v1/apis/${api}/spec`
  const text = stringify(petstore())

  const field = await multipart(spec, [{ name: 'document', text }])
  t.equal(field.statusCode, 201, `a text field works like a file (curl -F 'document=<file'): ${field.body}`)
  t.equal(json(field).data.format, 'yaml')

  const wrongName = await multipart(spec, [{ name: 'file', filename: 'openapi.yaml', text }])
  t.equal(wrongName.statusCode, 400)
  t.match(json(wrongName).detail, /unexpected multipart field 'file'/)
  const two = await multipart(spec, [{ name: 'document', filename: 'a.yaml', text }, { name: 'document', filename: 'b.yaml', text }])
  t.ok([400, 413].includes(two.statusCode), `two documents are refused: ${two.statusCode}`)
  const none = await multipart(spec, [])
  t.equal(none.statusCode, 400)
  t.match(json(none).detail, /no field named 'document'/)
  const big = await multipart(spec, [{ name: 'document', filename: 'big.yaml', text: `${text}x-padding: ${'p'.repeat(8192)}\n` }])
  t.equal(big.statusCode, 413, 'a file over the body limit')
  t.equal(json(big).code, 'payload_too_large')
  const bigField = await multipart(spec, [{ name: 'document', text: `${text}x-padding: ${'p'.repeat(8192)}\n` }])
  t.equal(bigField.statusCode, 413, 'a field over the body limit')
  const malformed = await s.call({ method: 'POST', url: spec, payload: 'not multipart at all', headers: { 'content-type': 'multipart/form-data' } })
  t.equal(malformed.statusCode, 400, `a multipart type without a boundary: ${malformed.body}`)

  const elsewhere = await multipart('/v1/apis', [{ name: 'name', text: 'Other' }])
  t.equal(elsewhere.statusCode, 415, 'other routes take JSON only')
  t.equal(json(elsewhere).detail, 'request bodies are application/json (Content-Type: multipart/form-data; boundary=b0undary)')
  const yamlElsewhere = await s.call({ method: 'POST', url: '/v1/apis', payload: 'name: x', headers: { 'content-type': 'application/vnd.oai.openapi' } })
  t.equal(yamlElsewhere.statusCode, 415)
  t.equal(json(await s.call({ method: 'GET', url: '/v1/apis' })).total, 1, 'no API created by a form')
  t.equal(json(await s.call({ method: 'GET', url: `/v1/apis/${api}/versions` })).total, 1, 'only the good upload stored')
})
