/**
 * Issue 14, finding 7: one key's burst of uploads cannot stall the other organizations. The document
 * workers are handed out round-robin over the organizations that wait, so another organization's
 * upload runs next instead of behind the whole burst; one key's waiting tasks are bounded, and past
 * the bound an upload is refused at once with 503 and Retry-After. Before, piscina's queue was first
 * come, first served and unbounded: every upload of the burst was accepted and ran before the other.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { json, petstore, startTestServer } from '../helpers.js'

t.test("another organization's upload runs before one key's queued burst, and the burst is bounded", async (t) => {
  const s = await startTestServer({ fairness: { perOrganization: 1, perKey: 1, queuePerKey: 8, queuePerOrganization: 32 } })
  t.teardown(s.close)
  const other = await s.registry.organizations.create('other', 'Other')
  const createApi = async (key: string) => json(await s.call({ key, method: 'POST', url: '/v1/apis', payload: { name: 'Pets' } })).data.id as string
  const flooded = await createApi(s.key)
  const unrelated = await createApi(other.secret)

  const finished: string[] = []
  const upload = (key: string, api: string, version: string, who: string) =>
    s.call({ key, method: 'POST', url: `/v1/apis/${api}/spec`, payload: { document: petstore(version) } }).then((response) => {
      if (response.statusCode === 201) finished.push(who)
      return response
    })
  const burst = Array.from({ length: 20 }, (_, i) => upload(s.key, flooded, `1.0.${i}`, 'burst'))
  // The other organization uploads once the burst is waiting for the worker.
  for (let i = 0; i < 2000 && (s.registry.documents.queueSize ?? 0) < 3; i++) await sleep(5)
  const alone = upload(other.secret, unrelated, '2.0.0', 'other')
  const answers = await Promise.all(burst)

  t.equal((await alone).statusCode, 201, "the other organization's upload is stored")
  const refused = answers.filter((answer) => answer.statusCode === 503)
  const stored = answers.filter((answer) => answer.statusCode === 201)
  t.ok(refused.length > 0, `${refused.length} of the burst's 20 uploads are refused at once (at most 1 running and 8 waiting per key)`)
  t.equal(stored.length + refused.length, 20, 'every other upload of the burst is stored')
  t.match(refused[0].headers['retry-after'], /^\d+$/, 'a refusal says when to retry')
  t.match(json(refused[0]), { code: 'unavailable', status: 503, detail: /waiting for validation and lint.*nothing was stored/ })
  const after = finished.length - 1 - finished.indexOf('other')
  // The commits are fair too: the storage port's LMDB adapter queues transactions per organization, so
  // the other organization's commit never waits behind the burst's (test/storage/lmdb/lanes.test.ts).
  t.ok(after >= 3, `the other organization's upload finished before ${after} of the burst's ${stored.length} stored uploads (${finished.join(', ')})`)
})
