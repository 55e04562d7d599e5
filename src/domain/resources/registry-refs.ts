/**
 * Which registry schemas an API's `$ref`s may use, read from storage (never over the network): a schema
 * of the API's own organization, whatever its visibility, or a public schema of any organization; a
 * public reader (no key) gets public schemas only, so a public API's bundle never shows a private
 * schema. `versions/{n}` pins a version; `latest` is the schema's current version when the reference
 * is resolved (at upload, and again at each bundled read).
 */
import { RegistryError, type ProblemItem } from '../../errors.js'
import { parseRegistryRef, type RegistryDocuments } from '../../documents/registry-refs.js'
import type { Storage } from '../../storage/port.js'
import type { BlobStore, VersionRecord } from '../../storage/records.js'

/** Who reads: an organization (its own schemas and public ones), or anyone (public schemas only). */
export type Reader = { organizationId: string } | 'public'

const CANDIDATE = /\/@[a-z0-9]+(?:-[a-z0-9]+)*\/schemas\/[a-z0-9]+(?:-[a-z0-9]+)*\/(?:latest|versions\/[1-9][0-9]{0,8})(?![0-9])/g

/** Most registry schemas one document may refer to. */
export const MAX_REGISTRY_REFS = 50

export class RegistryReferences {
  constructor(private readonly storage: Storage, private readonly blobs: BlobStore) {}

  /**
   * The schemas the targets name, for this reader. Throws `invalid_document` naming each target that
   * names nothing the reader may use (one message for missing and not visible: nothing leaks).
   */
  async resolve(targets: string[], reader: Reader): Promise<RegistryDocuments> {
    const { documents, missing } = await this.lookUp(targets, reader)
    if (missing.length > 0) {
      const problems: ProblemItem[] = missing.map((target) => ({
        path: [], message: `unresolved $ref '${target}': no schema of this registry by that name and version that this API may use`,
      }))
      const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''
      throw new RegistryError('invalid_document', `the OpenAPI document is not valid: ${problems[0].message}${more}`, problems)
    }
    return documents
  }

  /**
   * The registry references a stored text seems to hold: found by their shape in the text, so a
   * description that mentions one counts too; `lookUp` then resolves what it can, and bundling reports
   * a real `$ref` that stayed unresolved.
   */
  candidates(text: string): string[] {
    return [...new Set(text.match(CANDIDATE) ?? [])].slice(0, MAX_REGISTRY_REFS)
  }

  /** The schemas the targets name for this reader, and the targets that name nothing it may use. */
  async lookUp(targets: string[], reader: Reader): Promise<{ documents: RegistryDocuments; missing: string[] }> {
    if (targets.length > MAX_REGISTRY_REFS) {
      throw new RegistryError('invalid_document', `the document refers to ${targets.length} registry schemas; at most ${MAX_REGISTRY_REFS} are resolved`)
    }
    const documents: RegistryDocuments = {}
    const missing: string[] = []
    for (const target of targets) {
      const found = await this.version(target, reader)
      if (!found) {
        missing.push(target)
        continue
      }
      const { version, org, slug } = found
      const text = (await this.blobs.get(version)).toString('utf8')
      documents[target] = { name: `${org}.${slug}.v${version.number}`, text, checksum: version.checksum }
    }
    return { documents, missing }
  }

  private async version(target: string, reader: Reader): Promise<{ version: VersionRecord; org: string; slug: string } | undefined> {
    const ref = parseRegistryRef(target)
    if (!ref) return undefined
    const { organizations, resources, versions } = this.storage.read
    const org = await organizations.bySlug(ref.org)
    const schema = org && await resources.bySlug(org.id, 'schema', ref.slug)
    if (!org || !schema) return undefined
    const own = reader !== 'public' && reader.organizationId === org.id
    if (!own && schema.visibility !== 'public') return undefined
    const version = ref.version === 'latest' ? await versions.current(schema.id) : await versions.get(schema.id, ref.version)
    return version ? { version, org: org.slug, slug: schema.slug } : undefined
  }
}
