import { readdir, readFile } from 'node:fs/promises'
import { basename, extname, join, relative } from 'node:path'
import { parseDocumentText } from '../documents/parse.js'
import type { Actor } from '../domain/accounts/organizations.js'
import type { Registry } from '../domain/registry.js'
import { deriveSlug } from '../domain/resources/slugs.js'
import type { ResourceKind } from '../storage/registry-records.js'

const EXTENSIONS = new Set(['.json', '.yaml', '.yml'])

export interface ImportResult {
  file: string
  kind?: ResourceKind
  slug?: string
  outcome: 'created' | 'new-version' | 'unchanged' | 'failed' | 'skipped'
  version?: number
  error?: string
}

async function* walk(directory: string): AsyncGenerator<string> {
  const entries = await readdir(directory, { withFileTypes: true })
  entries.sort((a, b) => a.name.localeCompare(b.name))
  for (const entry of entries) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue
    const path = join(directory, entry.name)
    if (entry.isDirectory()) yield* walk(path)
    else if (entry.isFile() && EXTENSIONS.has(extname(entry.name).toLowerCase())) yield path
  }
}

export async function listImportFiles(directory: string): Promise<string[]> {
  const files: string[] = []
  for await (const file of walk(directory)) files.push(file)
  return files
}

/** What a parsed file is: OpenAPI (or Swagger, refused later with its reason), a ruleset, or a JSON Schema. */
export function classify(document: unknown): ResourceKind | undefined {
  if (!document || typeof document !== 'object' || Array.isArray(document)) return undefined
  const doc = document as Record<string, unknown>
  if ('openapi' in doc || 'swagger' in doc) return 'api'
  if ('rules' in doc || 'extends' in doc) return 'ruleset'
  if ('$schema' in doc || 'type' in doc || 'properties' in doc || '$defs' in doc || 'definitions' in doc) return 'schema'
  return undefined
}

/** Creates or updates one resource per file, named after the file; an unchanged file stores nothing. */
export async function importFile(registry: Registry, actor: Actor, root: string, file: string): Promise<ImportResult> {
  const name = relative(root, file)
  try {
    const text = await readFile(file, 'utf8')
    const kind = classify(parseDocumentText(text).document)
    if (!kind) return { file: name, outcome: 'skipped', error: 'not an OpenAPI document, JSON Schema or ruleset' }
    const slug = deriveSlug(name.slice(0, -extname(name).length), kind)
    const input = { body: text, shape: 'document' as const }
    const existing = await registry.storage.read.resources.bySlug(actor.organization.id, kind, slug)
    const resource = existing ?? (await registry.resources.create(actor, kind, {
      name: basename(file, extname(file)), slug, ...(kind === 'ruleset' ? { document: text } : {}),
    })).resource
    if (!existing && kind === 'ruleset') {
      return { file: name, kind, slug, outcome: 'created', version: (await registry.storage.read.versions.current(resource.id))?.number }
    }
    try {
      const { version, created } = await registry.uploads.upload(resource, input)
      return { file: name, kind, slug, outcome: created ? (existing ? 'new-version' : 'created') : 'unchanged', version: version.number }
    } catch (error) {
      // A resource made only for this file goes away again when its document is refused.
      if (!existing) await registry.resources.remove(actor, kind, resource.id)
      throw error
    }
  } catch (error) {
    const detail = (error as Error).message
    const items = (error as { errors?: { message: string }[] }).errors
    const first = items?.[0]?.message
    return { file: name, outcome: 'failed', error: first && !detail.includes(first) ? `${detail}: ${first}` : detail }
  }
}

