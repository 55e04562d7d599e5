import type { ReadStores } from '../storage/port.js'
import type { ResourceRecord, VersionRecord } from '../storage/registry-records.js'
import { resourceViewOf, resourceViewRecords } from '../domain/resources/views.js'

interface Rendered {
  current: VersionRecord | undefined
  ruleset: ResourceRecord | undefined
  json: string
}

/**
 * Answers kept by the resource record they were rendered from. The records are read on every request
 * (another process, the CLI, may have changed them); LMDB's committed reads answer the same frozen
 * object for a record while its stored bytes are unchanged (docs/storage.md), so the same three
 * objects mean the same answer, and a changed record is a new object. Records that are not frozen
 * (PostgreSQL's, fresh on every read) are never kept.
 */
const rendered = new WeakMap<ResourceRecord, Rendered>()

/**
 * `{ "data": <resource view> }` as JSON text, sent as is (no response schema serialization). The view is
 * a pure function of the resource, its current version and its ruleset, all read for this request.
 */
export async function resourceJson(stores: ReadStores, resource: ResourceRecord): Promise<string> {
  const { current, ruleset } = await resourceViewRecords(stores, resource)
  const kept = rendered.get(resource)
  if (kept && kept.current === current && kept.ruleset === ruleset) return kept.json
  const json = JSON.stringify({ data: resourceViewOf(resource, current, ruleset) })
  if (Object.isFrozen(resource) && (!current || Object.isFrozen(current)) && (!ruleset || Object.isFrozen(ruleset))) {
    rendered.set(resource, { current, ruleset, json })
  }
  return json
}
