import type { RegistryIndex } from '../store/interfaces.js'
import type { ResourceRecord, VersionRecord } from '../store/records.js'
import { resourceView } from '../domain/views.js'

interface Serialized {
  current: VersionRecord | undefined
  ruleset: ResourceRecord | undefined
  json: string
}

/**
 * `{ "data": <resource view> }` as JSON, built again only when one of the records it is made of
 * changed. The index hands out the same record instance while a record is unchanged (lmdb's validated
 * cache), so instance identity is the test; a WeakMap lets unused entries go with their records.
 */
const serialized = new WeakMap<ResourceRecord, Serialized>()

export function resourceJson(index: RegistryIndex, resource: ResourceRecord): string {
  const current = index.getCurrentVersion(resource.id)
  const ruleset = resource.ruleset_id ? index.getResource(resource.ruleset_id) : undefined
  const hit = serialized.get(resource)
  if (hit && hit.current === current && hit.ruleset === ruleset) return hit.json
  const json = JSON.stringify({ data: resourceView(index, resource) })
  serialized.set(resource, { current, ruleset, json })
  return json
}
