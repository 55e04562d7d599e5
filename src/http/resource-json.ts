import type { RegistryIndex } from '../store/interfaces.js'
import type { ResourceRecord } from '../store/records.js'
import { resourceView } from '../domain/views.js'

/**
 * `{ "data": <resource view> }` as JSON text, sent as is (no response schema serialization). It is built
 * on every request: the records it is made of may have been changed by another process (the CLI), and
 * the index no longer caches them (see lmdb-index.ts).
 */
export function resourceJson(index: RegistryIndex, resource: ResourceRecord): string {
  return JSON.stringify({ data: resourceView(index, resource) })
}
