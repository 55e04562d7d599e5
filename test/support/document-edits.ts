/**
 * Seeded edits of an OpenAPI document (OpenAPI 3.x, and Swagger 2.0's `definitions`), for the lint
 * differential (issue 19 item 5; docs/lint.md): change, add and remove an operation, a schema, a `$ref`
 * target and an example, and a release's new `info.version`. Each edit answers a new document and leaves its input as it was: the nodes on
 * the edited path are copied, everything else is shared with the input.
 *
 * The edits are the kind a new version of an API makes, and several are chosen because they reach
 * what the validator cache keys on: a schema's text (a changed or new schema, an example checked
 * against another schema), schemas that name themselves (`$id`) or contain themselves (a recursive
 * `$ref`), examples that stop matching their schema, and references that dangle.
 */
import { seededRandom } from '../../bench/generate.js'

type Json = Record<string, unknown>
type Path = (string | number)[]

export const EDIT_KINDS = [
  'change-operation', 'add-operation', 'remove-operation',
  'change-schema', 'add-schema', 'remove-schema',
  'change-ref', 'add-ref', 'remove-ref-target',
  'change-example', 'add-example', 'remove-example',
  'change-info',
] as const

export type EditKind = (typeof EDIT_KINDS)[number]

export interface DocumentEdit {
  kind: EditKind
  /** What was done, where (a JSON pointer): enough to reproduce a difference by hand. */
  description: string
  document: Json
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace', 'query']

/** Members whose own members are names chosen by the author, not keywords. */
const NAME_MAPS = new Set([
  'paths', 'properties', 'patternProperties', 'definitions', '$defs', 'schemas', 'responses', 'parameters',
  'requestBodies', 'headers', 'securitySchemes', 'links', 'callbacks', 'content', 'encoding', 'variables',
  'pathItems', 'webhooks', 'mapping', 'dependentSchemas', 'securityDefinitions', 'scopes',
])

/** Members that hold data, not description: nothing inside them is a `$ref`, an example or a schema. */
const DATA = new Set(['example', 'examples', 'default', 'enum', 'const', 'value', 'x-examples'])

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

const pointer = (path: Path): string => '/' + path.map((s) => String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')

/** The segments of a local `$ref` (`#/a/b~1c`), or undefined for any other. */
function refPath(ref: string): string[] | undefined {
  if (!ref.startsWith('#/')) return undefined
  try {
    return ref.slice(2).split('/').map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'))
  } catch {
    return undefined
  }
}

const refTo = (path: Path): string => '#' + pointer(path)

function get(root: unknown, path: Path): unknown {
  let node = root
  for (const segment of path) {
    if (node === null || typeof node !== 'object' || !Object.prototype.hasOwnProperty.call(node, segment)) return undefined
    node = (node as Record<string | number, unknown>)[segment]
  }
  return node
}

const REMOVE = Symbol('remove')

/**
 * A copy of `root` with the node at `path` replaced by `change(node)` (or removed, when it answers
 * REMOVE); only the objects and arrays on the path are copied.
 */
function updateIn(root: unknown, path: Path, change: (node: unknown) => unknown): Json {
  const step = (node: unknown, i: number): unknown => {
    if (i === path.length) return change(node)
    const key = path[i]
    if (Array.isArray(node)) {
      const copy = node.slice()
      const next = step(node[key as number], i + 1)
      if (next === REMOVE) copy.splice(key as number, 1)
      else copy[key as number] = next
      return copy
    }
    const copy: Json = isObject(node) ? { ...node } : {}
    const next = step(isObject(node) ? node[key as string] : undefined, i + 1)
    if (next === REMOVE) delete copy[key as string]
    else Object.defineProperty(copy, key as string, { value: next, enumerable: true, writable: true, configurable: true })
    return copy
  }
  return step(root, 0) as Json
}

const setIn = (root: unknown, path: Path, value: unknown): Json => updateIn(root, path, () => value)
const removeIn = (root: unknown, path: Path): Json => updateIn(root, path, () => REMOVE)

/** Where the things an edit may touch are in the document, in document order. */
interface Sites {
  operations: Path[]
  /** The container of named schemas: components/schemas (3.x) or definitions (2.0). */
  schemasAt: Path
  schemaNames: string[]
  refs: { at: Path; ref: string }[]
  /** Each example value: `example`, an `examples` entry's `value`, or an item of a schema's `examples` array. */
  examples: Path[]
  /** Media types with a schema and no example, and named object schemas without one. */
  exampleless: { at: Path; schema: unknown }[]
  /** Schemas written in place (under `schema`, or a property), not references. */
  inlineSchemas: Path[]
}

function sitesOf(doc: Json): Sites {
  const swagger = typeof doc.swagger === 'string'
  const schemasAt = swagger ? ['definitions'] : ['components', 'schemas']
  const schemas = get(doc, schemasAt)
  const sites: Sites = {
    operations: [], schemasAt, schemaNames: isObject(schemas) ? Object.keys(schemas) : [], refs: [], examples: [], exampleless: [], inlineSchemas: [],
  }
  if (isObject(doc.paths)) {
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!isObject(item)) continue
      for (const method of METHODS) if (isObject(item[method])) sites.operations.push(['paths', path, method])
    }
  }
  const walk = (node: unknown, path: Path, named: boolean): void => {
    if (Array.isArray(node)) {
      node.forEach((item, i) => walk(item, [...path, i], false))
      return
    }
    if (!isObject(node)) return
    if (!named) {
      if (typeof node.$ref === 'string') {
        sites.refs.push({ at: path, ref: node.$ref })
        return
      }
      const parent = path[path.length - 1]
      const grandparent = path[path.length - 2]
      const isSchema = parent === 'schema' || parent === 'items' || grandparent === 'properties' || (path.length === schemasAt.length + 1 && pointer(path.slice(0, -1)) === pointer(schemasAt))
      if ('example' in node) sites.examples.push([...path, 'example'])
      if (isObject(node.examples)) {
        for (const [name, entry] of Object.entries(node.examples)) if (isObject(entry) && 'value' in entry) sites.examples.push([...path, 'examples', name, 'value'])
      } else if (Array.isArray(node.examples) && isSchema) {
        node.examples.forEach((_, i) => sites.examples.push([...path, 'examples', i]))
      }
      if (!('example' in node) && node.examples === undefined) {
        if (grandparent === 'content' && node.schema !== undefined) sites.exampleless.push({ at: path, schema: node.schema })
        else if (isSchema && path.length === schemasAt.length + 1 && node.type === 'object') sites.exampleless.push({ at: path, schema: node })
      }
      if (isSchema && path.length > schemasAt.length + 1) sites.inlineSchemas.push(path)
    }
    for (const [key, value] of Object.entries(node)) {
      if (!named && (DATA.has(key) || key.startsWith('x-'))) continue
      walk(value, [...path, key], !named && NAME_MAPS.has(key) && !(key === 'parameters' && Array.isArray(value)))
    }
  }
  walk(doc, [], false)
  return sites
}

type Random = () => number
const pick = <T>(rnd: Random, items: readonly T[]): T => items[Math.floor(rnd() * items.length)]

/** A value of another type than `value`, or `value` with one member or item broken. */
function perturbed(value: unknown, rnd: Random): unknown {
  if (Array.isArray(value)) return value.length > 0 && rnd() < 0.5 ? [...value.slice(1), 42] : [...value, { unexpected: true }]
  if (isObject(value)) {
    const keys = Object.keys(value)
    if (keys.length === 0) return { unexpected: 'member' }
    const key = pick(rnd, keys)
    const choice = rnd()
    if (choice < 0.4) return { ...value, [key]: perturbed(value[key], rnd) }
    if (choice < 0.7) {
      const copy = { ...value }
      delete copy[key]
      return copy
    }
    return { ...value, unexpectedMember: 7 }
  }
  if (typeof value === 'string') return rnd() < 0.5 ? value.length : ''
  if (typeof value === 'number') return rnd() < 0.5 ? String(value) : -value - 1.5
  if (typeof value === 'boolean') return value ? 'yes' : 0
  return 'not null'
}

/** An instance of `schema` (following local references a few levels), or close to one. */
function instanceOf(doc: Json, schema: unknown, depth = 0): unknown {
  if (!isObject(schema) || depth > 4) return null
  if (typeof schema.$ref === 'string') {
    const path = refPath(schema.$ref)
    return path ? instanceOf(doc, get(doc, path), depth + 1) : null
  }
  if ('example' in schema) return schema.example
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  for (const key of ['allOf', 'oneOf', 'anyOf']) {
    const list = schema[key]
    if (Array.isArray(list) && list.length > 0) return instanceOf(doc, list[0], depth + 1)
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case 'object': {
      const out: Json = {}
      if (isObject(schema.properties)) for (const [name, sub] of Object.entries(schema.properties).slice(0, 8)) out[name] = instanceOf(doc, sub, depth + 1)
      return out
    }
    case 'array':
      return [instanceOf(doc, schema.items, depth + 1)]
    case 'integer':
      return typeof schema.minimum === 'number' ? Math.ceil(schema.minimum) : 1
    case 'number':
      return 1.5
    case 'boolean':
      return true
    case 'string':
      return schema.format === 'date-time' ? '2024-01-01T00:00:00Z' : schema.format === 'uuid' ? '3fa85f64-5717-4562-b3fc-2c963f66afa6' : 'text'
    default:
      return isObject(schema.properties) ? instanceOf(doc, { ...schema, type: 'object' }, depth) : 'text'
  }
}

/** The next name `base`, `base2`, … that `taken` does not have. */
function freshName(base: string, taken: (name: string) => boolean): string {
  let name = base
  for (let i = 2; taken(name); i++) name = `${base}${i}`
  return name
}

type Editor = (doc: Json, sites: Sites, rnd: Random) => { description: string; document: Json } | undefined

const TYPES = ['string', 'integer', 'boolean', 'object', 'array']

const editors: Record<EditKind, Editor> = {
  'change-operation': (doc, sites, rnd) => {
    if (sites.operations.length === 0) return undefined
    const at = pick(rnd, sites.operations)
    const operation = get(doc, at) as Json
    const where = pointer(at)
    switch (Math.floor(rnd() * 6)) {
      case 0:
        return { description: `${where}: summary rewritten`, document: setIn(doc, [...at, 'summary'], `Changed ${String(operation.summary ?? 'operation')} again`) }
      case 1:
        return { description: `${where}: description removed`, document: removeIn(doc, [...at, 'description']) }
      case 2: {
        const other = get(doc, [...pick(rnd, sites.operations), 'operationId'])
        return typeof other === 'string' && other !== operation.operationId
          ? { description: `${where}: operationId set to another operation's (${other})`, document: setIn(doc, [...at, 'operationId'], other) }
          : { description: `${where}: operationId removed`, document: removeIn(doc, [...at, 'operationId']) }
      }
      case 3:
        return { description: `${where}: tagged with an undeclared tag`, document: setIn(doc, [...at, 'tags'], [`undeclared-${Math.floor(rnd() * 1000)}`]) }
      case 4: {
        const parameter = { name: `q${Math.floor(rnd() * 1000)}`, in: 'query', description: 'A new parameter.', schema: { type: 'integer', minimum: 1 }, example: rnd() < 0.5 ? 'many' : 3 }
        const parameters = Array.isArray(operation.parameters) ? operation.parameters : []
        return { description: `${where}: query parameter ${parameter.name} added (example ${JSON.stringify(parameter.example)})`, document: setIn(doc, [...at, 'parameters'], [...parameters, parameter]) }
      }
      default: {
        const responses = isObject(operation.responses) ? operation.responses : {}
        const kept = Object.fromEntries(Object.entries(responses).filter(([code]) => !code.startsWith('2')))
        return { description: `${where}: its 2xx responses removed`, document: setIn(doc, [...at, 'responses'], Object.keys(kept).length > 0 ? kept : { default: { description: 'Anything.' } }) }
      }
    }
  },
  'add-operation': (doc, sites, rnd) => {
    if (sites.operations.length === 0) return undefined
    const from = pick(rnd, sites.operations)
    const copy = structuredClone(get(doc, from)) as Json
    if (typeof copy.operationId === 'string' && rnd() < 0.8) copy.operationId = `${copy.operationId}Again`
    const item = get(doc, from.slice(0, 2)) as Json
    const free = METHODS.slice(0, 8).filter((m) => !(m in item))
    const paths = doc.paths as Json
    const at = free.length > 0 && rnd() < 0.6
      ? [from[0], from[1], pick(rnd, free)]
      : ['paths', freshName(`${String(from[1])}/copy`, (p) => p in paths), String(from[2])]
    return { description: `${pointer(at)}: added, a copy of ${pointer(from)}`, document: setIn(doc, at, copy) }
  },
  'remove-operation': (doc, sites, rnd) => {
    if (sites.operations.length === 0) return undefined
    const at = pick(rnd, sites.operations)
    const item = get(doc, at.slice(0, 2)) as Json
    const alone = Object.keys(item).every((key) => key === at[2] || !METHODS.includes(key))
    return alone && rnd() < 0.5
      ? { description: `${pointer(at.slice(0, 2))}: path removed with its only operation`, document: removeIn(doc, at.slice(0, 2)) }
      : { description: `${pointer(at)}: removed`, document: removeIn(doc, at) }
  },
  'change-schema': (doc, sites, rnd) => {
    const candidates = [...sites.schemaNames.map((name) => [...sites.schemasAt, name]), ...sites.inlineSchemas]
    if (candidates.length === 0) return undefined
    const at = pick(rnd, candidates)
    const schema = get(doc, at)
    if (!isObject(schema)) return undefined
    const where = pointer(at)
    const properties = isObject(schema.properties) ? Object.keys(schema.properties) : []
    const openapi30 = typeof doc.openapi === 'string' && doc.openapi.startsWith('3.0')
    switch (Math.floor(rnd() * 8)) {
      case 0: {
        if (properties.length === 0) return { description: `${where}: type set to integer`, document: setIn(doc, [...at, 'type'], 'integer') }
        const name = pick(rnd, properties)
        const property = (schema.properties as Json)[name]
        const type = isObject(property) && typeof property.type === 'string' ? property.type : undefined
        const next = pick(rnd, TYPES.filter((t) => t !== type))
        return { description: `${where}: property ${name} typed ${next}`, document: setIn(doc, [...at, 'properties', name], { type: next }) }
      }
      case 1: {
        const required = Array.isArray(schema.required) ? schema.required : []
        const name = pick(rnd, [...properties.filter((p) => !required.includes(p)), 'missingMember'])
        return { description: `${where}: ${name} required`, document: setIn(doc, [...at, 'required'], [...required, name]) }
      }
      case 2:
        return { description: `${where}: additionalProperties false`, document: setIn(doc, [...at, 'additionalProperties'], false) }
      case 3:
        return properties.length > 0
          ? { description: `${where}: every property limited to 3 characters`, document: setIn(doc, [...at, 'properties'], Object.fromEntries(properties.map((p) => [p, { ...((schema.properties as Json)[p] as Json), maxLength: 3 }]))) }
          : { description: `${where}: pattern of digits`, document: setIn(doc, [...at, 'pattern'], '^[0-9]+$') }
      case 4:
        // A schema that names itself is left to Spectral's own validators (validator-cache.ts).
        return { description: `${where}: given an $id`, document: setIn(doc, [...at, '$id'], `https://example.com/schemas/${at.map(String).join('-')}`) }
      case 5:
        return openapi30
          ? { description: `${where}: nullable`, document: setIn(doc, [...at, 'nullable'], true) }
          : { description: `${where}: type also null`, document: setIn(doc, [...at, 'type'], [typeof schema.type === 'string' ? schema.type : 'object', 'null']) }
      case 6: {
        // The dialect Spectral validates examples in is read from `$schema`.
        const dialect = openapi30 ? 'http://json-schema.org/draft-04/schema#' : pick(rnd, ['https://json-schema.org/draft/2020-12/schema', 'http://json-schema.org/draft-07/schema#'])
        return { description: `${where}: $schema ${dialect}`, document: setIn(doc, [...at, '$schema'], dialect) }
      }
      default:
        // A schema that contains itself once resolved: Spectral checks no example against it.
        return { description: `${where}: property self referring to the schema itself`, document: setIn(doc, [...at, 'properties'], { ...(isObject(schema.properties) ? schema.properties : {}), self: { $ref: refTo(at) } }) }
    }
  },
  'add-schema': (doc, sites, rnd) => {
    const schemas = (get(doc, sites.schemasAt) ?? {}) as Json
    const name = freshName('GeneratedSchema', (n) => n in schemas)
    const at = [...sites.schemasAt, name]
    if (sites.schemaNames.length > 0 && rnd() < 0.5) {
      const from = pick(rnd, sites.schemaNames)
      const copy = structuredClone(schemas[from])
      const schema = isObject(copy) ? { ...copy, description: `A copy of ${from}.` } : copy
      return { description: `${pointer(at)}: added, a copy of ${from}`, document: setIn(doc, at, schema) }
    }
    const example = rnd() < 0.5 ? { code: 'E1', count: 2 } : { code: 1, count: 'two' }
    const schema = { type: 'object', description: 'A new schema.', required: ['code'], properties: { code: { type: 'string' }, count: { type: 'integer' } }, example }
    return { description: `${pointer(at)}: added, example ${JSON.stringify(example)}`, document: setIn(doc, at, schema) }
  },
  'remove-schema': (doc, sites, rnd) => {
    if (sites.schemaNames.length === 0) return undefined
    const at = [...sites.schemasAt, pick(rnd, sites.schemaNames)]
    return { description: `${pointer(at)}: removed`, document: removeIn(doc, at) }
  },
  'change-ref': (doc, sites, rnd) => {
    const local = sites.refs.filter((r) => (refPath(r.ref)?.length ?? 0) >= 2)
    if (local.length === 0) return undefined
    const site = pick(rnd, local)
    const target = refPath(site.ref) as string[]
    const container = get(doc, target.slice(0, -1))
    const targetSchema = get(doc, target)
    if (typeof doc.openapi === 'string' && doc.openapi.startsWith('3.1') && pointer(target.slice(0, -1)) === pointer(sites.schemasAt) && isObject(targetSchema) && rnd() < 0.5) {
      // OpenAPI 3.1 schemas may be referred to by their $id: Spectral's resolver leaves such a $ref
      // alone, and Ajv resolves it to the schema of that $id if it compiled that one first.
      const id = typeof targetSchema.$id === 'string' ? targetSchema.$id : `https://example.com/schemas/${target[target.length - 1]}`
      const named = setIn(doc, [...target, '$id'], id)
      return { description: `${pointer(site.at)}: $ref ${site.ref} changed to the target's $id ${id}`, document: setIn(named, [...site.at, '$ref'], id) }
    }
    const others = isObject(container) ? Object.keys(container).filter((n) => n !== target[target.length - 1]) : []
    const next = others.length > 0 && rnd() < 0.85 ? refTo([...target.slice(0, -1), pick(rnd, others)]) : refTo([...target.slice(0, -1), 'NoSuchTarget'])
    return { description: `${pointer(site.at)}: $ref ${site.ref} changed to ${next}`, document: setIn(doc, [...site.at, '$ref'], next) }
  },
  'add-ref': (doc, sites, rnd) => {
    if (sites.inlineSchemas.length === 0) return undefined
    const at = pick(rnd, sites.inlineSchemas)
    if (sites.schemaNames.length > 0 && rnd() < 0.6) {
      const ref = refTo([...sites.schemasAt, pick(rnd, sites.schemaNames)])
      return { description: `${pointer(at)}: inline schema replaced by $ref ${ref}`, document: setIn(doc, at, { $ref: ref }) }
    }
    // The inline schema moves to a new named schema, and a $ref to it takes its place.
    const schemas = (get(doc, sites.schemasAt) ?? {}) as Json
    const name = freshName('Extracted', (n) => n in schemas)
    const target = [...sites.schemasAt, name]
    const moved = setIn(doc, target, get(doc, at))
    return { description: `${pointer(at)}: moved to ${pointer(target)} and referenced`, document: setIn(moved, at, { $ref: refTo(target) }) }
  },
  'remove-ref-target': (doc, sites, rnd) => {
    const resolvable = sites.refs.filter((r) => {
      const path = refPath(r.ref)
      return path !== undefined && path.length > 0 && get(doc, path) !== undefined
    })
    if (resolvable.length === 0) return undefined
    const site = pick(rnd, resolvable)
    const target = refPath(site.ref) as string[]
    return { description: `${pointer(target)}: removed, the target of ${pointer(site.at)}`, document: removeIn(doc, target) }
  },
  'change-example': (doc, sites, rnd) => {
    if (sites.examples.length === 0) return undefined
    const at = pick(rnd, sites.examples)
    const value = perturbed(get(doc, at), rnd)
    return { description: `${pointer(at)}: changed to ${JSON.stringify(value).slice(0, 80)}`, document: setIn(doc, at, value) }
  },
  'add-example': (doc, sites, rnd) => {
    if (sites.exampleless.length === 0) return undefined
    const site = pick(rnd, sites.exampleless)
    const instance = instanceOf(doc, site.schema)
    const value = rnd() < 0.5 ? instance : perturbed(instance, rnd)
    return { description: `${pointer(site.at)}: example ${JSON.stringify(value).slice(0, 80)} added`, document: setIn(doc, [...site.at, 'example'], value) }
  },
  'remove-example': (doc, sites, rnd) => {
    if (sites.examples.length === 0) return undefined
    const at = pick(rnd, sites.examples)
    // An `examples` entry goes whole (its `value` alone would leave an invalid Example Object).
    const removed = at[at.length - 1] === 'value' ? at.slice(0, -1) : at
    return { description: `${pointer(removed)}: removed`, document: removeIn(doc, removed) }
  },
  // What every release does: a new info.version, at times with its description rewritten or dropped.
  'change-info': (doc, _sites, rnd) => {
    const info = isObject(doc.info) ? doc.info : {}
    const version = `${String(info.version ?? '1.0.0')}.${1 + Math.floor(rnd() * 99)}`
    const bumped = setIn(doc, ['info', 'version'], version)
    const roll = rnd()
    if (roll < 0.25) return { description: `/info: version ${version}, description removed`, document: removeIn(bumped, ['info', 'description']) }
    if (roll < 0.5) return { description: `/info: version ${version}, description rewritten`, document: setIn(bumped, ['info', 'description'], 'What changed in this release.') }
    return { description: `/info/version: ${version}`, document: bumped }
  },
}

/**
 * `count` edits of `document`, each made to the document as given (not to the edit before), the kinds
 * taken in turn (starting at one the seed picks); a kind the document offers nothing to (no example to
 * remove) gives its turn to the next kind. The same document, count and seed give the same edits.
 */
export function documentEdits(document: unknown, count: number, seed: number): DocumentEdit[] {
  if (!isObject(document)) return []
  const rnd = seededRandom(seed)
  const sites = sitesOf(document)
  const edits: DocumentEdit[] = []
  let turn = Math.floor(rnd() * EDIT_KINDS.length)
  for (let i = 0; i < count; i++) {
    for (let tried = 0; tried < EDIT_KINDS.length; tried++) {
      const kind = EDIT_KINDS[turn++ % EDIT_KINDS.length]
      const edit = editors[kind](document, sites, rnd)
      if (edit) {
        edits.push({ kind, ...edit })
        break
      }
    }
  }
  return edits
}
