/** The one redaction: every form a secret travels in is taken out of a text, and nothing else is. */
import t from 'tap'
import { RegistryError } from '../../src/errors.js'
import { REDACTED, Redactor } from '../../src/domain/outbound/redaction.js'

const TOKEN = 'ghp_Token/with+chars="7'

t.test('a secret is found as it is, percent-encoded, JSON-escaped and in base64 at every alignment', async (t) => {
  const secrets = new Redactor([TOKEN])
  const texts = [
    `Bad credentials ${TOKEN}`,
    `https://example.com/?t=${encodeURIComponent(TOKEN)}`,
    `https://example.com/?t=${encodeURIComponent(TOKEN).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())}`,
    JSON.stringify({ authorization: TOKEN }),
  ]
  for (const user of ['', 'x', 'oauth2', 'x-access-token', 'registry']) {
    texts.push(`Authorization: Basic ${Buffer.from(`${user}:${TOKEN}`).toString('base64')}`)
    texts.push(`echo ${Buffer.from(`${user}:${TOKEN}`).toString('base64url')}`)
  }
  for (const text of texts) {
    const clean = secrets.redact(text)
    t.match(clean, REDACTED, text)
    t.notOk(clean.includes(TOKEN) || clean.includes(encodeURIComponent(TOKEN)), text)
  }
  // base64("x-access-token:") is 20 characters: what is left after it is at most the 3 characters that mix in padding.
  t.match(secrets.redact(`Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`), /^Basic eC1hY2Nlc3MtdG9rZW46\[redacted\].{0,3}$/, 'no decodable piece is left')
})

t.test("a URL's credentials are secrets, the URL itself is not", async (t) => {
  const secrets = new Redactor(['https://builder:s3cr%2Ft-pass@git.example.com/acme/x.git', null, undefined])
  t.equal(secrets.redact('could not push to https://builder:s3cr%2Ft-pass@git.example.com/acme/x.git: unreachable'),
    `could not push to https://${REDACTED}:${REDACTED}@git.example.com/acme/x.git: unreachable`)
  t.equal(secrets.redact('the remote said s3cr/t-pass'), `the remote said ${REDACTED}`, 'decoded too')
  t.equal(secrets.redact('could not push to https://git.example.com/acme/x.git'), 'could not push to https://git.example.com/acme/x.git')
})

t.test('short values are not searched for, texts are bounded after redaction', async (t) => {
  t.equal(new Redactor(['t', 'abc']).redact('a test token abc'), 'a test token abc')
  const long = `${'a'.repeat(64 * 1024 - 3)}${TOKEN}`
  const clean = new Redactor([TOKEN]).redact(long)
  t.notOk(clean.includes(TOKEN.slice(0, 4)), 'no half secret at the cut')
  t.ok(clean.length <= 64 * 1024 + 1)
})

t.test('problems, log details and plain data are redacted; Redactor.with adds more', async (t) => {
  const secrets = Redactor.NONE.with(TOKEN)
  const problem = secrets.redactProblem(new RegistryError('repository_unavailable', `denied ${TOKEN}`, [{ path: ['url'], message: `echo ${TOKEN}` }]))
  t.match(problem, { code: 'repository_unavailable', message: `denied ${REDACTED}`, errors: [{ path: ['url'], message: `echo ${REDACTED}` }] })
  const untouched = new RegistryError('not_found', 'nothing here')
  t.equal(secrets.redactProblem(untouched), untouched, 'a problem without a secret is the same object')
  const lines: unknown[] = []
  secrets.log({ warn: (details, message) => lines.push({ details, message }) })
    .warn({ reason: `HTTP 403: ${TOKEN}`, steps: [`pushed with ${TOKEN}`], status: 403 }, `failed ${TOKEN}`)
  t.same(lines, [{ details: { reason: `HTTP 403: ${REDACTED}`, steps: [`pushed with ${REDACTED}`], status: 403 }, message: `failed ${REDACTED}` }])
})
