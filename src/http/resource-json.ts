import type { ReadStores } from '../storage/port.js'
import type { ResourceRecord } from '../storage/registry-records.js'
import { resourceView } from '../domain/resources/views.js'

/**
 * `{ "data": <resource view> }` as JSON text, sent as is (no response schema serialization). It is built
 * on every request: the records it is made of may have been changed by another process (the CLI), and
 * nothing caches them.
 */
export async function resourceJson(stores: ReadStores, resource: ResourceRecord): Promise<string> {
  return JSON.stringify({ data: await resourceView(stores, resource) })
}
