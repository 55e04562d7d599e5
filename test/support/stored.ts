/** What a storage holds, read whole through the port (tests look at everything; the domain reads pages). */
import type { ReadStores } from '../../src/storage/port.js'
import type { MirrorVersion, VersionRecord } from '../../src/storage/records.js'

/** Every stored version, by resource then number. */
export async function allVersions(read: ReadStores): Promise<VersionRecord[]> {
  const all: VersionRecord[] = []
  for (let page: VersionRecord[] = []; ;) {
    page = await read.versions.scan(all.at(-1), 100)
    all.push(...page)
    if (page.length < 100) return all
  }
}

/** Every version the git mirror's history holds, deleted resources' too. */
export async function mirroredVersions(read: ReadStores): Promise<MirrorVersion[]> {
  const all: MirrorVersion[] = []
  let after: Awaited<ReturnType<ReadStores['mirror']['historyVersions']>>['next']
  do {
    const page = await read.mirror.historyVersions(after, 100)
    all.push(...page.versions)
    after = page.next
  } while (after !== undefined)
  return all
}
