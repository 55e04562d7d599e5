/**
 * The LMDB adapter's commit queues (issue 14, finding 7): transactions of one lane (one organization in
 * the registry) run one at a time, lanes run side by side. With one queue for the whole process, another
 * organization's upload waited behind every commit of one key's burst.
 */
import { rmSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { LmdbStorage } from '../../../src/storage/lmdb/storage.js'
import { tempDir } from '../../temp.js'
import { appendNext, organization, resource } from '../contract/contract.js'

function open(t: Test, attempts?: number) {
  const directory = tempDir()
  const storage = new LmdbStorage(directory, { attempts })
  t.teardown(async () => {
    await storage.close()
    rmSync(directory, { recursive: true, force: true })
  })
  return { storage }
}

t.test("a lane's transaction does not wait behind another lane's queue; one lane's run in order", async (t) => {
  const { storage } = open(t)
  const acme = organization('acme')
  const other = organization('other')
  await storage.transaction(async (tx) => {
    await tx.organizations.put(acme)
    await tx.organizations.put(other)
  })
  let release!: () => void
  const held = new Promise<void>((resolve) => { release = resolve })
  const done: string[] = []
  // acme's first transaction is held open; its second waits for it.
  const first = storage.transaction(async (tx) => {
    await held
    await tx.resources.create(resource(acme.id, 'first'))
  }, acme.id).then(() => done.push('acme 1'))
  const second = storage.transaction((tx) => tx.resources.create(resource(acme.id, 'second')), acme.id)
    .then(() => done.push('acme 2'))
  const theirs = storage.transaction((tx) => tx.resources.create(resource(other.id, 'theirs')), other.id)
    .then(() => done.push('other'))
  // Bounded, so that a queue shared by every lane shows as a failure, not as a test that hangs.
  await Promise.race([theirs, sleep(10_000, undefined, { ref: false })])
  t.same(done, ['other'], "the other organization's transaction committed while acme's queue was held")
  t.ok(await storage.read.resources.bySlug(other.id, 'api', 'theirs'), 'and its write is there')
  release()
  await Promise.all([first, second, theirs])
  t.same(done, ['other', 'acme 1', 'acme 2'], "acme's transactions ran in the order they were started")
  t.equal(storage.activeLanes, 0, 'idle lanes are forgotten')
})

async function withShop(storage: LmdbStorage) {
  const acme = organization('acme')
  const shop = resource(acme.id, 'shop')
  await storage.transaction(async (tx) => {
    await tx.organizations.put(acme)
    await tx.resources.create(shop)
  })
  return { acme, shop }
}

const numbers = (versions: { number: number }[]) => versions.map((v) => v.number).sort((a, b) => a - b)

t.test('20 concurrent appends in one lane run one at a time: none gives up with 409', async (t) => {
  const { storage } = open(t)
  const { acme, shop } = await withShop(storage)
  // With the default 10 attempts, 20 optimistic transactions at once conflicted and some gave up.
  const appended = await Promise.all(Array.from({ length: 20 }, () => storage.transaction((tx) => appendNext(tx, shop.id), acme.id)))
  t.same(numbers(appended), Array.from({ length: 20 }, (_, i) => i + 1))
})

t.test('appends to one resource from two lanes are checked at commit and run again: gapless', async (t) => {
  const { storage } = open(t, 1_000)
  const { shop } = await withShop(storage)
  // Two lanes on one resource (an operator's tool and a request, say) do conflict, and run again.
  const appended = await Promise.all(Array.from({ length: 10 }, (_, i) => storage.transaction((tx) => appendNext(tx, shop.id), i % 2 ? 'a' : 'b')))
  t.same(numbers(appended), Array.from({ length: 10 }, (_, i) => i + 1))
  t.equal((await storage.read.resources.get(shop.id))?.last_number, 10)
})
