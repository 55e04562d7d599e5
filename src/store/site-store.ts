/**
 * What is left of the sites feature's LMDB store now that sites are on the storage port
 * (src/storage/lmdb/sites.ts): the delete hook of an API, UNTIL DELETION MOVES ONTO THE PORT.
 * `Resources.remove` still deletes through `LmdbIndex.deleteResource`, whose hooks run synchronously
 * inside its LMDB transaction; this one drops the API from every site listing it there, on the same
 * databases and keys the port's LMDB adapter uses (`SITE_DATABASES`), atomically with the delete.
 * Once deletion is a port transaction it calls `tx.sites.dropApi` instead, and this file goes.
 */
import type { ResourceRecord } from './records.js'
import type { RegistryIndex } from './interfaces.js'
import { SITE_DATABASES, siteKeys } from './layout.js'
import { LmdbIndex } from './lmdb-index.js'

/** A `Resources.deleteHooks` entry: an API being deleted leaves every site that listed it (their `updated_at` is `at()`). */
export function dropDeletedApiFromSites(index: RegistryIndex, at: () => string): (resource: ResourceRecord) => void {
  const db = LmdbIndex.require(index, 'sites').databases(SITE_DATABASES)
  return (resource) => {
    if (resource.kind !== 'api') return
    const updatedAt = at()
    for (const key of [...db.siteApis.getKeys(siteKeys.siteApiRange(resource.id))]) {
      const siteId = (key as string[])[1]
      const site = db.sites.get(siteId)
      if (site) db.sites.put(siteId, { ...site, api_ids: site.api_ids.filter((id: string) => id !== resource.id), updated_at: updatedAt })
      db.siteApis.remove(key)
    }
  }
}
