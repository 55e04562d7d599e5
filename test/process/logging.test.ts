import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { petstore } from '../helpers.js'
import { tempDir } from '../temp.js'
import { api, cliJson, startServer } from './spawn.js'

t.test('logs at trace level are structured and never hold a key, a token or an Authorization header', async (t) => {
  const storage = tempDir()
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  // Keys made by the CLI: the server prints no "API key:" line, so any key in the output is a leak.
  const key = cliJson(['--storage', storage, 'org', 'create', 'acme']).api_key as string
  const unknownKey = `sk_${'u'.repeat(40)}`
  const metricsToken = 'metrics-token-that-must-not-leak'
  const server = await startServer(storage, { LOG_LEVEL: 'trace', REGISTRY_METRICS_TOKEN: metricsToken })
  t.teardown(() => server.stop('SIGKILL'))

  const id = (await api(server.url, key, 'POST', '/v1/apis', { name: 'pets', visibility: 'public' })).json().data.id
  t.equal((await api(server.url, key, 'POST', `/v1/apis/${id}/spec`, { document: petstore() })).status, 201)
  t.equal((await api(server.url, unknownKey, 'GET', '/v1/apis')).status, 401)
  t.equal((await api(server.url, key, 'GET', '/@acme/apis/pets/latest')).status, 200)
  t.equal((await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).status, 200)
  t.equal((await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}x` } })).status, 401)
  // A failing write is logged with its error: the log says what failed, and still holds no key.
  rmSync(join(storage, 'tmp'), { recursive: true, force: true })
  writeFileSync(join(storage, 'tmp'), 'not a directory')
  const failed = await api(server.url, key, 'POST', `/v1/apis/${id}/spec`, { document: petstore('2.0.0') })
  t.equal(failed.status, 500)
  t.notMatch(failed.text, new RegExp(storage), 'the problem body has no internal path')
  t.equal(await server.stop('SIGTERM'), 0)

  const output = server.output()
  const lines = output.split('\n').filter((line) => line.trim() !== '')
  t.ok(lines.length > 10, `${lines.length} log lines`)
  t.ok(lines.some((line) => /"msg":"incoming request"/.test(line)), 'requests are logged at this level')
  for (const line of lines) t.doesNotThrow(() => JSON.parse(line), `structured: ${line.slice(0, 60)}`)
  const failure = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'request failed')
  t.ok(failure?.err && failure.reqId, 'the failed request is logged with its error and request id')
  for (const secret of [key, key.slice(3), unknownKey, metricsToken]) {
    t.notOk(output.includes(secret), `the log never holds ${secret.slice(0, 6)}…`)
  }
  t.notMatch(output, /authorization"\s*:\s*"Bearer/i, 'no Authorization header value')
})
