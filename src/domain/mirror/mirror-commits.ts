/**
 * What a mirror commit holds: the paths of a resource in the tree, its metadata file, the message and
 * its trailers. Pure functions of the journal entry, so the same history always gives the same commits.
 */
import type { MirrorVersion, ResourceKind, ResourceRecord, VersionRecord } from '../../storage/records.js'
import { settableFields } from '../resources/views.js'

/**
 * One change as the writer commits it: a journal entry, or a change replayed from the history (where a
 * version carries only what its commit needs). `resource` is the resource as it was at that change.
 */
export type MirrorChange = { at: string } & (
  | { change: 'create'; resource: ResourceRecord }
  | { change: 'update'; before: Pick<ResourceRecord, 'slug'>; resource: ResourceRecord }
  | { change: 'delete'; resource: ResourceRecord }
  | { change: 'version'; resource: ResourceRecord; version: MirrorVersion }
)

export const KIND_DIR: Record<ResourceKind, string> = { api: 'apis', schema: 'schemas', ruleset: 'rulesets' }
const DOCUMENT_NAME: Record<ResourceKind, string> = { api: 'openapi', schema: 'schema', ruleset: 'ruleset' }
/** `schema.json` is a schema's own document, so schemas and rulesets keep their metadata in `metadata.json`. */
export const METADATA_NAME: Record<ResourceKind, string> = { api: 'api.json', schema: 'metadata.json', ruleset: 'metadata.json' }

/** `openapi.json`, `schema.yaml`…: the stored bytes under the uploaded format. */
export function documentName(kind: ResourceKind, format: string): string {
  return `${DOCUMENT_NAME[kind]}.${format}`
}

/** Every document name a resource of this kind can have (a new format replaces the old file). */
export function documentNames(kind: ResourceKind): string[] {
  return ['json', 'yaml'].map((format) => documentName(kind, format))
}

/**
 * The metadata file: what a client sees of the resource, minus what changes with every version
 * (`updated_at`, `current`), so that the file changes only when the metadata does. No secrets: the
 * records hold none, and repository connections live elsewhere.
 */
export function metadataFile(resource: ResourceRecord): string {
  const view = { id: resource.id, ...settableFields(resource), created_at: resource.created_at }
  return `${JSON.stringify(view, null, 2)}\n`
}

const SOURCE_WORD: Record<VersionRecord['source'], string> = { upload: 'upload', restore: 'restore', github: 'sync', gitlab: 'sync' }

/** `apis/petstore: version 7 (upload)` and trailers. */
export function commitMessage(entry: MirrorChange): string {
  const { resource } = entry
  const path = `${KIND_DIR[resource.kind]}/${resource.slug}`
  const trailers = [`Resource-Id: ${resource.id}`]
  let subject: string
  switch (entry.change) {
    case 'create': subject = `${path}: created`; break
    case 'delete': subject = `${path}: deleted`; break
    case 'update':
      subject = entry.before.slug === resource.slug ? `${path}: metadata updated` : `${path}: renamed from ${KIND_DIR[resource.kind]}/${entry.before.slug}`
      break
    case 'version': {
      const { version } = entry
      subject = `${path}: version ${version.number} (${SOURCE_WORD[version.source]})`
      trailers.push(`Version-Id: ${version.id}`, `Checksum: ${version.checksum}`, `Source: ${version.source}`)
      if (version.restored_from) trailers.push(`Restored-From: ${version.restored_from}`)
      break
    }
  }
  return `${subject}\n\n${trailers.join('\n')}\n`
}

/**
 * Orders what the index alone knows of a history (resources and versions older than the mirror's
 * history): by time, a creation before its first version.
 */
export function historyOrder(a: MirrorChange, b: MirrorChange): number {
  if (a.at !== b.at) return a.at < b.at ? -1 : 1
  const rank = (entry: MirrorChange) => (entry.change === 'create' ? 0 : 1)
  if (rank(a) !== rank(b)) return rank(a) - rank(b)
  const number = (entry: MirrorChange) => (entry.change === 'version' ? entry.version.number : 0)
  if (number(a) !== number(b)) return number(a) - number(b)
  return a.resource.id < b.resource.id ? -1 : a.resource.id > b.resource.id ? 1 : 0
}
