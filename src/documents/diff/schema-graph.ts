/**
 * Comparing schemas, seeing through `$ref`s without comparing a referenced schema more than once.
 *
 * A node compares two schemas on one side (see checks.ts): the changes found in them up to the next
 * `$ref`, and an edge to the node of each pair of referenced schemas. A component that a hundred
 * operations use is one node, compared once; an operation's changes are those of every node reachable
 * from its schemas. Cycles (a schema that contains itself) are just cycles in the graph.
 */
import { unescapeSegment } from '../pointer.js'
import { CHECKS, classify, type Check, type Side } from './checks.js'
import { child, childPointer, deepEqual, hasOwn, isObject, member, refOf, shown, type JsonDocument, type JsonObject, type Loc } from './json.js'
import type { ChangeKind, Classification } from './types.js'

/** A change found in a node, before it is placed at an operation. */
export interface LocalChange {
  kind: ChangeKind
  pointer: string
  check: string
  classification: Classification
  /** What changed, naming the schema and property (`property \`Pet.name\` was removed`). */
  message: string
}

export interface Edge {
  side: Side
  before: Loc
  after: Loc
  /** The name the target's changes are given when it is no component (the path that led there). */
  name: string
  target?: SchemaNode
}

export interface SchemaNode {
  changes: LocalChange[]
  edges: Edge[]
}

/** Schema keywords that only document (never change what is valid). */
const ANNOTATIONS = new Set(['title', 'description', 'example', 'examples', 'externalDocs', 'xml', '$comment', '$id', '$anchor', '$dynamicAnchor'])

/** Keywords holding one subschema whose effect on validity the diff does not judge. */
const OPAQUE_SUBSCHEMAS = ['not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties', 'additionalItems']
/** Keywords holding a map of subschemas, likewise. */
const OPAQUE_SUBSCHEMA_MAPS = ['patternProperties', 'dependentSchemas']

/** Keywords compared by the walk below; any other keyword that differs is `schema-changed`. */
const COMPARED = new Set([
  ...ANNOTATIONS, ...OPAQUE_SUBSCHEMAS, ...OPAQUE_SUBSCHEMA_MAPS,
  'type', 'nullable', 'format', 'enum', 'const', 'multipleOf', 'pattern', 'uniqueItems', 'properties', 'required',
  'additionalProperties', 'items', 'prefixItems', 'allOf', 'anyOf', 'oneOf', 'discriminator', 'default', 'deprecated',
  'readOnly', 'writeOnly', '$defs', 'definitions', '$ref', 'exclusiveMinimum', 'exclusiveMaximum',
])

/** Limits where a larger number allows more (`max…`) or fewer (`min…`) values. */
const UPPER_LIMITS = ['maximum', 'maxLength', 'maxItems', 'maxProperties', 'maxContains']
const LOWER_LIMITS = ['minimum', 'minLength', 'minItems', 'minProperties', 'minContains']
for (const keyword of [...UPPER_LIMITS, ...LOWER_LIMITS]) COMPARED.add(keyword)

/** Formats where one allows every value of the other. */
const WIDER_FORMAT: Record<string, string> = { int32: 'int64', float: 'double' }

const UNION_KEYWORDS = ['anyOf', 'oneOf'] as const

function nodeKey(side: Side, before: string, after: string): string {
  return `${side}\u0000${before}\u0000${after}`
}

/** The name of a component schema from its pointer (`/components/schemas/Pet` is `Pet`), else ''. */
export function componentName(ptr: string): string {
  const match = /^\/(?:components\/schemas|definitions|\$defs)\/([^/]+)$/.exec(ptr)
  return match ? unescapeSegment(match[1]) : ''
}

export class SchemaGraph {
  readonly #nodes = new Map<string, SchemaNode>()
  /** Pointers of the schemas compared for some operation (not as unused components), per document. */
  readonly #reachedBefore = new Set<string>()
  readonly #reachedAfter = new Set<string>()

  constructor(readonly before: JsonDocument, readonly after: JsonDocument) {}

  /** The node comparing two schemas on one side; `name` names its changes when it is no component. */
  node(side: Side, before: Loc, after: Loc, name: string): SchemaNode {
    const key = nodeKey(side, before.ptr, after.ptr)
    let node = this.#nodes.get(key)
    if (!node) {
      node = { changes: [], edges: [] }
      this.#nodes.set(key, node)
      if (side !== 'unused') {
        this.#reachedBefore.add(before.ptr)
        this.#reachedAfter.add(after.ptr)
      }
      const own = componentName(after.ptr) || componentName(before.ptr)
      new SchemaWalk(this, node, side, own || name).walk(before, after, '')
    }
    return node
  }

  /** True when an operation reaches the schema at `before` (in the old document) or `after` (in the new one). */
  reaches(before: string, after: string): boolean {
    return this.#reachedBefore.has(before) || this.#reachedAfter.has(after)
  }

  /**
   * Builds every node reachable from `roots` and answers those whose closure holds a change: only
   * they are visited when changes are collected per operation.
   */
  changedClosures(roots: SchemaNode[]): Set<SchemaNode> {
    const seen = new Set<SchemaNode>(roots)
    const queue = [...roots]
    const parents = new Map<SchemaNode, SchemaNode[]>()
    const changed: SchemaNode[] = []
    for (let i = 0; i < queue.length; i++) {
      const node = queue[i]
      if (node.changes.length > 0) changed.push(node)
      for (const edge of node.edges) {
        edge.target ??= this.node(edge.side, edge.before, edge.after, edge.name)
        const list = parents.get(edge.target)
        if (list) list.push(node)
        else parents.set(edge.target, [node])
        if (!seen.has(edge.target)) {
          seen.add(edge.target)
          queue.push(edge.target)
        }
      }
    }
    const dirty = new Set<SchemaNode>(changed)
    for (let i = 0; i < changed.length; i++) {
      for (const parent of parents.get(changed[i]) ?? []) {
        if (!dirty.has(parent)) {
          dirty.add(parent)
          changed.push(parent)
        }
      }
    }
    return dirty
  }

  /** Every change reachable from `root` through nodes in `dirty`, each node once per `visited`. */
  static collect(root: SchemaNode, dirty: Set<SchemaNode>, visited: Set<SchemaNode>, emit: (change: LocalChange) => void): void {
    if (!dirty.has(root) || visited.has(root)) return
    visited.add(root)
    const queue = [root]
    for (let i = 0; i < queue.length; i++) {
      const node = queue[i]
      for (const change of node.changes) emit(change)
      for (const edge of node.edges) {
        const target = edge.target
        if (target && dirty.has(target) && !visited.has(target)) {
          visited.add(target)
          queue.push(target)
        }
      }
    }
  }
}

function typeSet(schema: JsonObject): Set<string> | undefined {
  const type = member(schema, 'type')
  let types: Set<string> | undefined
  if (typeof type === 'string') types = new Set([type])
  else if (Array.isArray(type)) types = new Set(type.filter((t): t is string => typeof t === 'string'))
  if (member(schema, 'nullable') === true) (types ??= new Set()).add('null')
  return types
}

function list(values: Iterable<string>): string {
  return [...values].join(', ')
}

/** The values an `enum` or `const` allows, by their JSON text, or undefined when there is neither. */
function allowedValues(schema: JsonObject, ptr: string): Map<string, { value: unknown; ptr: string }> | undefined {
  const values = new Map<string, { value: unknown; ptr: string }>()
  const enumValues = member(schema, 'enum')
  if (Array.isArray(enumValues)) {
    enumValues.forEach((value, i) => values.set(JSON.stringify(value), { value, ptr: `${ptr}/enum/${i}` }))
  } else if (hasOwn(schema, 'const')) {
    values.set(JSON.stringify(schema.const), { value: schema.const, ptr: `${ptr}/const` })
  } else {
    return undefined
  }
  return values
}

/** The walk of one node: compares two schemas in lock-step, stopping at `$ref`s (edges). */
class SchemaWalk {
  constructor(
    private readonly graph: SchemaGraph,
    private readonly node: SchemaNode,
    private readonly side: Side,
    private readonly name: string,
  ) {}

  private subject(path: string): string {
    const full = `${this.name}${path}`.replace(/^\./, '')
    return full === '' ? 'the schema' : `\`${full}\``
  }

  private report(check: Check, kind: ChangeKind, pointer: string, message: string, side: Side = this.side): void {
    this.node.changes.push({ kind, pointer, check: check.id, classification: classify(check, side), message })
  }

  walk(before: Loc, after: Loc, path: string, side: Side = this.side): void {
    const b = before.node
    const a = after.node
    if (typeof b === 'boolean' || typeof a === 'boolean' || !isObject(b) || !isObject(a)) {
      this.compareOddSchemas(before, after, path, side)
      return
    }
    const bRef = refOf(b)
    const aRef = refOf(a)
    if (bRef !== undefined || aRef !== undefined) {
      this.follow(before, after, bRef, aRef, path, side)
      return
    }
    if (this.compareUnion(before, after, path, side)) return
    this.compareTypes(b, a, before, after, path, side)
    this.compareFormat(b, a, before, after, path, side)
    this.compareValues(b, a, before, after, path, side)
    this.compareLimits(b, a, before, after, path, side)
    this.compareObject(before, after, path, side)
    this.compareArrays(before, after, path, side)
    this.compareComposition(before, after, path, side)
    this.compareFlags(b, a, after, path, side)
    this.compareRest(before, after, path, side)
  }

  /** `true`, `false` or something that is not a schema on either side. */
  private compareOddSchemas(before: Loc, after: Loc, path: string, side: Side): void {
    if (deepEqual(before.node, after.node)) return
    const open = (v: unknown) => v === true || (isObject(v) && Object.keys(v).length === 0)
    if (open(after.node)) this.report(CHECKS.constraintRelaxed, 'changed', after.ptr, `${this.subject(path)} accepts any value`, side)
    else if (after.node === false) this.report(CHECKS.constraintTightened, 'changed', after.ptr, `${this.subject(path)} accepts no value`, side)
    else this.report(CHECKS.schemaChanged, 'changed', after.ptr, `${this.subject(path)} changed`, side)
  }

  /** Either side is a `$ref`: an edge to the node of the two schemas they lead to. */
  private follow(before: Loc, after: Loc, bRef: string | undefined, aRef: string | undefined, path: string, side: Side): void {
    const bTarget = bRef === undefined ? before : this.graph.before.resolve(bRef)
    const aTarget = aRef === undefined ? after : this.graph.after.resolve(aRef)
    if (bTarget === null || aTarget === null) {
      if (bRef === aRef) return
      const what = (ref: string | undefined) => (ref === undefined ? 'an inline schema' : shown(ref, 120))
      this.report(CHECKS.externalReferenceChanged, 'changed', after.ptr, `${this.subject(path)} refers to ${what(aRef)} instead of ${what(bRef)}`, side)
      return
    }
    this.node.edges.push({ side, before: bTarget, after: aTarget, name: `${this.name}${path}` })
    // Siblings of a `$ref` (OpenAPI 3.1) that only document.
    if (bRef !== undefined && aRef !== undefined) this.compareAnnotations(before, after, path, side)
  }

  private compareTypes(b: JsonObject, a: JsonObject, before: Loc, after: Loc, path: string, side: Side): void {
    const bTypes = typeSet(b)
    const aTypes = typeSet(a)
    const subject = () => this.subject(path)
    const pointer = hasOwn(a, 'type') ? `${after.ptr}/type` : after.ptr
    if (bTypes === undefined && aTypes === undefined) return
    if (bTypes === undefined) {
      this.report(CHECKS.typeNarrowed, 'added', pointer, `${subject()} must now be of type ${list(aTypes!)}`, side)
      return
    }
    if (aTypes === undefined) {
      this.report(CHECKS.typeWidened, 'removed', `${before.ptr}/type`, `${subject()} is no longer restricted to type ${list(bTypes)}`, side)
      return
    }
    if (bTypes.has('null') !== aTypes.has('null')) {
      const added = aTypes.has('null')
      const nullPointer = hasOwn(a, 'nullable') || hasOwn(b, 'nullable') ? (added ? `${after.ptr}/nullable` : `${before.ptr}/nullable`) : pointer
      this.report(added ? CHECKS.nullableAdded : CHECKS.nullableRemoved, added ? 'added' : 'removed', nullPointer,
        `${subject()} ${added ? 'may now be null' : 'may no longer be null'}`, side)
    }
    const removed = [...bTypes].filter((t) => t !== 'null' && !aTypes.has(t) && !(t === 'integer' && aTypes.has('number')))
    const added = [...aTypes].filter((t) => t !== 'null' && !bTypes.has(t) && !(t === 'integer' && bTypes.has('number')))
    // integer → number allows more; number → integer fewer.
    const widenedToNumber = bTypes.has('integer') && !bTypes.has('number') && aTypes.has('number')
    const narrowedToInteger = bTypes.has('number') && !aTypes.has('number') && aTypes.has('integer')
    const from = list([...bTypes].filter((t) => t !== 'null'))
    const to = list([...aTypes].filter((t) => t !== 'null'))
    if (narrowedToInteger && removed.length === 1 && added.length <= 1) {
      this.report(CHECKS.typeNarrowed, 'changed', pointer, `type of ${subject()} changed from ${from} to ${to}`, side)
    } else if (removed.length > 0 && added.length > 0) {
      this.report(CHECKS.typeChanged, 'changed', pointer, `type of ${subject()} changed from ${from} to ${to}`, side)
    } else if (removed.length > 0) {
      this.report(CHECKS.typeNarrowed, 'changed', pointer, `${subject()} no longer allows type ${list(removed)}`, side)
    } else if (added.length > 0 || widenedToNumber) {
      this.report(CHECKS.typeWidened, 'changed', pointer, `${subject()} now also allows type ${list(added.length > 0 ? added : ['number'])}`, side)
    }
  }

  private compareFormat(b: JsonObject, a: JsonObject, before: Loc, after: Loc, path: string, side: Side): void {
    const bFormat = member(b, 'format')
    const aFormat = member(a, 'format')
    if (bFormat === aFormat) return
    const subject = () => this.subject(path)
    if (bFormat === undefined) {
      this.report(CHECKS.formatTightened, 'added', `${after.ptr}/format`, `${subject()} must now have format ${shown(aFormat)}`, side)
    } else if (aFormat === undefined) {
      this.report(CHECKS.formatRelaxed, 'removed', `${before.ptr}/format`, `${subject()} no longer has format ${shown(bFormat)}`, side)
    } else {
      const check = typeof bFormat === 'string' && WIDER_FORMAT[bFormat] === aFormat ? CHECKS.formatRelaxed
        : typeof aFormat === 'string' && WIDER_FORMAT[aFormat] === bFormat ? CHECKS.formatTightened
          : CHECKS.formatChanged
      this.report(check, 'changed', `${after.ptr}/format`, `format of ${subject()} changed from ${shown(bFormat)} to ${shown(aFormat)}`, side)
    }
  }

  /** `enum` and `const`, as sets of allowed values. */
  private compareValues(b: JsonObject, a: JsonObject, before: Loc, after: Loc, path: string, side: Side): void {
    const bValues = allowedValues(b, before.ptr)
    const aValues = allowedValues(a, after.ptr)
    if (!bValues && !aValues) return
    const subject = () => this.subject(path)
    if (!bValues) {
      this.report(CHECKS.enumAdded, 'added', hasOwn(a, 'enum') ? `${after.ptr}/enum` : `${after.ptr}/const`,
        `${subject()} is now limited to ${shown([...aValues!.values()].map((v) => v.value), 120)}`, side)
      return
    }
    if (!aValues) {
      this.report(CHECKS.enumRemoved, 'removed', hasOwn(b, 'enum') ? `${before.ptr}/enum` : `${before.ptr}/const`,
        `${subject()} is no longer limited to a list of values`, side)
      return
    }
    for (const [key, { value, ptr }] of bValues) {
      if (!aValues.has(key)) this.report(CHECKS.enumValueRemoved, 'removed', ptr, `${subject()} no longer allows the value ${shown(value)}`, side)
    }
    for (const [key, { value, ptr }] of aValues) {
      if (!bValues.has(key)) this.report(CHECKS.enumValueAdded, 'added', ptr, `${subject()} allows the new value ${shown(value)}`, side)
    }
  }

  private compareLimits(b: JsonObject, a: JsonObject, before: Loc, after: Loc, path: string, side: Side): void {
    const subject = () => this.subject(path)
    const bound = (keyword: string, upper: boolean) => {
      const bValue = member(b, keyword)
      const aValue = member(a, keyword)
      if (bValue === aValue || (typeof bValue !== 'number' && bValue !== undefined) || (typeof aValue !== 'number' && aValue !== undefined)) {
        if (!deepEqual(bValue, aValue)) this.report(CHECKS.schemaChanged, 'changed', `${after.ptr}/${keyword}`, `${keyword} of ${subject()} changed`, side)
        return
      }
      if (bValue === undefined) {
        this.report(CHECKS.constraintTightened, 'added', `${after.ptr}/${keyword}`, `${subject()} gained ${keyword} ${aValue}`, side)
      } else if (aValue === undefined) {
        this.report(CHECKS.constraintRelaxed, 'removed', `${before.ptr}/${keyword}`, `${keyword} ${bValue} of ${subject()} was removed`, side)
      } else {
        const tighter = upper ? (aValue as number) < bValue : (aValue as number) > bValue
        this.report(tighter ? CHECKS.constraintTightened : CHECKS.constraintRelaxed, 'changed', `${after.ptr}/${keyword}`,
          `${keyword} of ${subject()} changed from ${bValue} to ${aValue}`, side)
      }
    }
    for (const keyword of UPPER_LIMITS) bound(keyword, true)
    for (const keyword of LOWER_LIMITS) bound(keyword, false)
    // exclusiveMinimum/Maximum: a number (JSON Schema 2019+, OpenAPI 3.1) or a flag on minimum/maximum (3.0).
    for (const [keyword, upper] of [['exclusiveMaximum', true], ['exclusiveMinimum', false]] as const) {
      const bValue = member(b, keyword)
      const aValue = member(a, keyword)
      if (bValue === aValue) continue
      if (typeof bValue === 'boolean' || typeof aValue === 'boolean') {
        const was = bValue === true
        const is = aValue === true
        if (was === is) continue
        this.report(is ? CHECKS.constraintTightened : CHECKS.constraintRelaxed, 'changed', `${after.ptr}/${keyword}`,
          `${upper ? 'maximum' : 'minimum'} of ${subject()} is ${is ? 'now' : 'no longer'} exclusive`, side)
      } else {
        bound(keyword, upper)
      }
    }
    const bMultiple = member(b, 'multipleOf')
    const aMultiple = member(a, 'multipleOf')
    if (bMultiple !== aMultiple) {
      if (bMultiple === undefined) this.report(CHECKS.constraintTightened, 'added', `${after.ptr}/multipleOf`, `${subject()} must now be a multiple of ${shown(aMultiple)}`, side)
      else if (aMultiple === undefined) this.report(CHECKS.constraintRelaxed, 'removed', `${before.ptr}/multipleOf`, `${subject()} no longer has to be a multiple of ${shown(bMultiple)}`, side)
      else {
        const divides = (x: unknown, y: unknown) => typeof x === 'number' && typeof y === 'number' && y !== 0 && Number.isInteger(x / y)
        const check = divides(aMultiple, bMultiple) ? CHECKS.constraintTightened : divides(bMultiple, aMultiple) ? CHECKS.constraintRelaxed : CHECKS.constraintChanged
        this.report(check, 'changed', `${after.ptr}/multipleOf`, `multipleOf of ${subject()} changed from ${shown(bMultiple)} to ${shown(aMultiple)}`, side)
      }
    }
    const bPattern = member(b, 'pattern')
    const aPattern = member(a, 'pattern')
    if (bPattern !== aPattern) {
      if (bPattern === undefined) this.report(CHECKS.constraintTightened, 'added', `${after.ptr}/pattern`, `${subject()} must now match ${shown(aPattern)}`, side)
      else if (aPattern === undefined) this.report(CHECKS.constraintRelaxed, 'removed', `${before.ptr}/pattern`, `${subject()} no longer has to match ${shown(bPattern)}`, side)
      else this.report(CHECKS.constraintChanged, 'changed', `${after.ptr}/pattern`, `pattern of ${subject()} changed from ${shown(bPattern)} to ${shown(aPattern)}`, side)
    }
    const bUnique = member(b, 'uniqueItems') === true
    const aUnique = member(a, 'uniqueItems') === true
    if (bUnique !== aUnique) {
      this.report(aUnique ? CHECKS.constraintTightened : CHECKS.constraintRelaxed, 'changed', aUnique ? `${after.ptr}/uniqueItems` : `${before.ptr}/uniqueItems`,
        `items of ${subject()} ${aUnique ? 'must now be unique' : 'no longer have to be unique'}`, side)
    }
  }

  /** Properties a reader on this side sees: a request never carries readOnly ones, a response writeOnly ones. */
  private visible(property: Loc, document: JsonDocument, side: Side): boolean {
    if (side !== 'request' && side !== 'response') return true
    const schema = document.follow(property).node
    if (!isObject(schema)) return true
    return side === 'request' ? member(schema, 'readOnly') !== true : member(schema, 'writeOnly') !== true
  }

  private properties(loc: Loc, document: JsonDocument, side: Side): Map<string, Loc> {
    const found = new Map<string, Loc>()
    const properties = child(loc, 'properties')
    if (!isObject(properties.node)) return found
    for (const name of Object.keys(properties.node)) {
      const property = child(properties, name)
      if (this.visible(property, document, side)) found.set(name, property)
    }
    return found
  }

  private compareObject(before: Loc, after: Loc, path: string, side: Side): void {
    const b = before.node as JsonObject
    const a = after.node as JsonObject
    const bProperties = this.properties(before, this.graph.before, side)
    const aProperties = this.properties(after, this.graph.after, side)
    const required = (schema: JsonObject, visible: Map<string, Loc>) => {
      const names = member(schema, 'required')
      const defined = isObject(member(schema, 'properties')) ? schema.properties as JsonObject : {}
      // A required property this side does not see (readOnly in a request) is not required here.
      return new Set(Array.isArray(names) ? names.filter((n): n is string => typeof n === 'string' && (visible.has(n) || !hasOwn(defined, n))) : [])
    }
    const bRequired = required(b, bProperties)
    const aRequired = required(a, aProperties)
    const at = (name: string) => `${path}.${name}`
    // Where no other property is allowed, a property that is no longer defined is refused.
    const removedCheck = member(a, 'additionalProperties') === false ? CHECKS.closedPropertyRemoved : CHECKS.propertyRemoved
    for (const [name, property] of bProperties) {
      if (aProperties.has(name)) continue
      this.report(removedCheck, 'removed', property.ptr,
        `${bRequired.has(name) ? 'required ' : ''}property ${this.subject(at(name))} was removed`, side)
    }
    for (const [name, property] of aProperties) {
      const existing = bProperties.get(name)
      if (existing) {
        this.walk(existing, property, at(name), side)
        continue
      }
      const isRequired = aRequired.has(name)
      this.report(isRequired ? CHECKS.requiredPropertyAdded : CHECKS.propertyAdded, 'added', property.ptr,
        `${isRequired ? 'required ' : 'optional '}property ${this.subject(at(name))} was added`, side)
    }
    for (const name of aRequired) {
      if (bRequired.has(name) || (aProperties.has(name) && !bProperties.has(name))) continue
      this.report(CHECKS.propertyBecameRequired, 'changed', `${after.ptr}/required`, `property ${this.subject(at(name))} became required`, side)
    }
    for (const name of bRequired) {
      if (aRequired.has(name) || (bProperties.has(name) && !aProperties.has(name))) continue
      this.report(CHECKS.propertyBecameOptional, 'changed', hasOwn(a, 'required') ? `${after.ptr}/required` : `${before.ptr}/required`,
        `property ${this.subject(at(name))} is no longer required`, side)
    }
    this.compareAdditionalProperties(before, after, path, side)
  }

  private compareAdditionalProperties(before: Loc, after: Loc, path: string, side: Side): void {
    const bAdditional = child(before, 'additionalProperties')
    const aAdditional = child(after, 'additionalProperties')
    const openness = (v: unknown) => (v === undefined || v === true || (isObject(v) && Object.keys(v).length === 0) ? 'open' : v === false ? 'closed' : 'schema')
    const was = openness(bAdditional.node)
    const is = openness(aAdditional.node)
    const subject = () => this.subject(path)
    if (was === 'schema' && is === 'schema') {
      this.walk(bAdditional, aAdditional, `${path}.*`, side)
      return
    }
    if (was === is) return
    const wider = was === 'closed' || is === 'open'
    const pointer = is === 'open' ? (aAdditional.node === undefined ? after.ptr : aAdditional.ptr) : aAdditional.ptr
    const what = is === 'open' ? 'allows any other properties' : is === 'closed' ? 'allows no other properties' : 'allows only other properties of a schema'
    this.report(wider ? CHECKS.additionalPropertiesWidened : CHECKS.additionalPropertiesNarrowed, 'changed', pointer, `${subject()} ${what}`, side)
  }

  private compareArrays(before: Loc, after: Loc, path: string, side: Side): void {
    const subject = () => this.subject(path)
    for (const keyword of ['items', 'prefixItems']) {
      const bItems = child(before, keyword)
      const aItems = child(after, keyword)
      if (bItems.node === undefined && aItems.node === undefined) continue
      if (bItems.node === undefined) {
        this.report(CHECKS.constraintTightened, 'added', aItems.ptr, `items of ${subject()} must now match a schema`, side)
      } else if (aItems.node === undefined) {
        this.report(CHECKS.constraintRelaxed, 'removed', bItems.ptr, `items of ${subject()} no longer have to match a schema`, side)
      } else if (Array.isArray(bItems.node) && Array.isArray(aItems.node)) {
        // Tuples: position by position.
        const length = Math.max(bItems.node.length, aItems.node.length)
        for (let i = 0; i < length; i++) {
          const bItem = child(bItems, i)
          const aItem = child(aItems, i)
          if (bItem.node === undefined) this.report(CHECKS.constraintTightened, 'added', aItem.ptr, `${subject()} has a new item at position ${i}`, side)
          else if (aItem.node === undefined) this.report(CHECKS.constraintRelaxed, 'removed', bItem.ptr, `${subject()} no longer describes the item at position ${i}`, side)
          else this.walk(bItem, aItem, `${path}[${i}]`, side)
        }
      } else {
        this.walk(bItems, aItems, `${path}[]`, side)
      }
    }
  }

  /** A label for an alternative in a message: the component it refers to, else its type. */
  private variantLabel(loc: Loc): string {
    const ref = refOf(loc.node)
    if (ref !== undefined) return componentName(ref.replace(/^#/, '')) || shown(ref)
    if (isObject(loc.node)) {
      const types = typeSet(loc.node)
      if (types) return list(types)
    }
    return 'a schema'
  }

  /**
   * Pairs the members of two `allOf`/`anyOf`/`oneOf` lists: members that refer to the same component
   * pair up; then, in order, members where either side is written inline (a `$ref` inlined, or the
   * other way round). Members that refer to different components are one removed and one added.
   */
  private pairMembers(bMembers: Loc[], aMembers: Loc[]): { pairs: [Loc, Loc][]; removed: Loc[]; added: Loc[] } {
    const target = (loc: Loc, document: JsonDocument) => {
      const ref = refOf(loc.node)
      return ref === undefined ? undefined : document.resolve(ref)?.ptr ?? ref
    }
    const pairs: [Loc, Loc][] = []
    const aTargets = aMembers.map((m) => target(m, this.graph.after))
    const aPaired = aMembers.map(() => false)
    const bLeft: { member: Loc; target: string | undefined }[] = []
    for (const member of bMembers) {
      const t = target(member, this.graph.before)
      const match = t === undefined ? -1 : aTargets.findIndex((at, i) => !aPaired[i] && at === t)
      if (match >= 0) {
        aPaired[match] = true
        pairs.push([member, aMembers[match]])
      } else {
        bLeft.push({ member, target: t })
      }
    }
    const removed: Loc[] = []
    for (const { member, target: t } of bLeft) {
      const match = aMembers.findIndex((_, i) => !aPaired[i] && (t === undefined || aTargets[i] === undefined))
      if (match >= 0) {
        aPaired[match] = true
        pairs.push([member, aMembers[match]])
      } else {
        removed.push(member)
      }
    }
    const added = aMembers.filter((_, i) => !aPaired[i])
    return { pairs, removed, added }
  }

  private members(loc: Loc, keyword: string): Loc[] {
    const list = child(loc, keyword)
    return Array.isArray(list.node) ? list.node.map((_, i) => child(list, i)) : []
  }

  /**
   * One side is a union (`anyOf`/`oneOf`) and the other a plain schema: the plain schema is compared
   * with the alternative that matches it, and the other alternatives are added or removed (a string
   * that became "a string or a Customer"). Answers false when this is not the case.
   */
  private compareUnion(before: Loc, after: Loc, path: string, side: Side): boolean {
    const b = before.node as JsonObject
    const a = after.node as JsonObject
    for (const keyword of UNION_KEYWORDS) {
      const bIsUnion = Array.isArray(member(b, keyword))
      const aIsUnion = Array.isArray(member(a, keyword))
      if (bIsUnion === aIsUnion) continue
      if (UNION_KEYWORDS.some((k) => (bIsUnion ? hasOwn(a, k) : hasOwn(b, k)))) return false
      const plain = bIsUnion ? after : before
      const plainSchema = plain.node as JsonObject
      // Only a schema that is nothing but its alternatives (and annotations) is read this way.
      const unionSchema = (bIsUnion ? b : a)
      if (Object.keys(unionSchema).some((k) => k !== keyword && !ANNOTATIONS.has(k) && !k.startsWith('x-'))) return false
      const alternatives = this.members(bIsUnion ? before : after, keyword)
      const plainTypes = typeSet(plainSchema)
      const plainRef = refOf(plainSchema)
      const matchIndex = Math.max(0, alternatives.findIndex((alt) => {
        if (plainRef !== undefined) return refOf(alt.node) === plainRef
        const types = isObject(alt.node) ? typeSet(alt.node) : undefined
        return refOf(alt.node) === undefined && types !== undefined && plainTypes !== undefined && list(types) === list(plainTypes)
      }))
      const subject = () => this.subject(path)
      alternatives.forEach((alt, i) => {
        if (i === matchIndex) {
          if (bIsUnion) this.walk(alt, after, path, side)
          else this.walk(before, alt, path, side)
        } else if (bIsUnion) {
          this.report(CHECKS.variantRemoved, 'removed', alt.ptr, `${subject()} no longer allows the alternative ${this.variantLabel(alt)}`, side)
        } else {
          this.report(CHECKS.variantAdded, 'added', alt.ptr, `${subject()} allows a new alternative ${this.variantLabel(alt)}`, side)
        }
      })
      return true
    }
    return false
  }

  private compareComposition(before: Loc, after: Loc, path: string, side: Side): void {
    const subject = () => this.subject(path)
    for (const keyword of ['allOf', 'anyOf', 'oneOf']) {
      const bMembers = this.members(before, keyword)
      const aMembers = this.members(after, keyword)
      if (bMembers.length === 0 && aMembers.length === 0) continue
      const { pairs, removed, added } = this.pairMembers(bMembers, aMembers)
      for (const [bMember, aMember] of pairs) {
        const at = keyword === 'allOf' ? path : `${path}(${keyword} ${this.variantLabel(aMember)})`
        this.walk(bMember, aMember, at, side)
      }
      for (const member of removed) {
        if (keyword === 'allOf') this.report(CHECKS.allOfMemberRemoved, 'removed', member.ptr, `${subject()} no longer has to match ${this.variantLabel(member)}`, side)
        else this.report(CHECKS.variantRemoved, 'removed', member.ptr, `${subject()} no longer allows the alternative ${this.variantLabel(member)}`, side)
      }
      for (const member of added) {
        if (keyword === 'allOf') this.report(CHECKS.allOfMemberAdded, 'added', member.ptr, `${subject()} must also match ${this.variantLabel(member)}`, side)
        else this.report(CHECKS.variantAdded, 'added', member.ptr, `${subject()} allows a new alternative ${this.variantLabel(member)}`, side)
      }
    }
    this.compareDiscriminator(before, after, path, side)
  }

  private compareDiscriminator(before: Loc, after: Loc, path: string, side: Side): void {
    const b = child(before, 'discriminator')
    const a = child(after, 'discriminator')
    if (deepEqual(b.node, a.node)) return
    const subject = () => this.subject(path)
    const bObject = isObject(b.node) ? b.node : {}
    const aObject = isObject(a.node) ? a.node : {}
    if (member(bObject, 'propertyName') !== member(aObject, 'propertyName')) {
      this.report(CHECKS.discriminatorChanged, 'changed', a.node === undefined ? b.ptr : a.ptr,
        `discriminator of ${subject()} changed from ${shown(member(bObject, 'propertyName') ?? null)} to ${shown(member(aObject, 'propertyName') ?? null)}`, side)
      return
    }
    const bMapping = isObject(bObject.mapping) ? bObject.mapping : {}
    const aMapping = isObject(aObject.mapping) ? aObject.mapping : {}
    for (const value of Object.keys(bMapping)) {
      if (!hasOwn(aMapping, value) || aMapping[value] !== bMapping[value]) {
        this.report(CHECKS.discriminatorChanged, hasOwn(aMapping, value) ? 'changed' : 'removed', childPointer(`${hasOwn(aMapping, value) ? a.ptr : b.ptr}/mapping`, value),
          `discriminator value ${shown(value)} of ${subject()} ${hasOwn(aMapping, value) ? 'maps to another schema' : 'was removed'}`, side)
      }
    }
    for (const value of Object.keys(aMapping)) {
      if (!hasOwn(bMapping, value)) {
        this.report(CHECKS.variantAdded, 'added', childPointer(`${a.ptr}/mapping`, value), `${subject()} has the new discriminator value ${shown(value)}`, side)
      }
    }
  }

  private compareFlags(b: JsonObject, a: JsonObject, after: Loc, path: string, side: Side): void {
    const subject = () => this.subject(path)
    if (!deepEqual(member(b, 'default'), member(a, 'default'))) {
      const was = member(b, 'default')
      const is = member(a, 'default')
      const message = was === undefined ? `${subject()} has the default ${shown(is)}`
        : is === undefined ? `${subject()} no longer has the default ${shown(was)}`
          : `default of ${subject()} changed from ${shown(was)} to ${shown(is)}`
      this.report(CHECKS.defaultChanged, was === undefined ? 'added' : is === undefined ? 'removed' : 'changed', `${after.ptr}/default`, message, side)
    }
    if ((member(b, 'deprecated') === true) !== (member(a, 'deprecated') === true)) {
      const now = member(a, 'deprecated') === true
      this.report(CHECKS.deprecated, 'changed', `${after.ptr}/deprecated`, `${subject()} is ${now ? 'now' : 'no longer'} deprecated`, side)
    }
    for (const keyword of ['readOnly', 'writeOnly']) {
      if ((member(b, keyword) === true) !== (member(a, keyword) === true)) {
        const now = member(a, keyword) === true
        const what = keyword === 'readOnly' ? 'read-only' : 'write-only'
        this.report(CHECKS.accessChanged, 'changed', `${after.ptr}/${keyword}`, `${subject()} is ${now ? 'now' : 'no longer'} ${what}`, side)
      }
    }
  }

  /** Documentation keywords: one annotation change per keyword that differs. */
  private compareAnnotations(before: Loc, after: Loc, path: string, side: Side): void {
    const b = before.node as JsonObject
    const a = after.node as JsonObject
    for (const keyword of keywordsOf(b, a)) {
      if (!ANNOTATIONS.has(keyword) && !keyword.startsWith('x-')) continue
      this.annotation(b, a, before, after, keyword, `${keyword} of ${this.subject(path)}`, side)
    }
  }

  private annotation(b: JsonObject, a: JsonObject, before: Loc, after: Loc, keyword: string, what: string, side: Side): void {
    const inB = hasOwn(b, keyword)
    const inA = hasOwn(a, keyword)
    if (inB && inA && deepEqual(b[keyword], a[keyword])) return
    const kind: ChangeKind = !inB ? 'added' : !inA ? 'removed' : 'changed'
    const pointer = childPointer(kind === 'removed' ? before.ptr : after.ptr, keyword)
    this.report(CHECKS.annotationChanged, kind, pointer, `${what} was ${kind}`, side)
  }

  /** Annotations, subschemas whose effect is not judged, and keywords the diff does not know. */
  private compareRest(before: Loc, after: Loc, path: string, side: Side): void {
    const b = before.node as JsonObject
    const a = after.node as JsonObject
    const subject = () => this.subject(path)
    for (const keyword of OPAQUE_SUBSCHEMAS) {
      const bSchema = child(before, keyword)
      const aSchema = child(after, keyword)
      if (bSchema.node === undefined && aSchema.node === undefined) continue
      if (bSchema.node === undefined || aSchema.node === undefined) {
        this.report(CHECKS.schemaChanged, bSchema.node === undefined ? 'added' : 'removed', bSchema.node === undefined ? aSchema.ptr : bSchema.ptr,
          `${keyword} of ${subject()} was ${bSchema.node === undefined ? 'added' : 'removed'}`, side)
      } else {
        this.walk(bSchema, aSchema, `${path}(${keyword})`, 'both')
      }
    }
    for (const keyword of OPAQUE_SUBSCHEMA_MAPS) {
      const bMap = child(before, keyword)
      const aMap = child(after, keyword)
      const bKeys = isObject(bMap.node) ? Object.keys(bMap.node) : []
      const aKeys = isObject(aMap.node) ? new Set(Object.keys(aMap.node)) : new Set<string>()
      for (const key of bKeys) {
        if (aKeys.has(key)) this.walk(child(bMap, key), child(aMap, key), `${path}(${keyword} ${key})`, 'both')
        else this.report(CHECKS.schemaChanged, 'removed', child(bMap, key).ptr, `${keyword} ${shown(key)} of ${subject()} was removed`, side)
      }
      for (const key of aKeys) {
        if (!bKeys.includes(key)) this.report(CHECKS.schemaChanged, 'added', child(aMap, key).ptr, `${keyword} ${shown(key)} of ${subject()} was added`, side)
      }
    }
    for (const keyword of keywordsOf(b, a)) {
      if (ANNOTATIONS.has(keyword) || keyword.startsWith('x-')) {
        this.annotation(b, a, before, after, keyword, `${keyword} of ${subject()}`, side)
      } else if (!COMPARED.has(keyword) && !deepEqual(member(b, keyword), member(a, keyword))) {
        const kind: ChangeKind = !hasOwn(b, keyword) ? 'added' : !hasOwn(a, keyword) ? 'removed' : 'changed'
        this.report(CHECKS.schemaChanged, kind, childPointer(kind === 'removed' ? before.ptr : after.ptr, keyword), `${keyword} of ${subject()} was ${kind}`, side)
      }
    }
  }
}

/** The keys of both objects, each once, in the order of `b` then new ones of `a`. */
export function keywordsOf(b: JsonObject, a: JsonObject): string[] {
  const keys = Object.keys(b)
  for (const key of Object.keys(a)) if (!hasOwn(b, key)) keys.push(key)
  return keys
}
