/**
 * Repository sync (issue 5, items 6, 8, 9): connections, manual syncs from a real git server on
 * loopback (`git http-backend`), multi-file `$ref` bundling and what it refuses, the lint gate.
 */
import { rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { parse, stringify } from 'yaml'
import { SEVERITY_RULESET, docWithFinding, json, petstore, tempDir, type TestServer } from '../helpers.js'
import { startGitHttpServer, type GitHttpServer } from '../support/git-http-server.js'
import { startGitFixture, type GitFixture } from '../support/git-fixture.js'
import type { TestRepository } from '../support/git-repos.js'

let server: GitHttpServer
let s: TestServer
let newRepository: GitFixture['repository']

t.before(async () => {
  ({ server, s, repository: newRepository } = await startGitFixture(t))
})

/** All a key holder is told of a repository that could not be fetched (the server's log has the reason). */
const UNREACHABLE = "the repository could not be fetched: unreachable (the server's log says why)"

let names = 0
async function repository(files: Record<string, string | { symlink: string }>): Promise<TestRepository> {
  const repo = await newRepository(`repo-${++names}`)
  await repo.commit(files)
  return repo
}

async function createApi(name = 'Petstore'): Promise<string> {
  const res = await s.call({ method: 'POST', url: '/v1/apis', payload: { name } })
  if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode} ${res.body}`)
  return json(res).data.id
}

async function connect(api: string, body: Record<string, unknown>) {
  return s.call({ method: 'PUT', url: `/v1/apis/${api}/repository`, payload: { provider: 'github', branch: 'main', ...body } })
}

const sync = (api: string) => s.call({ method: 'POST', url: `/v1/apis/${api}/sync` })
const connection = async (api: string) => json(await s.call({ method: 'GET', url: `/v1/apis/${api}/repository` })).data
const versions = async (api: string) => json(await s.call({ method: 'GET', url: `/v1/apis/${api}/versions` }))

t.test('connect, read back without secrets, replace, disconnect', async (t) => {
  const api = await createApi('Connections')
  const created = await connect(api, {
    url: 'https://github.com/acme/petstore.git', path: './specs/openapi.yaml', token: 'ghp_secret-token', webhook_secret: 'hook-secret',
  })
  t.equal(created.statusCode, 201)
  const view = json(created).data
  t.match(view, {
    api_id: api, organization_id: s.orgId, provider: 'github', url: 'https://github.com/acme/petstore.git', branch: 'main',
    path: 'specs/openapi.yaml', has_token: true, has_webhook_secret: true, webhook_path: '/webhooks/github', last_sync: null,
  })
  const got = await s.call({ method: 'GET', url: `/v1/apis/${api}/repository` })
  t.equal(got.statusCode, 200)
  t.notOk(got.body.includes('ghp_secret-token'), 'the token is never returned')
  t.notOk(got.body.includes('hook-secret'), 'the webhook secret is never returned')
  t.same(json(got).data, view)

  const replaced = await connect(api, { provider: 'gitlab', url: 'https://gitlab.com/acme/petstore', path: 'openapi.json' })
  t.equal(replaced.statusCode, 200, 'a second PUT replaces')
  t.match(json(replaced).data, { id: view.id, provider: 'gitlab', has_token: false, has_webhook_secret: false, webhook_path: '/webhooks/gitlab' })

  t.equal((await s.call({ method: 'DELETE', url: `/v1/apis/${api}/repository` })).statusCode, 204)
  t.equal((await s.call({ method: 'GET', url: `/v1/apis/${api}/repository` })).statusCode, 404)
  t.equal((await s.call({ method: 'DELETE', url: `/v1/apis/${api}/repository` })).statusCode, 404)
  t.equal((await sync(api)).statusCode, 404, 'no connection, no sync')
})

t.test('bad connections are 400 and store nothing', async (t) => {
  const api = await createApi('Bad connections')
  const cases: [string, Record<string, unknown>][] = [
    ['a file: url', { url: 'file:///etc', path: 'openapi.yaml' }],
    ['an ssh url', { url: 'ssh://git@github.com/acme/x.git', path: 'openapi.yaml' }],
    ['credentials in the url', { url: 'https://user:pw@github.com/acme/x.git', path: 'openapi.yaml' }],
    ['a path leaving the repository', { url: 'https://github.com/acme/x.git', path: '../openapi.yaml' }],
    ['an absolute path', { url: 'https://github.com/acme/x.git', path: '/etc/passwd' }],
    ['a bad branch', { url: 'https://github.com/acme/x.git', path: 'a.yaml', branch: 'a..b' }],
    ['an unknown provider', { url: 'https://github.com/acme/x.git', path: 'a.yaml', provider: 'bitbucket' }],
    ['an unknown field', { url: 'https://github.com/acme/x.git', path: 'a.yaml', organization_id: s.orgId }],
    ['a token with a line break', { url: 'https://github.com/acme/x.git', path: 'a.yaml', token: 'abc\r\nx-injected: 1' }],
    ['an overlong url', { url: `https://github.com/acme/${'é'.repeat(300)}.git`, path: 'a.yaml' }],
    ['an empty webhook secret', { url: 'https://github.com/acme/x.git', path: 'a.yaml', webhook_secret: '' }],
  ]
  for (const [what, body] of cases) {
    const res = await connect(api, body)
    t.equal(res.statusCode, 400, what)
    t.equal(json(res).code, 'invalid_request', what)
  }
  t.equal((await s.call({ method: 'GET', url: `/v1/apis/${api}/repository` })).statusCode, 404)
})

t.test("another organization's API answers 404", async (t) => {
  const api = await createApi('Ours')
  await connect(api, { url: 'https://github.com/acme/x.git', path: 'a.yaml' })
  const other = await s.registry.organizations.create('other-org')
  for (const request of [
    { method: 'GET' as const, url: `/v1/apis/${api}/repository` },
    { method: 'PUT' as const, url: `/v1/apis/${api}/repository`, payload: { provider: 'github', url: 'https://github.com/o/x.git', branch: 'main', path: 'a.yaml' } },
    { method: 'DELETE' as const, url: `/v1/apis/${api}/repository` },
    { method: 'POST' as const, url: `/v1/apis/${api}/sync` },
  ]) {
    const res = await s.call({ ...request, key: other.secret })
    t.equal(res.statusCode, 404, `${request.method} ${request.url}`)
  }
  t.equal((await s.call({ method: 'GET', url: `/v1/apis/${api}/repository` })).statusCode, 200, 'still connected')
})

t.test('a sync publishes the file as a version with source github; unchanged content makes no version', async (t) => {
  const text = `# the petstore\n${stringify(petstore('1.0.0'))}`
  const repo = await repository({ 'specs/openapi.yaml': text, 'README.md': 'hello' })
  const api = await createApi('Synced')
  t.equal((await connect(api, { url: repo.url, path: 'specs/openapi.yaml' })).statusCode, 201)

  const first = await sync(api)
  t.equal(first.statusCode, 201, first.body)
  const v1 = json(first).data
  t.match(v1, { number: 1, source: 'github', format: 'yaml', title: 'Petstore', version: '1.0.0' })
  const stored = await s.call({ method: 'GET', url: `/v1/apis/${api}/spec?format=yaml` })
  t.equal(stored.body, text, "the file's own bytes are stored (comments included)")
  const head = await repo.commit({ 'README.md': 'changed, the document is not' })
  let last = (await connection(api)).last_sync
  t.match(last, { status: 'succeeded', trigger: 'manual', version_id: v1.id, version_number: 1, error: null })

  const again = await sync(api)
  t.equal(again.statusCode, 200, 'unchanged content')
  t.equal(json(again).data.id, v1.id)
  t.equal((await versions(api)).total, 1, 'no new version')
  last = (await connection(api)).last_sync
  t.match(last, { status: 'unchanged', commit: head, version_id: v1.id })

  const next = await repo.commit({ 'specs/openapi.yaml': stringify(petstore('2.0.0')) })
  const second = await sync(api)
  t.equal(second.statusCode, 201)
  t.match(json(second).data, { number: 2, source: 'github', version: '2.0.0' })
  t.match((await connection(api)).last_sync, { status: 'succeeded', commit: next, version_number: 2 })
})

t.test('relative $refs to other files of the snapshot are bundled into one document', async (t) => {
  const root = {
    openapi: '3.1.0',
    info: { title: 'Split', version: '1.0.0' },
    paths: {
      '/pets': { $ref: 'paths/pets.yaml' },
      '/pets/{id}': { $ref: './paths/pet.yaml#/item' },
    },
    components: {
      schemas: {
        Pet: { $ref: 'schemas/pet.yaml' },
        Error: { $ref: 'schemas/common.json#/Error' },
      },
    },
  }
  const pets = {
    get: {
      operationId: 'listPets',
      responses: {
        '200': { description: 'pets', content: { 'application/json': { schema: { type: 'array', items: { $ref: '../schemas/pet.yaml' } } } } },
        default: { description: 'error', content: { 'application/json': { schema: { $ref: '../schemas/common.json#/Error' } } } },
      },
    },
  }
  const pet = {
    item: {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
      get: { operationId: 'getPet', responses: { '200': { description: 'a pet', content: { 'application/json': { schema: { $ref: '../schemas/pet.yaml' } } } } } },
    },
  }
  const petSchema = { type: 'object', required: ['id'], properties: { id: { type: 'integer' }, tag: { $ref: '#/$defs/Tag' }, parent: { $ref: '#' } }, $defs: { Tag: { type: 'string' } } }
  const common = { Error: { type: 'object', properties: { message: { type: 'string' } } } }
  const repo = await repository({
    'api/openapi.yaml': stringify(root),
    'api/paths/pets.yaml': stringify(pets),
    'api/paths/pet.yaml': stringify(pet),
    'api/schemas/pet.yaml': stringify(petSchema),
    'api/schemas/common.json': JSON.stringify(common),
  })
  const api = await createApi('Split')
  await connect(api, { url: repo.url, path: 'api/openapi.yaml' })
  const res = await sync(api)
  t.equal(res.statusCode, 201, res.body)
  const doc = parse((await s.call({ method: 'GET', url: `/v1/apis/${api}/spec?format=yaml` })).body)
  const refs: string[] = []
  JSON.stringify(doc, (key, value) => { if (key === '$ref') refs.push(value); return value })
  t.ok(refs.length > 0)
  t.ok(refs.every((ref) => ref.startsWith('#')), `only internal refs remain: ${refs.join(', ')}`)
  t.match(doc.components.schemas.Pet, { type: 'object', required: ['id'] }, 'the shared schema is inlined in components')
  t.same(doc.components.schemas.Pet.properties.tag, { $ref: '#/components/schemas/Pet/$defs/Tag' }, 'refs inside a file follow it')
  t.same(doc.components.schemas.Pet.properties.parent, { $ref: '#/components/schemas/Pet' }, 'a file referring to itself')
  t.same(doc.components.schemas.Error, common.Error)
  const listed = doc.paths['/pets'].get.responses
  t.same(listed['200'].content['application/json'].schema.items, { $ref: '#/components/schemas/Pet' }, 'later refs point at the inlined piece')
  t.same(listed.default.content['application/json'].schema, { $ref: '#/components/schemas/Error' })
  t.equal(doc.paths['/pets/{id}'].get.operationId, 'getPet')
})

t.test('$refs that leave the snapshot, URLs and outward symlinks are refused and store nothing', async (t) => {
  const withRef = (ref: string) => {
    const doc = petstore()
    ;(doc.components as any).schemas.Other = { $ref: ref }
    return stringify(doc)
  }
  const cases: [string, Record<string, string | { symlink: string }>, RegExp][] = [
    ['..', { 'spec/openapi.yaml': withRef('../../outside.yaml') }, /leaves the repository snapshot/],
    ['an absolute path', { 'openapi.yaml': withRef('/etc/passwd') }, /absolute path/],
    ['a url', { 'openapi.yaml': withRef('https://example.com/schemas/pet.yaml') }, /is a URL/],
    ['a file: url', { 'openapi.yaml': withRef('file:///etc/passwd') }, /is a URL/],
    ['a symlink out', { 'openapi.yaml': withRef('link.yaml'), 'link.yaml': { symlink: '../../../etc/passwd' } }, /outside the repository snapshot/],
    ['an absolute symlink', { 'openapi.yaml': withRef('link.yaml'), 'link.yaml': { symlink: '/etc/passwd' } }, /absolute path/],
    ['a missing file', { 'openapi.yaml': withRef('missing.yaml') }, /no such file/],
  ]
  for (const [what, files, message] of cases) {
    const path = Object.keys(files)[0]
    const repo = await repository(files)
    const api = await createApi(`Refused ${what}`)
    await connect(api, { url: repo.url, path })
    const res = await sync(api)
    t.equal(res.statusCode, 422, what)
    t.equal(json(res).code, 'invalid_document', what)
    t.match(json(res).errors[0].message, message, what)
    t.equal((await versions(api)).total, 0, `${what}: no version`)
    t.match((await connection(api)).last_sync, { status: 'failed', error: { code: 'invalid_document' } }, what)
  }
  const inside = await repository({ 'openapi.yaml': withRef('link.yaml'), 'link.yaml': { symlink: 'schemas/other.yaml' }, 'schemas/other.yaml': 'type: string\n' })
  const api = await createApi('Symlink inside')
  await connect(api, { url: inside.url, path: 'openapi.yaml' })
  t.equal((await sync(api)).statusCode, 201, 'a symlink inside the snapshot is followed')
})

t.test('a lint-blocked sync stores nothing and shows the findings in the last sync', async (t) => {
  const ruleset = json(await s.call({ method: 'POST', url: '/v1/rulesets', payload: { name: 'Sync rules', blocking_severity: 'warn', document: SEVERITY_RULESET } })).data
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Gated', ruleset_id: ruleset.id } })).data.id
  const repo = await repository({ 'openapi.json': JSON.stringify(docWithFinding('warn')) })
  await connect(api, { url: repo.url, path: 'openapi.json' })
  const res = await sync(api)
  t.equal(res.statusCode, 422)
  t.equal(json(res).code, 'lint_blocked')
  t.equal((await versions(api)).total, 0, 'nothing stored')
  const last = (await connection(api)).last_sync
  t.match(last, { status: 'blocked', error: { code: 'lint_blocked', errors: [{ code: 'needs-description', severity: 'warn' }] } })
  t.match(last.commit, /^[0-9a-f]{40}$/)

  await repo.commit({ 'openapi.json': JSON.stringify(docWithFinding('info')) })
  t.equal((await sync(api)).statusCode, 201, 'below the threshold it publishes')
  t.match((await connection(api)).last_sync, { status: 'succeeded', error: null })
})

t.test('a sync that breaks the compatibility policy stores nothing and shows the breaking changes in the last sync', async (t) => {
  const api = json(await s.call({ method: 'POST', url: '/v1/apis', payload: { name: 'Compatible', compatibility: 'backward' } })).data.id
  const first = petstore()
  const repo = await repository({ 'openapi.json': JSON.stringify(first) })
  await connect(api, { url: repo.url, path: 'openapi.json' })
  t.equal((await sync(api)).statusCode, 201)
  const breaking = petstore() as any
  delete breaking.components.schemas.Pet.properties.name
  await repo.commit({ 'openapi.json': JSON.stringify(breaking) })
  const res = await sync(api)
  t.equal(res.statusCode, 422)
  t.equal(json(res).code, 'incompatible')
  t.equal((await versions(api)).total, 1, 'nothing stored')
  const last = (await connection(api)).last_sync
  t.match(last, { status: 'blocked', error: { code: 'incompatible', errors: [{ code: 'property-removed', operation: { method: 'get', path: '/pets' } }] } })
  t.match(last.commit, /^[0-9a-f]{40}$/)
})

t.test('fetch failures are 502 repository_unavailable and are kept as the last sync', async (t) => {
  const repo = await repository({ 'openapi.yaml': stringify(petstore()) })
  const api = await createApi('Unavailable')
  await connect(api, { url: repo.url, path: 'openapi.yaml', branch: 'no-such-branch' })
  let res = await sync(api)
  t.equal(res.statusCode, 502)
  t.equal(json(res).code, 'repository_unavailable')
  t.equal(json(res).detail, UNREACHABLE, 'a key holder learns nothing of the remote')
  t.match(s.serverLog.at(-1), { api_id: api, reason: /branch 'no-such-branch'/ }, "the operator's log says why")
  t.match((await connection(api)).last_sync, { status: 'failed', commit: null, error: { code: 'repository_unavailable', detail: UNREACHABLE } })

  await connect(api, { url: `${server.url}/nothing-here.git`, path: 'openapi.yaml' })
  res = await sync(api)
  t.equal(res.statusCode, 502)
  t.equal(json(res).code, 'repository_unavailable')

  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as AddressInfo).port
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  await connect(api, { url: `http://127.0.0.1:${port}/closed.git`, path: 'openapi.yaml' })
  res = await sync(api)
  t.equal(res.statusCode, 502, 'nothing listens there')
  t.equal(json(res).detail, UNREACHABLE)
  t.match(s.serverLog.at(-1), { api_id: api, reason: /ECONNREFUSED/ })
})

t.test('a token-protected repository syncs with the token, and not without it', async (t) => {
  const protectedRoot = tempDir('registry-git-auth-')
  const secured = await startGitHttpServer(protectedRoot, { auth: { password: 'repo-token' } })
  t.teardown(async () => {
    await secured.close()
    rmSync(protectedRoot, { recursive: true, force: true })
  })
  const repo = await newRepository('private', { on: secured, remoteUrl: secured.url.replace('http://', 'http://user:repo-token@') + '/private.git' })
  await repo.commit({ 'openapi.yaml': stringify(petstore()) })
  const api = await createApi('Private')
  await connect(api, { url: repo.url, path: 'openapi.yaml' })
  const refused = await sync(api)
  t.equal(refused.statusCode, 502)
  t.equal(json(refused).detail, UNREACHABLE)
  t.match(s.serverLog.at(-1), { api_id: api, reason: /refused access \(HTTP 401\)/ })
  await connect(api, { url: repo.url, path: 'openapi.yaml', token: 'wrong' })
  t.equal((await sync(api)).statusCode, 502, 'a wrong token')
  await connect(api, { url: repo.url, path: 'openapi.yaml', token: 'repo-token' })
  const res = await sync(api)
  t.equal(res.statusCode, 201, res.body)
  t.notOk(JSON.stringify(await connection(api)).includes('repo-token'))
})

t.test('deleting the API removes its connection', async (t) => {
  const api = await createApi('Deleted')
  await connect(api, { url: 'https://github.com/acme/deleted.git', path: 'a.yaml' })
  t.equal((await s.call({ method: 'DELETE', url: `/v1/apis/${api}` })).statusCode, 204)
  t.equal(await s.registry.storage.read.resources.get(api), undefined)
  const store = s.registry.storage.read.repositories
  t.equal(await store.get(api), undefined, 'the connection is gone')
  t.same(await store.byRepository('github.com/acme/deleted'), [], 'and so is its webhook index entry')
})
