/** The port's git mirror section (journal, history, heads, push remotes) and search's terms, run against every adapter by contract.ts. */
import type { Test } from 'tap'
import { newId, now } from '../../../src/domain/resources/ids.js'
import type { Storage } from '../../../src/storage/port.js'
import {
  historyEntry, type HistoryPosition, type JournalChange, type MirrorRemote, type MirrorVersion, type OrganizationRecord, type ResourceRecord,
  type SearchTerms,
} from '../../../src/storage/records.js'
import type { OpenStorage } from './contract.js'
import { organization, resource, version } from './contract.js'

const notFound = { code: 'not_found' }
const HEAD_A = 'a'.repeat(40)
const HEAD_B = 'b'.repeat(40)

async function withOrganization(storage: Storage, slug: string): Promise<OrganizationRecord> {
  const org = organization(slug)
  await storage.transaction((tx) => tx.organizations.put(org))
  return org
}

/** Appends one change in a transaction of its own, as the domain's writes do in theirs. */
async function journal(storage: Storage, org: OrganizationRecord, change: JournalChange, at = now()): Promise<void> {
  await storage.transaction((tx) => tx.mirror.append(org.id, at, change))
}

function remote(url: string, fields: Partial<MirrorRemote> = {}): MirrorRemote {
  return {
    url, token: null, created_at: now(), last_pushed_commit: null, last_pushed_at: null, last_error: null, last_error_at: null, ...fields,
  }
}

const versionOf = ({ id, number, checksum, digest, format, source, restored_from }: MirrorVersion): MirrorVersion =>
  ({ id, number, checksum, digest, format, source, restored_from })

/** Every page of the history's versions, `limit` at a time. */
async function allHistoryVersions(storage: Storage, limit: number): Promise<{ pages: number; ids: string[] }> {
  const ids: string[] = []
  let after: HistoryPosition | undefined
  let pages = 0
  for (;;) {
    const page = await storage.read.mirror.historyVersions(after, limit)
    pages += 1
    ids.push(...page.versions.map((v) => v.id))
    if (page.versions.length > limit) throw new Error('a page longer than its limit')
    if (!page.next) return { pages, ids }
    after = page.next
  }
}

export function mirrorContract(t: Test, open: OpenStorage): void {
  t.test('mirror: the journal and the history, per organization and in sequence order', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const beta = await withOrganization(storage, 'beta')
    t.equal(await storage.read.mirror.lastSeq(acme.id), 0, 'no history yet')
    t.same(await storage.read.mirror.history(acme.id), [])
    t.same(await storage.read.mirror.pendingOf(acme.id), [])

    const shop = resource(acme.id, 'Shop')
    const renamed = { ...shop, name: 'Store', slug: 'store', updated_at: now() }
    const first = { ...version(shop, 1), restored_from: null }
    const theirs = resource(beta.id, 'Theirs')
    const changes: [OrganizationRecord, JournalChange][] = [
      [acme, { change: 'create', resource: shop }],
      [beta, { change: 'create', resource: theirs }],
      [acme, { change: 'version', resource: { ...shop, last_number: 1 }, version: first }],
      [acme, { change: 'update', before: shop, resource: renamed }],
      [acme, { change: 'rebuild' }],
      [acme, { change: 'delete', resource: renamed }],
    ]
    const at = '2026-03-01T12:00:00.000Z'
    for (const [org, change] of changes) await journal(storage, org, change, at)

    const pending = await storage.read.mirror.pending(100)
    t.equal(pending.length, 6, 'every change is pending, the rebuild request too')
    const seqs = pending.map((entry) => entry.seq)
    t.same(seqs, [...seqs].sort((a, b) => a - b), 'in sequence order')
    t.same(pending.map((entry) => [entry.organization_id, entry.change, entry.at]), changes.map(([org, change]) => [org.id, change.change, at]))
    t.same(pending[2], { ...changes[2][1], seq: seqs[2], organization_id: acme.id, at }, 'an entry is the change as given, numbered')
    t.same((await storage.read.mirror.pendingOf(acme.id)).map((entry) => entry.seq), [seqs[0], seqs[2], seqs[3], seqs[4], seqs[5]], 'one organization\'s')
    t.same((await storage.read.mirror.pendingOf(beta.id)).map((entry) => entry.seq), [seqs[1]])

    const history = await storage.read.mirror.history(acme.id)
    t.same(history.map((entry) => entry.seq), [seqs[0], seqs[2], seqs[3], seqs[5]], 'the history keeps every change but the rebuild request')
    t.equal(JSON.stringify(history[1]), JSON.stringify(historyEntry(seqs[2], at, changes[2][1] as Exclude<JournalChange, { change: 'rebuild' }>)),
      'a version is kept as its commit needs it, byte for byte')
    t.same(history[1], { change: 'version', seq: seqs[2], at, resource_id: shop.id, version: versionOf(first) })
    t.same(history[2], { change: 'update', seq: seqs[3], at, before: shop, resource: renamed }, 'an update keeps both records')
    t.same((await storage.read.mirror.history(acme.id, seqs[2])).map((entry) => entry.seq), [seqs[3], seqs[5]], 'after a number')
    t.same(await storage.read.mirror.history(acme.id, seqs[5]), [])
    t.same((await storage.read.mirror.history(beta.id)).map((entry) => entry.change), ['create'])
    t.equal(await storage.read.mirror.lastSeq(acme.id), seqs[5], 'the organization\'s latest history entry')
    t.equal(await storage.read.mirror.lastSeq(beta.id), seqs[1])
    t.same((await storage.read.mirror.pending(2)).map((entry) => entry.seq), seqs.slice(0, 2), 'at most limit')
  })

  t.test('mirror: applying entries records the head with them; discarded entries leave; the history stays', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const beta = await withOrganization(storage, 'beta')
    for (const name of ['a', 'b', 'c']) await journal(storage, acme, { change: 'create', resource: resource(acme.id, name) })
    await journal(storage, beta, { change: 'create', resource: resource(beta.id, 'theirs') })
    const seqs = (await storage.read.mirror.pending(100)).map((entry) => entry.seq)
    t.equal(await storage.read.mirror.head(acme.id), undefined, 'no head before anything is applied')

    const head = { commit: HEAD_A, updated_at: now() }
    await storage.transaction((tx) => tx.mirror.markApplied(acme.id, [seqs[0], seqs[1]], head))
    t.same(await storage.read.mirror.head(acme.id), head)
    t.same((await storage.read.mirror.pending(100)).map((entry) => entry.seq), [seqs[2], seqs[3]], 'the applied entries left the journal')
    t.equal(await storage.read.mirror.head(beta.id), undefined, 'another organization\'s head is its own')
    t.equal((await storage.read.mirror.history(acme.id)).length, 3, 'the history keeps applied changes')

    const next = { commit: HEAD_B, updated_at: now() }
    await storage.transaction((tx) => tx.mirror.markApplied(acme.id, [seqs[0], seqs[2]], next))
    t.same(await storage.read.mirror.head(acme.id), next, 'the head replaced; a number no longer pending is ignored')
    t.same((await storage.read.mirror.pendingOf(acme.id)), [])

    await storage.transaction((tx) => tx.mirror.discard([seqs[3], seqs[0]]))
    t.same(await storage.read.mirror.pending(100), [], 'discarded, a number no longer pending ignored')
    t.equal(await storage.read.mirror.head(beta.id), undefined, 'discarding records no head')
    t.equal((await storage.read.mirror.history(beta.id)).length, 1)

    await t.rejects(storage.transaction((tx) => tx.mirror.markApplied(newId(), [], head)), notFound, 'no such organization')
    // All or nothing: the head and the removal go together, or neither.
    await journal(storage, acme, { change: 'create', resource: resource(acme.id, 'd') })
    const [pendingD] = await storage.read.mirror.pending(100)
    await t.rejects(storage.transaction(async (tx) => {
      await tx.mirror.markApplied(acme.id, [pendingD.seq], { commit: HEAD_A, updated_at: now() })
      throw new Error('the git write failed')
    }), { message: 'the git write failed' })
    t.same(await storage.read.mirror.head(acme.id), next, 'the head as it was')
    t.same((await storage.read.mirror.pending(100)).map((entry) => entry.seq), [pendingD.seq], 'the entry still pending')
  })

  t.test('mirror: push remotes per organization, replaced whole, listed in id order', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const beta = await withOrganization(storage, 'beta')
    const gamma = await withOrganization(storage, 'gamma')
    t.same(await storage.read.mirror.remoteOrganizations(), [])
    t.equal(await storage.read.mirror.remote(acme.id), undefined)

    const theirs = remote('https://git.example.com/beta.git', { token: 'sealed-token' })
    const ours = remote('https://git.example.com/acme.git')
    await storage.transaction((tx) => tx.mirror.putRemote(beta.id, theirs))
    await storage.transaction((tx) => tx.mirror.putRemote(acme.id, ours))
    t.same(await storage.read.mirror.remote(beta.id), theirs)
    t.same(await storage.read.mirror.remote(acme.id), ours)
    t.same(await storage.read.mirror.remoteOrganizations(), [acme.id, beta.id], 'in id order')
    t.equal(await storage.read.mirror.remote(gamma.id), undefined)

    // What recording a push does: decided on the remote as the transaction reads it.
    const pushed = { ...ours, last_pushed_commit: HEAD_A, last_pushed_at: now() }
    await storage.transaction(async (tx) => {
      const current = await tx.mirror.remote(acme.id)
      if (current?.created_at === ours.created_at) await tx.mirror.putRemote(acme.id, { ...current, last_pushed_commit: HEAD_A, last_pushed_at: pushed.last_pushed_at })
      t.same(await tx.mirror.remote(acme.id), pushed, 'a transaction reads its own write')
    })
    t.same(await storage.read.mirror.remote(acme.id), pushed, 'replaced whole')

    t.equal(await storage.transaction((tx) => tx.mirror.removeRemote(acme.id)), true)
    t.equal(await storage.transaction((tx) => tx.mirror.removeRemote(acme.id)), false, 'not there any more')
    t.equal(await storage.read.mirror.remote(acme.id), undefined)
    t.same(await storage.read.mirror.remoteOrganizations(), [beta.id])
    await t.rejects(storage.transaction((tx) => tx.mirror.putRemote(newId(), ours)), notFound, 'no such organization')
    await t.rejects(storage.transaction(async (tx) => {
      await tx.mirror.putRemote(gamma.id, remote('https://git.example.com/gamma.git'))
      await tx.mirror.removeRemote(beta.id)
      throw new Error('refused')
    }), { message: 'refused' })
    t.same(await storage.read.mirror.remoteOrganizations(), [beta.id], 'all or nothing')
  })

  t.test('mirror: the history\'s versions, deleted resources\' included, in pages by organization then number', async (t) => {
    const storage = await open(t)
    const acme = await withOrganization(storage, 'acme')
    const beta = await withOrganization(storage, 'beta')
    t.same(await storage.read.mirror.historyVersions(undefined, 10), { versions: [], next: undefined }, 'none yet')
    const shop = resource(acme.id, 'Shop')
    const theirs = resource(beta.id, 'Theirs')
    const expected = new Map<string, string[]>([[acme.id, []], [beta.id, []]])
    const add = async (of: ResourceRecord, number: number) => {
      const made = version(of, number)
      expected.get(of.organization_id)!.push(made.id)
      await journal(storage, of.organization_id === acme.id ? acme : beta, { change: 'version', resource: { ...of, last_number: number }, version: made })
    }
    await journal(storage, acme, { change: 'create', resource: shop })
    await journal(storage, beta, { change: 'create', resource: theirs })
    // Interleaved between the organizations, with other changes between the versions.
    for (let number = 1; number <= 3; number++) {
      await add(shop, number)
      await add(theirs, number)
      await journal(storage, acme, { change: 'update', before: shop, resource: { ...shop, description: `v${number}` } })
    }
    await journal(storage, acme, { change: 'delete', resource: shop })
    const order = [acme.id, beta.id].sort().flatMap((id) => expected.get(id)!)

    const whole = await storage.read.mirror.historyVersions(undefined, 100)
    t.same(whole.versions.map((v) => v.id), order, 'every version, a deleted resource\'s too, by organization then number')
    t.equal(whole.next, undefined, 'the history ends in the page')
    t.same(Object.keys(whole.versions[0]).sort(), ['checksum', 'digest', 'format', 'id', 'number', 'restored_from', 'source'], 'what a commit needs of it')
    for (const limit of [1, 2, 4, 6]) {
      const paged = await allHistoryVersions(storage, limit)
      t.same(paged.ids, order, `pages of ${limit}`)
      t.ok(paged.pages >= Math.ceil(order.length / limit), `${paged.pages} pages of ${limit}`)
    }
    const firstTwo = await storage.read.mirror.historyVersions(undefined, 2)
    t.same(firstTwo.versions.map((v) => v.id), order.slice(0, 2))
    t.ok(firstTwo.next, 'a full page says where it stopped')
    t.same((await storage.read.mirror.historyVersions(firstTwo.next, 100)).versions.map((v) => v.id), order.slice(2), 'the next page starts after it')
  })

  t.test('mirror: copied in as another storage numbered it, and appends number after it', async (t) => {
    // What `registry migrate` does: the history and what was still pending, under their own numbers.
    const source = await open(t)
    const acme = await withOrganization(source, 'acme')
    const shop = resource(acme.id, 'Shop')
    const at = '2026-03-01T12:00:00.000Z'
    await journal(source, acme, { change: 'create', resource: shop }, at)
    await journal(source, acme, { change: 'rebuild' }, at)
    await journal(source, acme, { change: 'version', resource: { ...shop, last_number: 1 }, version: version(shop, 1) }, at)
    await journal(source, acme, { change: 'delete', resource: shop }, at)
    const [first, ...rest] = await source.read.mirror.pending(100)
    await source.transaction((tx) => tx.mirror.markApplied(acme.id, [first.seq], { commit: HEAD_A, updated_at: at }))
    const history = await source.read.mirror.history(acme.id)
    const pending = await source.read.mirror.pendingOf(acme.id)
    t.same(pending, rest, 'the rebuild request is pending, with the rest')

    const target = await open(t)
    await target.transaction((tx) => tx.organizations.put(acme))
    await target.transaction((tx) => tx.mirror.copyIn(acme.id, history, pending))
    t.equal(JSON.stringify(await target.read.mirror.history(acme.id)), JSON.stringify(history), 'the history as it was, byte for byte')
    t.same(await target.read.mirror.pendingOf(acme.id), pending, 'the pending entries, their numbers kept')
    t.equal(await target.read.mirror.lastSeq(acme.id), history.at(-1)!.seq)

    const highest = Math.max(...pending.map((entry) => entry.seq))
    await journal(target, acme, { change: 'create', resource: resource(acme.id, 'Next') })
    const appended = (await target.read.mirror.pending(100)).at(-1)!
    t.ok(appended.seq > highest, `an append after the copy is numbered after it (${appended.seq} > ${highest})`)

    await t.rejects(target.transaction((tx) => tx.mirror.copyIn(acme.id, [history[0]], [])), { code: 'conflict' }, 'a history number taken')
    await t.rejects(target.transaction((tx) => tx.mirror.copyIn(acme.id, [], [pending[0]])), { code: 'conflict' }, 'a journal number taken')
    await t.rejects(target.transaction((tx) => tx.mirror.copyIn(newId(), history, [])), notFound, 'no such organization')
    t.equal((await target.read.mirror.history(acme.id)).length, history.length + 1, 'nothing written by the refusals')
  })

  t.test('search: terms by document checksum, a blind write that conflicts with nothing', async (t) => {
    const storage = await open(t)
    const checksum = `sha256:${'e'.repeat(64)}`
    const terms: SearchTerms = { title: 'Shop orders', description: 'Orders placed in the shop.', terms: ['/orders/{id}', 'refundOrder', 'payments'] }
    t.equal(await storage.read.search.getTerms(checksum), undefined)
    await storage.transaction(async (tx) => {
      await tx.search.putTerms(checksum, terms)
      t.same(await tx.search.getTerms(checksum), terms, 'a transaction reads its own write')
    })
    t.equal(JSON.stringify(await storage.read.search.getTerms(checksum)), JSON.stringify(terms), 'read back as written')
    // The same content gives the same terms: concurrent puts of one checksum all succeed, and others' too.
    const others = Array.from({ length: 6 }, (_, i) => `sha256:${String(i).repeat(64)}`)
    await Promise.all([checksum, ...others].map((key) => storage.transaction(async (tx) => {
      await tx.search.putTerms(key, terms)
      await tx.search.putTerms(key, terms)
    })))
    for (const key of others) t.same(await storage.read.search.getTerms(key), terms)
    t.same(await storage.read.search.getTerms(checksum), terms)
  })
}
