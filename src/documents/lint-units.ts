/**
 * An OpenAPI 3.x document cut into the parts a re-lint reuses findings by (docs/lint.md, "Re-linting
 * only what changed"): units (each entry of `paths`, of `webhooks` and of the `components` maps that
 * hold reusable objects), and the frame (everything else, with those maps emptied). A unit's findings
 * are a function of the frame, the unit and the units its `$ref`s reach (transitively), so its route
 * key hashes exactly those; a document this cannot describe exactly is refused (with the reason) and
 * gets a whole lint.
 */
import { hash } from 'node:crypto'
import { lookupPointer } from './pointer.js'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }
export type Segment = string | number

/** The `components` maps whose entries are units (`securitySchemes` stays in the frame: rules read it from anywhere). */
const UNIT_COMPONENTS = new Set(['schemas', 'responses', 'parameters', 'examples', 'requestBodies', 'headers', 'links', 'callbacks', 'pathItems'])
/** What `oas3-unused-component` looks at (spectral-rulesets' oasUnusedComponent). */
export const UNUSED_COMPONENT_TYPES = ['schemas', 'responses', 'parameters', 'examples', 'requestBodies', 'headers', 'links', 'callbacks']
/**
 * The operations of a path item, in the order of spectral:oas's getAllOperations (no `query`:
 * Spectral's list, not the project's).
 */
export const OPERATION_KEYS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options', 'trace']
/** A component name as OpenAPI allows it: written the same in a pointer, encoded or not. */
const SIMPLE_NAME = /^[A-Za-z0-9._-]+$/
/** A local `$ref` that Spectral's resolver and a plain split agree on (no percent-encoding, no URI syntax). */
const SIMPLE_LOCAL_REF = /^#(?:\/(?:[A-Za-z0-9._{}-]|~[01])*)*$/

export const FRAME = 'frame'
/** A container (`$`, `paths`, `components`, a components map): what is found there depends on every unit in it. */
export const WHOLE = 'whole'

export interface Unit {
  id: string
  path: string[]
  value: Json
  /** SHA-256 of the unit's JSON. */
  hash: string
  /** The units its `$ref`s point into (present or not). */
  reaches: Set<string>
}

export interface DocumentUnits {
  document: JsonObject
  frame: JsonObject
  frameHash: string
  units: Map<string, Unit>
  /** Every local `$ref` target as Spectral's resolver records it in its graph (decoded pointer). */
  refTargets: Set<string>
  /** The units the frame's own `$ref`s reach. */
  frameReaches: Set<string>
}

const isPlainObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value)
// One call a hash (no Hash object): the cut hashes a few thousand units and about as many keys.
const sha256 = (text: string) => hash('sha256', text, 'base64')
const unitId = (path: readonly string[]) => JSON.stringify(path)

/** The unit a path lies in, FRAME, or WHOLE for a container. */
export function routeOf(path: readonly Segment[]): string {
  if (path.length === 0) return WHOLE
  const head = path[0]
  if (head === 'paths' || head === 'webhooks') return path.length >= 2 ? unitId([head, String(path[1])]) : WHOLE
  if (head === 'components') {
    if (path.length === 1) return WHOLE
    if (!UNIT_COMPONENTS.has(String(path[1]))) return FRAME
    return path.length >= 3 ? unitId(['components', String(path[1]), String(path[2])]) : WHOLE
  }
  return FRAME
}

/** Reasons a document gets a whole lint; undefined when it can be cut into units. */
function unsupported(document: JsonObject, canonical: string): string | undefined {
  if (typeof document.openapi !== 'string' || !/^3\.[0-9]/.test(document.openapi)) return 'not OpenAPI 3.x'
  if ('$ref' in document) return 'a $ref at the root'
  for (const key of ['paths', 'webhooks', 'components'] as const) {
    if (key in document && !isPlainObject(document[key])) return `${key} is not an object`
  }
  const components = isPlainObject(document.components) ? document.components : {}
  for (const kind of UNIT_COMPONENTS) {
    if (!(kind in components)) continue
    const map = components[kind]
    if (!isPlainObject(map)) return `components.${kind} is not an object`
    if ('$ref' in map) return `a $ref as components.${kind}`
    if (!Object.keys(map).every((name) => SIMPLE_NAME.test(name))) return `a components.${kind} name that is not a plain name`
  }
  for (const key of ['paths', 'webhooks'] as const) {
    const map = isPlainObject(document[key]) ? document[key] : {}
    if ('$ref' in map) return `a $ref as ${key}`
    for (const item of Object.values(map)) {
      // The cross-document rules run over path items and operations as written: none may be a $ref.
      if (!isPlainObject(item)) continue
      if ('$ref' in item) return `a path item that is a $ref`
      if (OPERATION_KEYS.some((op) => isPlainObject(item[op]) && '$ref' in item[op])) return 'an operation that is a $ref'
    }
  }
  // Schemas that name themselves or others by URI are validated by Spectral's per-document Ajv, which
  // shares those names across the whole lint (validator-cache.ts).
  if (/"\$(?:id|schema|anchor|dynamicAnchor|dynamicRef|recursiveRef|recursiveAnchor)":/.test(canonical)) return 'a schema named by URI'
  if (/"\$ref":"(?!#)/.test(canonical)) return 'an external $ref'
  const draft04 = document.openapi.startsWith('3.0') || (typeof document.jsonSchemaDialect === 'string' && document.jsonSchemaDialect.includes('draft-04'))
  if (draft04 && canonical.includes('"id":"') && hasIdOutsideData(document)) return 'a draft-04 id'
  return undefined
}

/** Why a document gets a whole lint. */
export interface Refusal { refused: string }

const REF_REFUSED: Refusal = { refused: 'a $ref to a container, or written in a way the cut does not follow (percent-encoding, a URI)' }

const MISSING_TWICE: Refusal = { refused: 'a missing $ref target referred to more than once' }

/** Members whose members are names chosen by the author (each value may be a schema), not keywords. */
const NAME_MAPS = new Set(['properties', 'patternProperties', 'definitions', '$defs', 'dependencies', 'schemas', 'parameters', 'headers', 'content', 'responses', 'paths', 'callbacks', 'requestBodies', 'links', 'encoding'])
/** Members whose values are data, never a schema: an `id` inside them names nothing. */
const DATA_MEMBERS = new Set(['example', 'examples', 'default', 'enum', 'const'])

/**
 * A string `id` where a draft-04 schema could be (OpenAPI 3.0's example validators are draft 04, as
 * are 3.1's under a draft-04 `jsonSchemaDialect`; there `id` names a schema): anywhere but inside
 * data members and extensions. Conservative: an `id` of an
 * object that is no schema at all also counts.
 */
function hasIdOutsideData(value: Json, parentKey = ''): boolean {
  if (value === null || typeof value !== 'object') return false
  if (!Array.isArray(value) && typeof value.id === 'string') return true
  // In a map of names (`properties`, `schemas`…) a member called `example` is a schema like any other.
  const names = NAME_MAPS.has(parentKey)
  for (const [key, child] of Object.entries(value)) {
    if (child === null || typeof child !== 'object' || (!names && (DATA_MEMBERS.has(key) || key.startsWith('x-')))) continue
    if (hasIdOutsideData(child, Array.isArray(value) ? parentKey : key)) return true
  }
  return false
}

/** Cuts a parsed document into units and frame, or says why the document needs a whole lint. */
export function documentUnits(document: unknown, canonical: string): DocumentUnits | Refusal {
  if (!isPlainObject(document)) return { refused: 'not an object' }
  const refused = unsupported(document, canonical)
  if (refused !== undefined) return { refused }
  const units = new Map<string, Unit>()
  const refTargets = new Set<string>()
  const refs = new Map<string, ParsedRef>()
  const frame: JsonObject = { ...document }
  const add = (path: string[], value: Json): boolean => {
    const reaches = new Set<string>()
    if (!collectRefs(value, path, reaches, refTargets, refs)) return false
    const id = unitId(path)
    units.set(id, { id, path, value, hash: sha256(JSON.stringify(value)), reaches })
    return true
  }
  for (const key of ['paths', 'webhooks'] as const) {
    if (!isPlainObject(document[key])) continue
    frame[key] = {}
    for (const [name, value] of Object.entries(document[key])) if (!add([key, name], value)) return REF_REFUSED
  }
  if (isPlainObject(document.components)) {
    const components: JsonObject = { ...document.components }
    frame.components = components
    for (const kind of UNIT_COMPONENTS) {
      const map = document.components[kind]
      if (!isPlainObject(map)) continue
      components[kind] = {}
      for (const [name, value] of Object.entries(map)) if (!add(['components', kind, name], value)) return REF_REFUSED
    }
  }
  // $refs in the frame point into units as well (and count for unused components).
  const frameReaches = new Set<string>()
  if (!collectRefs(frame, [], frameReaches, refTargets, refs)) return REF_REFUSED
  if (missingTargetReferredTwice(document, refs)) return MISSING_TWICE
  return { document, frame, frameHash: frameHashOf(frame, refs), units, refTargets, frameReaches }
}

/**
 * Spectral reports a missing `$ref` target once, at the first reference its resolver met, whichever
 * unit that is in (spectral-core's formatResolverErrors keeps one `invalid-ref` per message, and the
 * message names the target). The re-lint keeps each unit's findings apart, so a missing target that
 * more than one reference is written to gets a whole lint; one reference's `invalid-ref` is its unit's
 * alone. Missing here means missing in the document as written: a target reached only through
 * another `$ref` counts as missing too (a whole lint, which is never wrong).
 */
function missingTargetReferredTwice(document: JsonObject, refs: Map<string, ParsedRef>): boolean {
  for (const ref of refs.values()) if (ref.sites > 1 && !lookupPointer(document, ref.target).found) return true
  return false
}

/**
 * The hash a memo's frame is compared by: the frame's JSON without `info`, unless a `$ref` points
 * into `info`. A release that bumps `info.version` (or edits its description) then keeps its memo.
 * Why no unit's findings depend on `info`: the rules that read it (`info-*`, `contact-properties`,
 * `license-url`, a ruleset's own rule given there) are given on `$` or `$.info`, and their findings
 * are the frame's, which every re-lint lints again; the other rules read their target, what its
 * `$ref`s reach (hence the exception), `tags`, `openapi`, `servers` and the security schemes, all
 * still hashed; and validation against the OpenAPI schema has no constraint between `info` and
 * another member of the document.
 */
function frameHashOf(frame: JsonObject, refs: Map<string, ParsedRef>): string {
  for (const ref of refs.values()) if (ref.target[0] === 'info') return sha256(JSON.stringify(frame))
  const { info: _info, ...hashed } = frame
  return sha256(JSON.stringify(hashed))
}

/**
 * The `$ref`s under a value as Spectral's resolver crawls them (json-ref-resolver's crawler): an object
 * with a string `$ref` is a reference and its other members are not crawled; a reference to its own
 * ancestor is skipped. False for a reference this cut cannot follow exactly (to a container).
 */
function collectRefs(value: Json, at: string[], reaches: Set<string>, targets: Set<string>, refs: Map<string, ParsedRef>): boolean {
  if (isPlainObject(value) && typeof value.$ref === 'string') return addRef(value.$ref, at, reaches, targets, refs)
  if (value === null || typeof value !== 'object') return true
  // Indexed loops: this walks every object of the document, and Object.entries would copy each one's members.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!collectRefsOf(value[i], String(i), at, reaches, targets, refs)) return false
    return true
  }
  for (const key of Object.keys(value)) if (!collectRefsOf(value[key], key, at, reaches, targets, refs)) return false
  return true
}

function collectRefsOf(child: Json, key: string, at: string[], reaches: Set<string>, targets: Set<string>, refs: Map<string, ParsedRef>): boolean {
  if (child === null || typeof child !== 'object') return true
  at.push(key)
  const ok = collectRefs(child, at, reaches, targets, refs)
  at.pop()
  return ok
}

/**
 * A local `$ref` read once per document (the same few targets are referred to thousands of times);
 * `sites`: how many references the crawler follows are written so.
 */
interface ParsedRef { target: string[]; route: string; pointer: string; sites: number }
const REFUSED_REF: ParsedRef = { target: [], route: WHOLE, pointer: '', sites: 0 }

function parseRef(ref: string): ParsedRef {
  if (!SIMPLE_LOCAL_REF.test(ref)) return REFUSED_REF
  const target = ref === '#' ? [] : ref.slice(2).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
  return { target, route: routeOf(target), pointer: `#/${target.join('/')}`, sites: 0 }
}

function addRef(ref: string, at: readonly string[], reaches: Set<string>, targets: Set<string>, refs: Map<string, ParsedRef>): boolean {
  let parsed = refs.get(ref)
  if (!parsed) refs.set(ref, parsed = parseRef(ref))
  const { target, route } = parsed
  if (route === WHOLE) return false
  if (route !== FRAME) reaches.add(route)
  const ancestor = target.length > 0 && target.every((segment, i) => at[i] === segment)
  if (!ancestor) {
    targets.add(parsed.pointer)
    parsed.sites += 1
  }
  return true
}

/**
 * The key of a unit's findings: the ruleset and frame (given), the unit's path and JSON, and every unit
 * it reaches with its JSON (or its absence). Units that reach one another (a strongly connected
 * component of the `$ref` graph) reach the same units; each component's key hashes its members and
 * the keys of the components it points to (a Merkle tree over the graph of components), so a change
 * anywhere a unit reaches changes its key, and the graph is walked once. Listing each unit's whole
 * closure took 64 ms on a 4.7 MB document whose schemas refer to each other deeply.
 */
export function routeKeys(cut: DocumentUnits): Map<string, string> {
  const keys = new Map<string, string>()
  const componentKeys: string[] = []
  /** The component of each unit seen so far, as an index into componentKeys. */
  const componentOf = new Map<string, number>()
  for (const component of stronglyConnected(cut)) {
    const members = new Set(component)
    const parts = component.map((id) => `${id}=${cut.units.get(id)!.hash}`).sort()
    const outside = new Set<string>()
    for (const id of component) {
      for (const reached of cut.units.get(id)!.reaches) {
        if (members.has(reached)) continue
        const index = componentOf.get(reached)
        outside.add(index === undefined ? `${reached}=absent` : `>${componentKeys[index]}`)
      }
    }
    const key = sha256(`${parts.join('\n')}\n${[...outside].sort().join('\n')}`)
    for (const id of component) componentOf.set(id, componentKeys.length)
    componentKeys.push(key)
    for (const id of component) keys.set(id, sha256(`${id}\n${key}`))
  }
  // In the units' order, as a memo's routes are listed.
  return new Map([...cut.units.keys()].map((id) => [id, keys.get(id)!]))
}

/**
 * The strongly connected components of the units' `$ref` graph (Tarjan's algorithm, without
 * recursion), each listed after every component it reaches.
 */
function* stronglyConnected(cut: DocumentUnits): Generator<string[]> {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const onStack = new Set<string>()
  const stack: string[] = []
  let next = 0
  for (const root of cut.units.keys()) {
    if (index.has(root)) continue
    const work: { id: string; reaches: Iterator<string> }[] = []
    const enter = (id: string) => {
      index.set(id, next)
      low.set(id, next)
      next += 1
      stack.push(id)
      onStack.add(id)
      work.push({ id, reaches: cut.units.get(id)!.reaches.values() })
    }
    enter(root)
    while (work.length > 0) {
      const frame = work[work.length - 1]
      const step = frame.reaches.next()
      if (!step.done) {
        const reached = step.value
        if (!cut.units.has(reached)) continue
        if (!index.has(reached)) enter(reached)
        else if (onStack.has(reached)) low.set(frame.id, Math.min(low.get(frame.id)!, index.get(reached)!))
        continue
      }
      work.pop()
      if (work.length > 0) {
        const parent = work[work.length - 1].id
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.id)!))
      }
      if (low.get(frame.id) !== index.get(frame.id)) continue
      const component: string[] = []
      let id: string
      do {
        id = stack.pop()!
        onStack.delete(id)
        component.push(id)
      } while (id !== frame.id)
      yield component
    }
  }
}

/** The units a set of units reaches, transitively, those included. */
export function closureOf(cut: DocumentUnits, ids: Iterable<string>): Set<string> {
  const seen = new Set<string>()
  const stack = [...ids]
  while (stack.length > 0) {
    const id = stack.pop()!
    if (seen.has(id)) continue
    const unit = cut.units.get(id)
    if (!unit) continue
    seen.add(id)
    stack.push(...unit.reaches)
  }
  return seen
}

/** The frame with these units put back in their places, in the document's order. */
export function partialDocument(cut: DocumentUnits, ids: Set<string>): JsonObject {
  const partial: JsonObject = { ...cut.frame }
  const place = (container: JsonObject, source: JsonObject, prefix: string[]) => {
    for (const [name, value] of Object.entries(source)) if (ids.has(unitId([...prefix, name]))) container[name] = value
  }
  for (const key of ['paths', 'webhooks'] as const) {
    if (!isPlainObject(cut.document[key])) continue
    const container: JsonObject = {}
    place(container, cut.document[key], [key])
    partial[key] = container
  }
  if (isPlainObject(cut.document.components)) {
    const components: JsonObject = { ...(cut.frame.components as JsonObject) }
    for (const kind of UNIT_COMPONENTS) {
      const map = cut.document.components[kind]
      if (!isPlainObject(map)) continue
      const container: JsonObject = {}
      place(container, map, ['components', kind])
      components[kind] = container
    }
    partial.components = components
  }
  return partial
}
