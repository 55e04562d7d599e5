import { rmSync } from 'node:fs'
import { LmdbStorage, type LmdbStorageOptions } from '../../../src/storage/lmdb/storage.js'
import type { ResourceRecord } from '../../../src/storage/records.js'
import { tempDir } from '../../temp.js'
import { organization, resource } from '../contract/contract.js'

/** A storage of its own with one organization and one API in it, closed and removed after the test. */
export async function storageWithApi(
  t: { teardown(fn: () => unknown): void }, options: LmdbStorageOptions = {},
): Promise<{ directory: string; storage: LmdbStorage; api: ResourceRecord }> {
  const directory = tempDir()
  const storage = new LmdbStorage(directory, options)
  t.teardown(async () => {
    await storage.close()
    rmSync(directory, { recursive: true, force: true })
  })
  const org = organization('acme')
  const api = resource(org.id, 'shop')
  await storage.transaction(async (tx) => {
    await tx.organizations.put(org)
    await tx.resources.create(api)
  })
  return { directory, storage, api }
}
