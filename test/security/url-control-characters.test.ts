/**
 * Issue 14, finding 5: a URL a key holder stores (repository sync, SDK output repository and its
 * api_url, push mirror, an API's logo_url) with a control character in it (CR/LF, tab, NUL) is refused
 * with 422 invalid_url naming the field, and nothing is stored; `registry mirror set-remote` refuses it
 * in one line. Such a URL would otherwise be kept as given and written into request lines and logs.
 */
import { rmSync } from 'node:fs'
import type { LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { json, startTestServer } from '../helpers.js'
import { cli, cliJson } from '../process/spawn.js'
import { createApi, createSdk } from '../sdk/support.js'
import { tempDir } from '../temp.js'

const INJECTED = ['https://github.com/acme/x.git\r\nX-Injected: 1', 'https://github.com/acme/x.git\nX-Injected: 1', 'https://github.com/acme/\tx.git', 'https://github.com/acme/x.git\u0000', 'https://github.com/acme/x.git\u007f']

function refusal(response: LightMyRequestResponse, field: string) {
  const body = json(response)
  const detail = String(body.detail ?? '')
  return {
    status: response.statusCode,
    code: body.code,
    path: body.errors?.[0]?.path,
    // The detail names the field and never repeats the control characters it refuses.
    detail: /[\u0000-\u001f\u007f]/.test(detail) ? 'control characters echoed' : detail.split(':')[0],
    field,
  }
}

const expected = (field: string) => ({ status: 422, code: 'invalid_url', path: [field], detail: field, field })

t.test('the HTTP API refuses control characters in every stored URL, 422 naming the field, nothing stored', async (t) => {
  const s = await startTestServer()
  t.teardown(() => s.close())
  const api = await createApi(s)
  const sdk = await createSdk(s, [api], ['php'])
  for (const url of INJECTED) {
    const sync = await s.call({ method: 'PUT', url: `/v1/apis/${api}/repository`, payload: { provider: 'github', url, branch: 'main', path: 'openapi.yaml' } })
    t.same(refusal(sync, 'url'), expected('url'), `repository sync: ${JSON.stringify(url)}`)
    const output = await s.call({ method: 'PUT', url: `/v1/sdks/${sdk.id}/targets/php/repository`, payload: { provider: 'git', url } })
    t.same(refusal(output, 'url'), expected('url'), `output repository: ${JSON.stringify(url)}`)
    const apiUrl = await s.call({
      method: 'PUT', url: `/v1/sdks/${sdk.id}/targets/php/repository`,
      payload: { provider: 'github', url: 'https://github.com/acme/x.git', api_url: url.replace('github.com/acme/', 'api.github.com/'), token: 'ghp_x' },
    })
    t.same(refusal(apiUrl, 'api_url'), expected('api_url'), `api_url: ${JSON.stringify(url)}`)
    const mirror = await s.call({ method: 'PUT', url: '/v1/mirror', payload: { url } })
    t.same(refusal(mirror, 'url'), expected('url'), `push mirror: ${JSON.stringify(url)}`)
    const logo = await s.call({ method: 'PATCH', url: `/v1/apis/${api}`, payload: { logo_url: url } })
    t.same(refusal(logo, 'logo_url'), expected('logo_url'), `logo_url: ${JSON.stringify(url)}`)
  }
  t.equal((await s.call({ method: 'GET', url: `/v1/apis/${api}/repository` })).statusCode, 404, 'no connection stored')
  t.equal((await s.call({ method: 'GET', url: `/v1/sdks/${sdk.id}/targets/php/repository` })).statusCode, 404, 'no output repository stored')
  t.match(json(await s.call({ method: 'GET', url: '/v1/mirror' })).data, { url: null }, 'no remote stored')
  t.match(json(await s.call({ method: 'GET', url: `/v1/apis/${api}` })).data, { logo_url: null }, 'no logo stored')

  // The same URLs without the control characters are stored.
  const clean = await s.call({ method: 'PUT', url: `/v1/apis/${api}/repository`, payload: { provider: 'github', url: 'https://github.com/acme/x.git', branch: 'main', path: 'openapi.yaml' } })
  t.equal(clean.statusCode, 201, clean.body)
})

t.test('registry mirror set-remote refuses them with one clear line', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const s = ['--storage', storage]
  cliJson([...s, 'org', 'create', 'acme'])
  const refused = cli([...s, 'mirror', 'set-remote', INJECTED[0], '--org', 'acme'])
  t.equal(refused.code, 1)
  t.equal(refused.stdout, '')
  t.match(refused.stderr, /^registry: url: [^\r\n]*control character[^\r\n]*\n$/, 'one line, without the characters it refuses')
  const asJson = cli([...s, '--json', 'mirror', 'set-remote', INJECTED[2], '--org', 'acme'])
  t.equal(asJson.code, 1)
  t.match(JSON.parse(asJson.stdout), { error: { code: 'invalid_url', message: /^url: / } })
  t.match(cliJson([...s, 'mirror', 'show', '--org', 'acme']), { url: null }, 'nothing stored')
})
