import t from 'tap'
import { PostgresStorage } from '../../../src/storage/postgres/storage.js'
import { postgresForFile } from '../../support/postgres.js'
import { storageContract } from './contract.js'

const server = await postgresForFile(t)
if (server) {
  storageContract(t, async (t) => {
    // One database per test: the same fresh, empty storage the LMDB run gets.
    const storage = await PostgresStorage.open(await server.createDatabase())
    t.teardown(() => storage.close())
    return storage
  })
}
