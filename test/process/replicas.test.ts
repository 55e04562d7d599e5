/**
 * Three built registry processes on one PostgreSQL database behind a round-robin proxy (issue 16,
 * items 6, 7 and 14; test/support/replicas.ts): what one replica commits, the next request to another
 * sees, whether it is a resource, a version or a site's domain (kept in memory by every replica for
 * routing by Host); concurrent uploads to one API from all three give versions 1..N with no gap and no
 * duplicate; the unchanged-upload no-op holds across replicas; a key revoked through one replica is refused
 * by every replica on the next request. Needs `npm run build` first.
 */
import t from 'tap'
import { stringify } from 'yaml'
import { petstore } from '../helpers.js'
import { postgresForFile } from '../support/postgres.js'
import { startReplicas, type Answer } from '../support/replicas.js'

const postgres = await postgresForFile(t)

/** `count` consecutive requests through the proxy: one per replica when count is the number of replicas. */
async function onEach(count: number, send: () => Promise<Answer>): Promise<Answer[]> {
  const answers: Answer[] = []
  for (let i = 0; i < count; i++) answers.push(await send())
  return answers
}

if (postgres) {
  const cluster = await startReplicas(t, postgres)
  const { request } = cluster

  t.test('an API created on one replica, uploaded to on the next, read on the third', async (t) => {
    const created = await request('POST', '/v1/apis', { body: { name: 'Pets', visibility: 'public' } })
    t.equal(created.status, 201, created.text)
    const id = created.json().data.id
    const uploaded = await request('POST', `/v1/apis/${id}/spec`, { body: { document: petstore('1.0.0') } })
    t.equal(uploaded.status, 201, uploaded.text)
    t.equal(uploaded.json().data.number, 1)
    const read = await request('GET', `/v1/apis/${id}/spec`)
    t.equal(read.status, 200, read.text)
    t.same(read.json(), petstore('1.0.0'), 'the document as uploaded')
    t.same(new Set([created.replica, uploaded.replica, read.replica]), new Set([0, 1, 2]), 'three replicas answered')

    const byEach = await onEach(3, () => request('GET', '/v1/apis/pets'))
    t.same(byEach.map((answer) => [answer.status, answer.json().data.current.number]), [[200, 1], [200, 1], [200, 1]], 'every replica sees version 1')
    t.same(new Set(byEach.map((answer) => answer.replica)).size, 3)
    const list = await request('GET', '/@default/apis')
    t.equal(list.status, 200, list.text)
    t.ok(list.text.includes('"pets"'), 'the public registry lists it')
  })

  t.test("a site's domain added, moved and removed through one replica routes on the others at once", async (t) => {
    const api = (await request('POST', '/v1/apis', { body: { name: 'Shop', visibility: 'public' } })).json().data
    t.equal((await request('POST', `/v1/apis/${api.id}/spec`, { body: { document: petstore('2.0.0', { title: 'Shop' }) } })).status, 201)
    const html = { accept: 'text/html' }
    const page = (host: string) => request('GET', '/', { host, key: null, headers: html })
    const isSite = (answer: Answer) => answer.status === 200 && answer.text.includes('Replica Docs')

    // Every replica answers these hosts first, so each has looked them up (and remembered the answer).
    for (const answer of await onEach(3, () => page('docs.shop.test'))) t.notOk(isSite(answer), `replica ${answer.replica}: no site yet`)
    for (const answer of await onEach(3, () => page('www.shop.test'))) t.notOk(isSite(answer), `replica ${answer.replica}: no site yet`)

    const created = await request('POST', '/v1/sites', {
      body: { name: 'Replica Docs', visibility: 'public', api_ids: [api.id], domains: ['docs.shop.test'] },
    })
    t.equal(created.status, 201, created.text)
    const site = created.json().data
    const added = await onEach(3, () => page('docs.shop.test'))
    for (const answer of added) t.ok(isSite(answer), `replica ${answer.replica} routes the new domain to the site (${answer.status})`)
    t.equal(new Set(added.map((answer) => answer.replica)).size, 3)

    const moved = await request('PATCH', `/v1/sites/${site.id}`, { body: { domains: ['WWW.Shop.test'] } })
    t.equal(moved.status, 200, moved.text)
    for (const answer of await onEach(3, () => page('docs.shop.test'))) t.notOk(isSite(answer), `replica ${answer.replica}: the old domain is no longer the site's`)
    for (const answer of await onEach(3, () => page('www.shop.test:443'))) t.ok(isSite(answer), `replica ${answer.replica}: the new one is`)

    t.equal((await request('DELETE', `/v1/sites/${site.id}`)).status, 204)
    for (const answer of await onEach(3, () => page('www.shop.test'))) t.notOk(isSite(answer), `replica ${answer.replica}: the deleted site's domain routes nowhere`)
  })

  t.test('concurrent uploads to one API through all three replicas: versions 1..N, no gap, no duplicate', async (t) => {
    const api = (await request('POST', '/v1/apis', { body: { name: 'Busy' } })).json().data
    const uploads = 15
    // A client told 409 (a writer that lost its transaction too often) sends again, as docs/api.md says.
    const upload = async (n: number): Promise<Answer> => {
      for (let attempt = 0; ; attempt++) {
        const answer = await request('POST', `/v1/apis/${api.id}/spec`, { body: { document: petstore(`3.0.${n}`) } })
        if (answer.status !== 409 || attempt === 3) return answer
      }
    }
    const answers = await Promise.all(Array.from({ length: uploads }, (_, n) => upload(n)))
    t.same(answers.map((answer) => answer.status), answers.map(() => 201), answers.filter((answer) => answer.status !== 201).map((answer) => answer.text).join('\n'))
    t.equal(new Set(answers.map((answer) => answer.replica)).size, 3, 'the uploads were answered by all three replicas')
    const numbers = answers.map((answer) => answer.json().data.number).sort((a, b) => a - b)
    t.same(numbers, Array.from({ length: uploads }, (_, i) => i + 1), 'each acknowledged upload has its own number, 1 to 15')

    const versions = await request('GET', `/v1/apis/${api.id}/versions?limit=100`)
    const stored = versions.json().data as { number: number; version: string }[]
    t.same(stored.map((version) => version.number), numbers.slice().reverse(), 'the versions stored are exactly those, newest first')
    const byNumber = new Map(answers.map((answer) => [answer.json().data.number, answer.json().data.version]))
    t.same(stored.map((version) => version.version), stored.map((version) => byNumber.get(version.number)), 'each number holds the document it was acknowledged for')
    const current = await request('GET', `/v1/apis/${api.id}`)
    t.equal(current.json().data.current.number, uploads, 'the last number is current')
  })

  t.test('the unchanged-upload no-op holds across replicas, whatever the format and key order', async (t) => {
    const api = (await request('POST', '/v1/apis', { body: { name: 'Steady' } })).json().data
    const document = petstore('4.0.0')
    t.equal((await request('POST', `/v1/apis/${api.id}/spec`, { body: { document } })).status, 201)
    const reordered = Object.fromEntries(Object.entries(document).reverse())
    const again = await onEach(3, () => request('POST', `/v1/apis/${api.id}/spec`, { body: stringify(reordered), headers: { 'content-type': 'application/yaml' } }))
    t.same(again.map((answer) => [answer.status, answer.json().data.number]), [[200, 1], [200, 1], [200, 1]], 'each replica answers 200 with version 1')

    // The same new document through every replica at once: one writes it, the others find it current.
    const next = petstore('4.1.0')
    const racing = await Promise.all([0, 1, 2].map(() => request('POST', `/v1/apis/${api.id}/spec`, { body: { document: next } })))
    t.same(racing.map((answer) => answer.status).sort(), [200, 200, 201], racing.map((answer) => answer.text).join('\n'))
    t.same(racing.map((answer) => answer.json().data.number), [2, 2, 2], 'all three name version 2')
    const versions = await request('GET', `/v1/apis/${api.id}/versions`)
    t.same(versions.json().data.map((version: { number: number }) => version.number), [2, 1], 'nothing else was written')
  })

  t.test('a key revoked through one replica is refused by every replica on the next request (issue 14)', async (t) => {
    const issued = await request('POST', '/v1/keys', { body: { name: 'short-lived', role: 'read' } })
    t.equal(issued.status, 201, issued.text)
    const { id, api_key: secret } = issued.json().data as { id: string; api_key: string }
    const before = await onEach(3, () => request('GET', '/v1/apis/pets', { key: secret }))
    t.same(before.map((answer) => answer.status), [200, 200, 200], 'every replica accepts it')
    t.equal(new Set(before.map((answer) => answer.replica)).size, 3)
    const revoked = await request('DELETE', `/v1/keys/${id}`)
    t.equal(revoked.status, 204, revoked.text)
    const after = await onEach(3, () => request('GET', '/v1/apis/pets', { key: secret }))
    t.same(after.map((answer) => answer.status), [401, 401, 401], 'every replica refuses it at once')
    t.equal(new Set(after.map((answer) => answer.replica)).size, 3)
  })
}
