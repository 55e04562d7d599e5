/**
 * `$ref`s from an OpenAPI document to JSON Schemas of this registry: `/@{org}/schemas/{slug}/latest` or
 * `/@{org}/schemas/{slug}/versions/{n}`, optionally followed by a `#/json/pointer` into the schema.
 * They are the one kind of reference outside a document that the registry resolves, and it resolves
 * them from its own storage (the domain reads the schemas; see domain/resources/registry-refs.ts), never over
 * the network.
 *
 * Bundling puts each referenced schema under `components/schemas/<org>.<slug>.v<n>` and points every
 * such `$ref` there; the schema's own internal references (`#/$defs/…`) are moved along with it. What
 * is validated and linted is the bundled document; what is stored is the document as uploaded.
 */
import type { ProblemItem } from '../errors.js'
import { encodePointer } from './pointer.js'
import { collectRefs, quote } from './refs.js'
import { parseDocumentText } from './parse.js'

const SLUG = '[a-z0-9]+(?:-[a-z0-9]+)*'
const REGISTRY_REF = new RegExp(`^/@(${SLUG})/schemas/(${SLUG})/(latest|versions/([1-9][0-9]{0,8}))(#.*)?$`)

export interface RegistryRef {
  org: string
  slug: string
  /** A version number, or `latest` (the schema's current version when it is resolved). */
  version: number | 'latest'
  /** The reference without its fragment: what is resolved. */
  target: string
  /** `#…` or empty. */
  fragment: string
}

export function parseRegistryRef(ref: string): RegistryRef | undefined {
  const match = REGISTRY_REF.exec(ref)
  if (!match) return undefined
  const fragment = match[5] ?? ''
  return {
    org: match[1], slug: match[2], version: match[4] ? Number(match[4]) : 'latest',
    target: fragment ? ref.slice(0, -fragment.length) : ref, fragment,
  }
}

/** The registry schemas a document refers to (each target once, in document order). */
export function registryRefTargets(doc: unknown): string[] {
  const targets = new Set<string>()
  for (const { ref } of collectRefs(doc)) {
    const parsed = parseRegistryRef(ref)
    if (parsed) targets.add(parsed.target)
  }
  return [...targets]
}

/** A quick look at canonical JSON: only a document with such a `$ref` is walked. */
export function mayHaveRegistryRefs(canonical: string): boolean {
  return canonical.includes('"$ref":"/@')
}

/** A referenced schema as the domain found it: where it goes in the bundle, and its stored text. */
export interface ResolvedSchema {
  /** `<org>.<slug>.v<n>`: its name under `components/schemas`. */
  name: string
  text: string
  /** Its canonical checksum (names the content: a slug can be reused after a delete). */
  checksum: string
}

/** Resolved schemas by target (the reference without fragment). */
export type RegistryDocuments = Record<string, ResolvedSchema>

/**
 * Bundles a parsed OpenAPI document in place: every registry `$ref` becomes an internal one to the
 * schema placed under `components/schemas`. Answers the problems (a target that was not resolved, a
 * fragment that is not a JSON pointer); the document is bundled as far as it could be.
 */
export function bundleRegistryRefs(doc: Record<string, unknown>, documents: RegistryDocuments): ProblemItem[] {
  const problems: ProblemItem[] = []
  const placed = new Map<string, string>()
  for (const { ref, path } of collectRefs(doc)) {
    const parsed = parseRegistryRef(ref)
    if (!parsed) continue
    const resolved = documents[parsed.target]
    if (!resolved) {
      problems.push({ path, message: `unresolved $ref ${quote(ref)}: no schema of this registry that this API may use` })
      continue
    }
    if (parsed.fragment !== '' && !parsed.fragment.startsWith('#/')) {
      problems.push({ path, message: `$ref ${quote(ref)}: only a JSON pointer fragment (#/…) may follow a registry schema` })
      continue
    }
    // Two targets may name one schema version (`latest` and its number): it is placed once.
    const placedKey = `${resolved.name} ${resolved.checksum}`
    let name = placed.get(placedKey)
    if (name === undefined) {
      name = place(doc, resolved)
      placed.set(placedKey, name)
    }
    holderAt(doc, path).$ref = `#/components/schemas/${encodePointer([name])}${parsed.fragment.slice(1)}`
  }
  return problems
}

/** Puts a schema under `components/schemas` (a free name) with its internal references moved along. */
function place(doc: Record<string, unknown>, schema: ResolvedSchema): string {
  const components = (doc.components ??= {}) as Record<string, unknown>
  const schemas = (components.schemas ??= {}) as Record<string, unknown>
  let name = schema.name
  for (let n = 2; Object.prototype.hasOwnProperty.call(schemas, name); n++) name = `${schema.name}-${n}`
  const parsed = parseDocumentText(schema.text).document as Record<string, unknown>
  const base = `#/components/schemas/${encodePointer([name])}`
  for (const site of collectRefs(parsed)) {
    if (site.ref === '#' || site.ref.startsWith('#/')) holderAt(parsed, site.path).$ref = base + site.ref.slice(1)
  }
  // Its `$id` would make its references resolve against another base: the bundle is one document.
  delete parsed.$id
  schemas[name] = parsed
  return name
}

function holderAt(doc: unknown, path: (string | number)[]): Record<string, unknown> {
  let node = doc
  for (const segment of path) node = (node as Record<string | number, unknown>)[segment]
  return node as Record<string, unknown>
}
