/**
 * The port's secrets section, run against every adapter by contract.ts: every secret kept in the
 * features' records (repository connections, SDK output repositories, push mirrors, webhook endpoints)
 * listed with where it is and whose it is, and replaced in place only while it is still the value expected.
 */
import type { Test } from 'tap'
import { newId, now } from '../../../src/domain/resources/ids.js'
import type { Storage } from '../../../src/storage/port.js'
import type {
  MirrorRemote, OrganizationRecord, OutputRepositoryRecord, RepositoryConnectionRecord, ResourceRecord, SdkRecord, SdkTarget,
  StoredSecret, WebhookEndpointRecord,
} from '../../../src/storage/records.js'
import type { SecretRef, SecretSlot } from '../../../src/storage/secret-slots.js'
import { organization, resource, type OpenStorage } from './contract.js'
import { sdk } from './sdks.js'

let sealedCount = 0
/** A value shaped as the keyring seals one (each distinct, as a fresh IV makes them). */
const sealed = (): StoredSecret => ({ alg: 'A256GCM', kid: '0123456789abcdef', iv: `iv-${++sealedCount}`, data: `data-${sealedCount}` })

function connection(api: ResourceRecord, token: StoredSecret | null, webhookSecret: StoredSecret | null): RepositoryConnectionRecord {
  const at = now()
  return {
    id: newId(), api_id: api.id, organization_id: api.organization_id, provider: 'github', url: `https://github.com/acme/${api.slug}.git`,
    normalized_url: `github.com/acme/${api.slug}`, branch: 'main', path: 'openapi.yaml', token, webhook_secret: webhookSecret,
    created_at: at, updated_at: at,
    last_sync: {
      status: 'succeeded', trigger: 'manual', delivery: null, started_at: at, finished_at: at, commit: 'c'.repeat(40),
      version_id: null, version_number: null, error: null,
    },
  }
}

function outputRepository(of: SdkRecord, target: SdkTarget, token: StoredSecret | null): OutputRepositoryRecord {
  const at = now()
  return { sdk_id: of.id, target, provider: 'github', url: `https://github.com/acme/${of.slug}-${target}.git`, base_branch: 'main', api_url: null, token, created_at: at, updated_at: at }
}

function remote(token: StoredSecret | null): MirrorRemote {
  return { url: 'https://git.example.com/registry.git', token, created_at: now(), last_pushed_commit: null, last_pushed_at: null, last_error: null, last_error_at: null }
}

function endpoint(organizationId: string, secret: StoredSecret): WebhookEndpointRecord {
  const at = now()
  return {
    id: newId(), organization_id: organizationId, url: 'https://hooks.example.com/registry', description: null, event_types: [], enabled: true,
    disabled_reason: null, secret, failing_since: null, created_at: at, updated_at: at,
  }
}

const byId = <T>(id: (item: T) => string) => (a: T, b: T) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0)

interface World {
  storage: Storage
  acme: OrganizationRecord
  beta: OrganizationRecord
  connections: RepositoryConnectionRecord[]
  sdks: SdkRecord[]
  repositories: OutputRepositoryRecord[]
  remotes: [organizationId: string, MirrorRemote][]
  endpoints: WebhookEndpointRecord[]
}

/**
 * Two organizations with a secret of every kind, sealed values and plaintext ones (what an earlier
 * version stored), and records of each kind that hold none.
 */
async function world(open: OpenStorage, t: Test): Promise<World> {
  const storage = await open(t)
  const [acme, beta] = [organization('acme'), organization('beta')]
  const apis = [resource(acme.id, 'shop'), resource(acme.id, 'pets'), resource(beta.id, 'theirs'), resource(acme.id, 'bare')]
  const connections = [
    connection(apis[0], sealed(), sealed()),
    connection(apis[1], null, 'plain-webhook-secret'),
    connection(apis[2], 'plain-token', null),
    connection(apis[3], null, null),
  ]
  const sdks = [sdk(acme.id, 'one'), sdk(beta.id, 'two')]
  const repositories = [outputRepository(sdks[0], 'typescript', sealed()), outputRepository(sdks[0], 'php', null), outputRepository(sdks[1], 'php', 'plain-output')]
  const remotes: World['remotes'] = [[acme.id, remote(sealed())], [beta.id, remote(null)]]
  const endpoints = [endpoint(beta.id, sealed()), endpoint(acme.id, 'whsec_plain')]
  await storage.transaction(async (tx) => {
    for (const org of [acme, beta]) await tx.organizations.put(org)
    for (const api of apis) await tx.resources.create(api)
    for (const record of connections) await tx.repositories.put(record)
    for (const record of sdks) await tx.sdks.create(record)
    for (const record of repositories) await tx.sdks.putRepository(record)
    for (const [organizationId, record] of remotes) await tx.mirror.putRemote(organizationId, record)
    for (const record of endpoints) await tx.webhooks.putEndpoint(record)
  })
  return { storage, acme, beta, connections, sdks, repositories, remotes, endpoints }
}

/** The slots `slots()` must answer for a world, in the order the section documents. */
function expectedSlots({ connections, sdks, repositories, remotes, endpoints }: World): SecretSlot[] {
  const slots: SecretSlot[] = []
  for (const c of [...connections].sort(byId((c) => c.api_id))) {
    if (c.token !== null) slots.push({ ref: { holder: 'repository-connection', api_id: c.api_id, connection_id: c.id, field: 'token' }, organization_id: c.organization_id, value: c.token })
    if (c.webhook_secret !== null) {
      slots.push({ ref: { holder: 'repository-connection', api_id: c.api_id, connection_id: c.id, field: 'webhook_secret' }, organization_id: c.organization_id, value: c.webhook_secret })
    }
  }
  for (const r of [...repositories].sort(byId((r) => `${r.sdk_id}/${r.target}`))) {
    const organizationId = sdks.find((s) => s.id === r.sdk_id)!.organization_id
    if (r.token !== null) slots.push({ ref: { holder: 'sdk-output-repository', sdk_id: r.sdk_id, target: r.target, field: 'token' }, organization_id: organizationId, value: r.token })
  }
  for (const [organizationId, r] of [...remotes].sort(byId(([id]) => id))) {
    if (r.token !== null) slots.push({ ref: { holder: 'mirror-remote', organization_id: organizationId, field: 'token' }, organization_id: organizationId, value: r.token })
  }
  for (const e of [...endpoints].sort(byId((e) => e.id))) {
    slots.push({ ref: { holder: 'webhook-endpoint', endpoint_id: e.id, field: 'secret' }, organization_id: e.organization_id, value: e.secret })
  }
  return slots
}

export function secretContract(t: Test, open: OpenStorage): void {
  t.test('secrets: every stored secret of every feature, with where it is and whose it is, in a fixed order', async (t) => {
    const empty = await open(t)
    t.same(await empty.read.secrets.slots(), [], 'none in an empty storage')

    const w = await world(open, t)
    const slots = await w.storage.read.secrets.slots()
    t.same(slots, expectedSlots(w), 'connections by API (token, then webhook secret), output repositories by SDK and target, mirrors by organization, endpoints by id')
    t.equal(slots.length, 9, 'fields holding no secret are left out (4 of 8 connection fields, 2 of 3 output repositories, 1 of 2 mirrors, both endpoints)')
    t.ok(slots.some((slot) => slot.value === 'plain-token') && slots.some((slot) => typeof slot.value === 'object'), 'plaintext and sealed values alike, as stored')
    const outputs = slots.flatMap((slot) => slot.ref.holder === 'sdk-output-repository' ? [`${slot.ref.sdk_id} ${slot.organization_id}`] : [])
    t.same(outputs.sort(), [`${w.sdks[0].id} ${w.acme.id}`, `${w.sdks[1].id} ${w.beta.id}`].sort(), "an output repository's organization is its SDK's")

    await w.storage.transaction(async (tx) => {
      const extra = endpoint(w.acme.id, 'whsec_new')
      await tx.webhooks.putEndpoint(extra)
      t.same((await tx.secrets.slots()).at(-1)?.ref, { holder: 'webhook-endpoint', endpoint_id: extra.id, field: 'secret' }, "a transaction lists its own writes")
      await tx.repositories.remove(w.connections[0].api_id)
      await tx.sdks.remove(w.sdks[0].id)
      await tx.mirror.removeRemote(w.acme.id)
      await tx.webhooks.removeEndpoint(extra.id)
    })
    t.same(await w.storage.read.secrets.slots(), expectedSlots({
      ...w, connections: w.connections.slice(1), repositories: w.repositories.slice(2), remotes: w.remotes.slice(1),
    }), "a record removed takes its secrets with it (an SDK's output repositories go with the SDK)")
  })

  t.test('secrets: a value is replaced in place only while it is still the one expected; nothing else of the record changes', async (t) => {
    const w = await world(open, t)
    const { storage } = w
    const replace = (ref: SecretRef, expected: StoredSecret, next: StoredSecret) => storage.transaction((tx) => tx.secrets.replace(ref, expected, next))
    const [shop, pets] = w.connections
    const [typescript] = w.repositories
    const [acmeId, acmeRemote] = w.remotes[0]
    const [betaEndpoint, acmeEndpoint] = w.endpoints
    const tokenRef: SecretRef = { holder: 'repository-connection', api_id: shop.api_id, connection_id: shop.id, field: 'token' }
    const refs = {
      connection: tokenRef,
      output: { holder: 'sdk-output-repository', sdk_id: typescript.sdk_id, target: 'typescript', field: 'token' } as SecretRef,
      mirror: { holder: 'mirror-remote', organization_id: acmeId, field: 'token' } as SecretRef,
      endpoint: { holder: 'webhook-endpoint', endpoint_id: betaEndpoint.id, field: 'secret' } as SecretRef,
    }
    const before = await storage.read.secrets.slots()

    // Not the value expected: each kind is left as it is.
    const stale = sealed()
    for (const [kind, ref] of Object.entries(refs)) t.equal(await replace(ref, stale, sealed()), false, `${kind}: another value than expected`)
    t.equal(await replace(tokenRef, shop.webhook_secret!, sealed()), false, "the other field's value is not this field's")
    t.same(await storage.read.secrets.slots(), before, 'nothing was replaced')

    const next = { connection: sealed(), output: sealed(), mirror: sealed(), endpoint: sealed() }
    t.equal(await replace(refs.connection, shop.token!, next.connection), true, 'a connection token')
    t.equal(await replace(refs.output, typescript.token!, next.output), true, 'an output repository token')
    t.equal(await replace(refs.mirror, acmeRemote.token!, next.mirror), true, 'a mirror token')
    t.equal(await replace(refs.endpoint, betaEndpoint.secret, next.endpoint), true, 'a signing secret')
    const petsSecretRef: SecretRef = { holder: 'repository-connection', api_id: pets.api_id, connection_id: pets.id, field: 'webhook_secret' }
    t.equal(await replace(petsSecretRef, 'plain-webhook-secret', 'sealed-now'), true, 'a plaintext value, sealed (what the start-up migration does)')
    t.equal(await replace(refs.connection, shop.token!, sealed()), false, 'the value replaced is no longer the one expected')

    t.same(await storage.read.repositories.get(shop.api_id), { ...shop, token: next.connection }, "the connection's other fields stay, its updated_at and last sync too")
    t.same(await storage.read.repositories.get(pets.api_id), { ...pets, webhook_secret: 'sealed-now' })
    t.same(await storage.read.sdks.repository(typescript.sdk_id, 'typescript'), { ...typescript, token: next.output })
    t.same(await storage.read.mirror.remote(acmeId), { ...acmeRemote, token: next.mirror })
    t.same(await storage.read.webhooks.endpoint(betaEndpoint.id), { ...betaEndpoint, secret: next.endpoint })
    t.same(await storage.read.webhooks.endpoint(acmeEndpoint.id), acmeEndpoint, 'other records are untouched')
    t.same(await storage.read.webhooks.endpoints(w.beta.id), [{ ...betaEndpoint, secret: next.endpoint }], "still listed where it was")
    t.same((await storage.read.repositories.byRepository(shop.normalized_url)).map((c) => c.api_id), [shop.api_id], 'and still found by repository')
  })

  t.test('secrets: a record removed or replaced by another is not written to', async (t) => {
    const w = await world(open, t)
    const { storage } = w
    const replace = (ref: SecretRef, expected: StoredSecret, next: StoredSecret) => storage.transaction((tx) => tx.secrets.replace(ref, expected, next))
    const [shop] = w.connections
    const tokenRef: SecretRef = { holder: 'repository-connection', api_id: shop.api_id, connection_id: shop.id, field: 'token' }

    // The API connected again (a new connection id) with the very same stored value: another record.
    const again: RepositoryConnectionRecord = { ...shop, id: newId(), updated_at: now() }
    await storage.transaction((tx) => tx.repositories.put(again))
    t.equal(await replace(tokenRef, shop.token!, sealed()), false, 'a connection with another id')
    t.same(await storage.read.repositories.get(shop.api_id), again, 'left as it is')

    await storage.transaction((tx) => tx.repositories.remove(shop.api_id))
    t.equal(await replace({ ...tokenRef, connection_id: again.id }, shop.token!, sealed()), false, 'a connection removed')
    t.equal(await storage.read.repositories.get(shop.api_id), undefined, 'not written again')

    const [typescript] = w.repositories
    await storage.transaction((tx) => tx.sdks.removeRepository(typescript.sdk_id, 'typescript'))
    t.equal(await replace({ holder: 'sdk-output-repository', sdk_id: typescript.sdk_id, target: 'typescript', field: 'token' }, typescript.token!, sealed()), false, 'an output repository removed')
    t.equal(await storage.read.sdks.repository(typescript.sdk_id, 'typescript'), undefined)
    t.equal(await replace({ holder: 'sdk-output-repository', sdk_id: newId(), target: 'php', field: 'token' }, 'x', 'y'), false, 'no such SDK')

    const [acmeId, acmeRemote] = w.remotes[0]
    await storage.transaction((tx) => tx.mirror.removeRemote(acmeId))
    t.equal(await replace({ holder: 'mirror-remote', organization_id: acmeId, field: 'token' }, acmeRemote.token!, sealed()), false, 'a mirror removed')
    t.equal(await storage.read.mirror.remote(acmeId), undefined)

    const [betaEndpoint] = w.endpoints
    await storage.transaction((tx) => tx.webhooks.removeEndpoint(betaEndpoint.id))
    t.equal(await replace({ holder: 'webhook-endpoint', endpoint_id: betaEndpoint.id, field: 'secret' }, betaEndpoint.secret, sealed()), false, 'an endpoint removed')
    t.equal(await storage.read.webhooks.endpoint(betaEndpoint.id), undefined)
  })

  t.test('secrets: a replacement is part of its transaction: it sees the writes before it, and a throw takes it back', async (t) => {
    const w = await world(open, t)
    const { storage } = w
    const [acmeId, acmeRemote] = w.remotes[0]
    const ref: SecretRef = { holder: 'mirror-remote', organization_id: acmeId, field: 'token' }
    const entered = sealed()
    const answered = await storage.transaction(async (tx) => {
      // The owner's new token, written first in the same transaction: a rotation reading the old one must not undo it.
      await tx.mirror.putRemote(acmeId, { ...acmeRemote, token: entered })
      return tx.secrets.replace(ref, acmeRemote.token!, sealed())
    })
    t.equal(answered, false)
    t.same((await storage.read.mirror.remote(acmeId))?.token, entered, 'the value written before it stays')

    await t.rejects(storage.transaction(async (tx) => {
      t.equal(await tx.secrets.replace(ref, entered, sealed()), true)
      throw new Error('rolled back')
    }), /rolled back/)
    t.same((await storage.read.mirror.remote(acmeId))?.token, entered, 'a transaction that threw replaced nothing')
  })

  t.test('secrets: concurrent replacements of one value from the same expected one: exactly one wins', async (t) => {
    const w = await world(open, t)
    const { storage } = w
    const [shop] = w.connections
    const ref: SecretRef = { holder: 'repository-connection', api_id: shop.api_id, connection_id: shop.id, field: 'webhook_secret' }
    const candidates = Array.from({ length: 6 }, () => sealed())
    const answers = await Promise.all(candidates.map((next) => storage.transaction((tx) => tx.secrets.replace(ref, shop.webhook_secret!, next))))
    t.equal(answers.filter(Boolean).length, 1, 'one replacement; the others found the value changed')
    const stored = (await storage.read.repositories.get(shop.api_id))!.webhook_secret
    t.same(stored, candidates[answers.indexOf(true)], "the winner's value is the one stored")
  })
}
