import { rmSync } from 'node:fs'
import t from 'tap'
import { LmdbStorage } from '../../../src/storage/lmdb/storage.js'
import { tempDir } from '../../temp.js'
import { storageContract } from './contract.js'

storageContract(t, async (t) => {
  const directory = tempDir()
  // Bounded like production; the concurrent tests accept a writer that lost too often (409 conflict).
  const storage = new LmdbStorage(directory)
  t.teardown(async () => {
    await storage.close()
    rmSync(directory, { recursive: true, force: true })
  })
  return storage
})
