/**
 * Splits a large OpenAPI document into parts a browser renderer can take. `planReference` decides the
 * parts once per document: one per tag (a tag with many operations, or whose operations reach many
 * components, in several consecutive pieces). Untagged operations are grouped by the first path
 * segment after the prefix all paths share (`/v1/accounts`, `/v1/charges`…), and webhooks form a group
 * of their own. `referencePart` then builds one part when it is asked for: a complete OpenAPI document
 * holding that part's operations and only the components they reach through `$ref`. Parts are built
 * on demand because the components they share are copied into each: all of Microsoft Graph's parts
 * together are 30 times the 47 MB document.
 *
 * A part keeps everything outside `paths` that applies to every operation (`info`, `servers`,
 * `security`, every security scheme); `discriminator.mapping` values are strings, not references, and
 * are not followed (a mapping of a base type would otherwise pull in every subtype).
 */
import { fragmentSegments } from './refs.js'

type Json = Record<string, unknown>

/** How large a part may grow: whichever limit is reached first closes it. */
export interface SplitLimits {
  /** Operations per part. */
  maxOperations: number
  /** Estimated JSON size of a part (its operations and the components they reach). */
  maxBytes: number
}

/**
 * Where a document keeps operations: `paths`, 3.1's `webhooks`, and `x-webhooks`, the extension 3.0
 * documents use for them (GitHub's 474 KB of webhooks; Scalar shows it as webhooks).
 */
const SECTIONS = ['paths', 'webhooks', 'x-webhooks'] as const
type Section = typeof SECTIONS[number]

/** One operation of the document: its section, its path (or webhook name) and method. */
export interface OperationKey {
  section: Section
  path: string
  method: string
}

export interface PlannedPart {
  /** The tag's name, the path prefix of untagged operations, or `Webhooks`. */
  name: string
  /** The tag's description (Markdown), when the document declares the tag with one. */
  description: string | null
  /** 1-based position and count, when the group is larger than one part. */
  piece: { index: number; of: number } | null
  operations: OperationKey[]
  /** Estimated JSON size of the part. */
  bytes: number
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']
/** Top-level members a part gets in its own form, or not at all. */
const REPLACED = new Set<string>([...SECTIONS, 'components', 'tags', 'x-tagGroups'])

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value)

/** One operation and what it needs from its path item. */
interface Operation extends OperationKey {
  /** Members of the path item other than operations (summary, parameters, servers…). */
  shared: Json
  value: unknown
}

/** `#/components/{kind}/{name}…` → `[kind, name]`; anything else (other pointers, anchors) → null. */
function componentOf(ref: string): [string, string] | null {
  const segments = fragmentSegments(ref)
  if (!segments || segments.length < 3 || segments[0] !== 'components') return null
  return [segments[1], segments[2]]
}

/** The components a value references directly (`kind/name` keys), iteratively, so depth is no risk. */
function directRefs(value: unknown, into: Set<string>): void {
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const node = stack.pop()
    if (Array.isArray(node)) {
      for (const item of node) if (item !== null && typeof item === 'object') stack.push(item)
    } else if (isObject(node)) {
      if (typeof node.$ref === 'string') {
        const component = componentOf(node.$ref)
        if (component) into.add(`${component[0]}/${component[1]}`)
      }
      for (const [key, child] of Object.entries(node)) {
        if (key === 'mapping' && isObject(child) && !('$ref' in child)) continue
        if (child !== null && typeof child === 'object') stack.push(child)
      }
    }
  }
}

/** The document's components, their direct references and sizes, each computed once. */
class Components {
  private readonly refs = new Map<string, string[]>()
  private readonly sizes = new Map<string, number>()

  constructor(private readonly components: Json) {}

  value(key: string): unknown {
    const slash = key.indexOf('/')
    const kind = this.components[key.slice(0, slash)]
    return isObject(kind) ? kind[key.slice(slash + 1)] : undefined
  }

  size(key: string): number {
    let size = this.sizes.get(key)
    if (size === undefined) this.sizes.set(key, size = JSON.stringify(this.value(key) ?? null).length)
    return size
  }

  /**
   * Adds `key` and everything it reaches to `closure`, except what `known` already holds; answers the
   * bytes added.
   */
  reach(key: string, closure: Set<string>, known?: Set<string>): number {
    let added = 0
    const stack = [key]
    while (stack.length > 0) {
      const next = stack.pop()!
      if (closure.has(next) || known?.has(next) || this.value(next) === undefined) continue
      closure.add(next)
      added += this.size(next)
      let direct = this.refs.get(next)
      if (!direct) {
        const found = new Set<string>()
        directRefs(this.value(next), found)
        this.refs.set(next, direct = [...found])
      }
      stack.push(...direct)
    }
    return added
  }
}

function operationsOf(doc: Json): Operation[] {
  const operations: Operation[] = []
  for (const section of SECTIONS) {
    const items = doc[section]
    if (!isObject(items)) continue
    for (const [path, item] of Object.entries(items)) {
      if (!isObject(item)) continue
      const shared: Json = {}
      for (const [key, value] of Object.entries(item)) if (!METHODS.includes(key)) shared[key] = value
      for (const method of METHODS) {
        if (isObject(item[method])) operations.push({ path, method, shared, value: item[method], section })
      }
    }
  }
  return operations
}

/** The leading path segments every path shares (`/v1`), so that untagged groups start after them. */
function commonPrefix(operations: Operation[]): string[] {
  let prefix: string[] | undefined
  for (const { path, section } of operations) {
    if (section !== 'paths') continue
    const segments = path.split('/').filter(Boolean)
    if (!prefix) {
      prefix = segments.slice(0, -1)
      continue
    }
    let same = 0
    while (same < prefix.length && same < segments.length - 1 && prefix[same] === segments[same]) same++
    prefix = prefix.slice(0, same)
  }
  return prefix ?? []
}

function groupName(operation: Operation, prefix: string[]): string {
  if (operation.section !== 'paths') return 'Webhooks'
  const tags = (operation.value as Json).tags
  if (Array.isArray(tags) && typeof tags[0] === 'string' && tags[0] !== '') return tags[0]
  const segments = operation.path.split('/').filter(Boolean)
  return `/${segments.slice(0, prefix.length + 1).join('/')}`
}

/** Operations by group, groups in the order of the document's `tags`, then as they first appear. */
function groupOperations(doc: Json, operations: Operation[]): Map<string, Operation[]> {
  const prefix = commonPrefix(operations)
  const found = new Map<string, Operation[]>()
  for (const operation of operations) {
    const name = groupName(operation, prefix)
    let list = found.get(name)
    if (!list) found.set(name, list = [])
    list.push(operation)
  }
  const ordered = new Map<string, Operation[]>()
  for (const tag of Array.isArray(doc.tags) ? doc.tags : []) {
    const name = isObject(tag) && typeof tag.name === 'string' ? tag.name : undefined
    const list = name === undefined ? undefined : found.get(name)
    if (name !== undefined && list) ordered.set(name, list)
  }
  for (const [name, list] of found) if (!ordered.has(name)) ordered.set(name, list)
  return ordered
}

/** What one more operation adds to a run: the components it reaches that the run has not, and bytes. */
function addition(operation: Operation, components: Components, run: Set<string>): { reached: Set<string>; bytes: number } {
  const own = new Set<string>()
  directRefs([operation.value, operation.shared], own)
  const reached = new Set<string>()
  let bytes = JSON.stringify(operation.value).length
  for (const key of own) bytes += components.reach(key, reached, run)
  return { reached, bytes }
}

/** Consecutive runs of a group's operations within the limits (a run has at least one operation). */
function pieces(operations: Operation[], components: Components, limits: SplitLimits): { run: Operation[]; bytes: number }[] {
  const runs: { run: Operation[]; bytes: number }[] = []
  let run: Operation[] = []
  let closure = new Set<string>()
  let bytes = 0
  for (const operation of operations) {
    let added = addition(operation, components, closure)
    // A part over its size closes to an operation that brings many components it does not have yet;
    // one that needs what the part already holds joins it (Stripe's operations each reach most of its
    // schemas: cutting at the size alone would give every operation a part of its own).
    const tooLarge = bytes + added.bytes > limits.maxBytes && added.bytes > limits.maxBytes / 10
    if (run.length > 0 && (run.length >= limits.maxOperations || tooLarge)) {
      runs.push({ run, bytes })
      run = []
      closure = new Set()
      bytes = 0
      added = addition(operation, components, closure)
    }
    for (const key of added.reached) closure.add(key)
    run.push(operation)
    bytes += added.bytes
  }
  if (run.length > 0) runs.push({ run, bytes })
  return runs
}

/** The parts of `doc` in reading order. */
export function planReference(doc: Json, limits: SplitLimits): PlannedPart[] {
  const components = new Components(isObject(doc.components) ? doc.components : {})
  const declared = declaredTags(doc)
  const parts: PlannedPart[] = []
  for (const [name, operations] of groupOperations(doc, operationsOf(doc))) {
    const description = declared.get(name)?.description
    const runs = pieces(operations, components, limits)
    runs.forEach(({ run, bytes }, i) => parts.push({
      name,
      description: typeof description === 'string' ? description : null,
      piece: runs.length > 1 ? { index: i + 1, of: runs.length } : null,
      operations: run.map(({ section, path, method }) => ({ section, path, method })),
      bytes,
    }))
  }
  return parts
}

function declaredTags(doc: Json): Map<string, Json> {
  const declared = new Map<string, Json>()
  for (const tag of Array.isArray(doc.tags) ? doc.tags : []) {
    if (isObject(tag) && typeof tag.name === 'string' && !declared.has(tag.name)) declared.set(tag.name, tag)
  }
  return declared
}

/**
 * One part of `doc` as a complete OpenAPI document: everything outside `paths` that applies to every
 * operation, the part's operations with their path items' shared members, its tag when the document
 * declares it, every security scheme and the components the operations reach.
 */
export function referencePart(doc: Json, part: Pick<PlannedPart, 'name' | 'operations'>): Json {
  const components = new Components(isObject(doc.components) ? doc.components : {})
  const sections: Record<Section, Json> = { paths: {}, webhooks: {}, 'x-webhooks': {} }
  const reached = new Set<string>()
  for (const { section, path, method } of part.operations) {
    const source = doc[section]
    const item = isObject(source) ? source[path] : undefined
    if (!isObject(item) || !isObject(item[method])) continue
    const target = sections[section]
    if (!target[path]) {
      const shared: Json = {}
      for (const [key, value] of Object.entries(item)) if (!METHODS.includes(key)) shared[key] = value
      target[path] = shared
      directRefs(shared, reached)
    }
    ;(target[path] as Json)[method] = item[method]
    directRefs(item[method], reached)
  }
  const closure = new Set<string>()
  for (const key of reached) components.reach(key, closure)
  const source = isObject(doc.components) ? doc.components : {}
  const partComponents: Json = {}
  if (isObject(source.securitySchemes)) partComponents.securitySchemes = source.securitySchemes
  for (const key of closure) {
    const slash = key.indexOf('/')
    const kind = (partComponents[key.slice(0, slash)] ??= {}) as Json
    kind[key.slice(slash + 1)] = components.value(key)
  }
  const result: Json = {}
  for (const [key, value] of Object.entries(doc)) {
    if (!REPLACED.has(key)) result[key] = value
    else if (key === 'paths') result.paths = sections.paths
  }
  result.paths ??= sections.paths
  for (const section of ['webhooks', 'x-webhooks'] as const) if (Object.keys(sections[section]).length > 0) result[section] = sections[section]
  const tag = declaredTags(doc).get(part.name)
  if (tag) result.tags = [tag]
  if (Object.keys(partComponents).length > 0) result.components = partComponents
  return result
}
