/**
 * The diff of two OpenAPI 3.x documents: operations matched by method and path (path parameters may
 * be renamed), then their parameters, request bodies, responses, security and callbacks; schemas go
 * through the schema graph, so a change in a component is found once and reported at every operation
 * that reaches it. Components no operation uses are compared on their own.
 */
import { CHECKS, classify, type Check, type Side } from './checks.js'
import {
  child, childPointer, deepEqual, hasOwn, isObject, member, shown, JsonDocument, type JsonObject, type Loc,
} from './json.js'
import { SchemaGraph, keywordsOf, type LocalChange, type SchemaNode } from './schema-graph.js'
import { operationMembers } from '../operations.js'
import { DiffBuilder } from './result.js'
import { UnchangedParts } from './unchanged.js'
import type { ChangeKind, DiffResult, Operation } from './types.js'

/** The operations of a path item by method (see operationMembers). */
function operationsOf(item: Loc | undefined): Map<string, Loc> {
  const found = new Map<string, Loc>()
  if (!item) return found
  for (const { method, at } of operationMembers(item.node)) found.set(method, at.reduce(child, item))
  return found
}

/** The operations of two path items paired by method, each present on one side at least. */
function pairOperations(before: Loc | undefined, after: Loc | undefined): { method: string; bOp?: Loc; aOp?: Loc }[] {
  const bOps = operationsOf(before)
  const aOps = operationsOf(after)
  return [...new Set([...bOps.keys(), ...aOps.keys()])].map((method) => ({ method, bOp: bOps.get(method), aOp: aOps.get(method) }))
}

/** Members of operations, parameters, bodies and responses that only document. */
const DOC_MEMBERS = new Set(['summary', 'description', 'tags', 'externalDocs', 'example', 'examples', 'links'])

/** Where in an operation a schema sits, and who reads what it describes. */
interface SchemaRoot {
  operation: number
  where: string
  node: SchemaNode
}

/** A method and path as operations are matched: path parameters by position, not by name. */
function templateKey(path: string): string {
  return path.replace(/\{[^}]*\}/g, '{}')
}

function templateNames(path: string): string[] {
  return [...path.matchAll(/\{([^}]*)\}/g)].map((m) => m[1])
}

/** Security requirements: alternatives, each a map from scheme to scopes. */
type Requirement = Map<string, Set<string>>

function requirements(value: unknown): Requirement[] {
  if (!Array.isArray(value)) return []
  return value.filter(isObject).map((alternative) => new Map(Object.entries(alternative).map(([scheme, scopes]) =>
    [scheme, new Set(Array.isArray(scopes) ? scopes.filter((s): s is string => typeof s === 'string') : [])])))
}

/** True when satisfying `strong` satisfies `weak` (every scheme and scope of `weak` is in `strong`). */
function satisfies(strong: Requirement, weak: Requirement): boolean {
  for (const [scheme, scopes] of weak) {
    const have = strong.get(scheme)
    if (!have) return false
    for (const scope of scopes) if (!have.has(scope)) return false
  }
  return true
}

function sameRequirement(x: Requirement, y: Requirement): boolean {
  return satisfies(x, y) && satisfies(y, x)
}

function describe(requirement: Requirement): string {
  if (requirement.size === 0) return 'no authentication'
  return [...requirement].map(([scheme, scopes]) => (scopes.size > 0 ? `${scheme} (${[...scopes].join(', ')})` : scheme)).join(' and ')
}

/** How a parameter is written in a request, with OpenAPI's defaults filled in. */
function serialization(parameter: JsonObject): { style: unknown; explode: unknown; allowReserved: unknown; allowEmptyValue: unknown } {
  const style = member(parameter, 'style') ?? (parameter.in === 'query' || parameter.in === 'cookie' ? 'form' : 'simple')
  return {
    style,
    explode: member(parameter, 'explode') ?? style === 'form',
    allowReserved: member(parameter, 'allowReserved') ?? false,
    allowEmptyValue: member(parameter, 'allowEmptyValue') ?? false,
  }
}

function isSuccess(status: string): boolean {
  return /^2/.test(status)
}

class OpenApiDiff {
  readonly #before: JsonDocument
  readonly #after: JsonDocument
  readonly #graph: SchemaGraph
  readonly #result = new DiffBuilder()
  readonly #roots: SchemaRoot[] = []
  readonly #unchanged: UnchangedParts
  /**
   * True when what an operation means beyond its own text and references is the same in both: the
   * document's security (operations without their own inherit it) and what decides how schemas read.
   */
  readonly #sameContext: boolean
  readonly #skipUnchanged: boolean

  constructor(before: unknown, after: unknown, options: DiffOptions) {
    this.#before = new JsonDocument(before)
    this.#after = new JsonDocument(after)
    this.#graph = new SchemaGraph(this.#before, this.#after)
    this.#unchanged = new UnchangedParts(this.#before, this.#after)
    this.#sameContext = options.skipUnchanged !== false
      && ['/openapi', '/security', '/jsonSchemaDialect'].every((ptr) => deepEqual(this.#before.at(ptr), this.#after.at(ptr)))
    this.#skipUnchanged = options.skipUnchanged !== false
  }

  run(): DiffResult {
    const before = this.#before.rootLoc
    const after = this.#after.rootLoc
    this.compareDocument(before, after)
    this.comparePaths(child(before, 'paths'), child(after, 'paths'), false)
    this.comparePaths(child(before, 'webhooks'), child(after, 'webhooks'), true)
    const dirty = this.#graph.changedClosures(this.#roots.map((r) => r.node))
    const visited = new Map<number, Set<SchemaNode>>()
    for (const root of this.#roots) {
      let seen = visited.get(root.operation)
      if (!seen) visited.set(root.operation, (seen = new Set()))
      SchemaGraph.collect(root.node, dirty, seen, (change) => this.#result.atOperation(root.operation, change, root.where))
    }
    this.compareComponents(child(before, 'components'), child(after, 'components'))
    return this.#result.build()
  }

  // ---------------------------------------------------------------- reporting

  private direct(operation: number, check: Check, kind: ChangeKind, pointer: string, message: string, side: Side = 'request'): void {
    const change: LocalChange = { kind, pointer, check: check.id, classification: classify(check, side), message }
    this.#result.atOperation(operation, change, '')
  }

  private documentChange(check: Check, kind: ChangeKind, pointer: string, message: string, component?: string): void {
    this.#result.atDocument({ kind, pointer, check: check.id, classification: classify(check, 'request'), message }, component)
  }

  /** Annotation changes of the documenting members of two objects (operation, parameter, response…). */
  private annotations(before: Loc, after: Loc, what: string, report: (kind: ChangeKind, pointer: string, message: string) => void): void {
    const b = isObject(before.node) ? before.node : {}
    const a = isObject(after.node) ? after.node : {}
    for (const key of keywordsOf(b, a)) {
      if (!DOC_MEMBERS.has(key) && !key.startsWith('x-')) continue
      const inB = hasOwn(b, key)
      const inA = hasOwn(a, key)
      if (inB && inA && deepEqual(b[key], a[key])) continue
      const kind: ChangeKind = !inB ? 'added' : !inA ? 'removed' : 'changed'
      report(kind, kind === 'removed' ? child(before, key).ptr : child(after, key).ptr, `${key} of ${what} was ${kind}`)
    }
  }

  private schemaRoot(operation: number, where: string, side: Side, before: Loc, after: Loc): void {
    if (before.node === undefined && after.node === undefined) return
    if (before.node === undefined || after.node === undefined) {
      const added = before.node === undefined
      const check = added ? CHECKS.typeNarrowed : CHECKS.typeWidened
      this.direct(operation, check, added ? 'added' : 'removed', added ? after.ptr : before.ptr,
        `${where}: ${added ? 'a schema was added' : 'the schema was removed'}`, side)
      return
    }
    this.#roots.push({ operation, where, node: this.#graph.node(side, before, after, '') })
  }

  // ---------------------------------------------------------------- the document

  private compareDocument(before: Loc, after: Loc): void {
    const b = before.node as JsonObject
    const a = after.node as JsonObject
    if (member(b, 'openapi') !== member(a, 'openapi')) {
      this.documentChange(CHECKS.openapiVersionChanged, 'changed', '/openapi', `the OpenAPI version changed from ${shown(member(b, 'openapi'))} to ${shown(member(a, 'openapi'))}`)
    }
    if (!deepEqual(member(b, 'servers'), member(a, 'servers'))) {
      const kind: ChangeKind = !hasOwn(b, 'servers') ? 'added' : !hasOwn(a, 'servers') ? 'removed' : 'changed'
      this.documentChange(CHECKS.serversChanged, kind, '/servers', `the servers were ${kind}`)
    }
    const bInfo = child(before, 'info')
    const aInfo = child(after, 'info')
    const bi = isObject(bInfo.node) ? bInfo.node : {}
    const ai = isObject(aInfo.node) ? aInfo.node : {}
    for (const key of keywordsOf(bi, ai)) {
      if (deepEqual(member(bi, key), member(ai, key))) continue
      const kind: ChangeKind = !hasOwn(bi, key) ? 'added' : !hasOwn(ai, key) ? 'removed' : 'changed'
      const message = key === 'version' && kind === 'changed'
        ? `info.version changed from ${shown(bi.version)} to ${shown(ai.version)}`
        : `info.${key} was ${kind}`
      this.documentChange(CHECKS.annotationChanged, kind, kind === 'removed' ? child(bInfo, key).ptr : child(aInfo, key).ptr, message)
    }
    for (const key of keywordsOf(b, a)) {
      if (['openapi', 'servers', 'info', 'paths', 'webhooks', 'components', 'security'].includes(key)) continue
      if (deepEqual(member(b, key), member(a, key))) continue
      const kind: ChangeKind = !hasOwn(b, key) ? 'added' : !hasOwn(a, key) ? 'removed' : 'changed'
      const pointer = kind === 'removed' ? child(before, key).ptr : child(after, key).ptr
      // tags, externalDocs and extensions document; anything else (jsonSchemaDialect) may change meaning.
      const check = key === 'tags' || key === 'externalDocs' || key.startsWith('x-') ? CHECKS.annotationChanged : CHECKS.schemaChanged
      this.documentChange(check, kind, pointer, `${key} was ${kind}`)
    }
  }

  // ---------------------------------------------------------------- operations

  private comparePaths(before: Loc, after: Loc, webhooks: boolean): void {
    const bPaths = isObject(before.node) ? Object.keys(before.node) : []
    const aPaths = isObject(after.node) ? Object.keys(after.node) : []
    const key = (path: string) => (webhooks ? path : templateKey(path))
    const bByKey = new Map<string, string>()
    for (const path of bPaths) if (!bByKey.has(key(path))) bByKey.set(key(path), path)
    const matched = new Set<string>()
    for (const path of aPaths) {
      const bPath = bByKey.get(key(path))
      if (bPath !== undefined) matched.add(bPath)
      // A path item equal on both sides, down to everything it references, has nothing to report.
      if (bPath === path && this.#sameContext && this.#unchanged.at(childPointer(after.ptr, path))) continue
      this.comparePathItem(bPath, path, before, after, webhooks)
    }
    for (const path of bPaths) if (!matched.has(path)) this.comparePathItem(path, undefined, before, after, webhooks)
  }

  private label(path: string, webhooks: boolean): string {
    return webhooks ? `webhooks/${path}` : path
  }

  private comparePathItem(bPath: string | undefined, aPath: string | undefined, bPaths: Loc, aPaths: Loc, webhooks: boolean): void {
    const bItem = bPath === undefined ? undefined : this.#before.follow(child(bPaths, bPath))
    const aItem = aPath === undefined ? undefined : this.#after.follow(child(aPaths, aPath))
    for (const { method, bOp, aOp } of pairOperations(bItem, aItem)) {
      const hasB = bOp !== undefined
      const hasA = aOp !== undefined
      const operation = this.#result.operation({ method, path: this.label(hasA ? aPath! : bPath!, webhooks) })
      const kind = webhooks ? 'webhook' : 'operation'
      if (!hasA) {
        const deprecated = member(bOp!.node as JsonObject, 'deprecated') === true
        this.direct(operation, deprecated ? CHECKS.deprecatedOperationRemoved : CHECKS.operationRemoved, 'removed', bOp!.ptr,
          `the ${deprecated ? 'deprecated ' : ''}${kind} was removed`)
      } else if (!hasB) {
        this.direct(operation, CHECKS.operationAdded, 'added', aOp!.ptr, `the ${kind} was added`)
      } else {
        this.compareOperation(operation, { item: bItem!, op: bOp!, path: bPath! }, { item: aItem!, op: aOp!, path: aPath! }, webhooks, '')
      }
    }
  }

  private compareOperation(operation: number, before: OperationLocs, after: OperationLocs, reversed: boolean, prefix: string): void {
    const b = before.op.node as JsonObject
    const a = after.op.node as JsonObject
    const what = prefix === '' ? 'the operation' : prefix.replace(/: $/, '')
    if ((member(b, 'deprecated') === true) !== (member(a, 'deprecated') === true)) {
      const now = member(a, 'deprecated') === true
      this.direct(operation, CHECKS.operationDeprecated, 'changed', child(after.op, 'deprecated').ptr, `${prefix}${what === 'the operation' ? 'the operation' : 'it'} is ${now ? 'now' : 'no longer'} deprecated`)
    }
    if (member(b, 'operationId') !== member(a, 'operationId')) {
      this.direct(operation, CHECKS.operationIdChanged, hasOwn(a, 'operationId') ? (hasOwn(b, 'operationId') ? 'changed' : 'added') : 'removed',
        hasOwn(a, 'operationId') ? child(after.op, 'operationId').ptr : child(before.op, 'operationId').ptr,
        `${prefix}operationId changed from ${shown(member(b, 'operationId') ?? null)} to ${shown(member(a, 'operationId') ?? null)}`)
    }
    this.annotations(before.op, after.op, what, (kind, pointer, message) => this.direct(operation, CHECKS.annotationChanged, kind, pointer, message))
    // Webhooks and callbacks are requests the API sends: their request side is read by the receiver.
    const sendSide: Side = reversed ? 'response' : 'request'
    const readSide: Side = reversed ? 'request' : 'response'
    this.compareParameters(operation, before, after, sendSide, prefix)
    this.compareRequestBody(operation, child(before.op, 'requestBody'), child(after.op, 'requestBody'), sendSide, prefix)
    this.compareResponses(operation, child(before.op, 'responses'), child(after.op, 'responses'), readSide, prefix)
    if (!reversed) this.compareSecurity(operation, before.op, after.op, prefix)
    this.compareCallbacks(operation, child(before.op, 'callbacks'), child(after.op, 'callbacks'), prefix)
  }

  private compareCallbacks(operation: number, before: Loc, after: Loc, prefix: string): void {
    const b = isObject(before.node) ? before.node : {}
    const a = isObject(after.node) ? after.node : {}
    for (const name of keywordsOf(b, a)) {
      const bCallback = this.#before.follow(child(before, name))
      const aCallback = this.#after.follow(child(after, name))
      const bc = isObject(bCallback.node) ? bCallback.node : {}
      const ac = isObject(aCallback.node) ? aCallback.node : {}
      for (const expression of keywordsOf(bc, ac)) {
        const bItem = this.#before.follow(child(bCallback, expression))
        const aItem = this.#after.follow(child(aCallback, expression))
        for (const { method, bOp, aOp } of pairOperations(bItem, aItem)) {
          const hasB = bOp !== undefined
          const hasA = aOp !== undefined
          const label = `${prefix}callback ${shown(name)} ${method.toUpperCase()} ${expression}`
          if (!hasA) this.direct(operation, CHECKS.operationRemoved, 'removed', bOp!.ptr, `${label} was removed`)
          else if (!hasB) this.direct(operation, CHECKS.operationAdded, 'added', aOp.ptr, `${label} was added`)
          else this.compareOperation(operation, { item: bItem, op: bOp, path: expression }, { item: aItem, op: aOp, path: expression }, true, `${label}: `)
        }
      }
    }
  }

  // ---------------------------------------------------------------- parameters

  /** The parameters of an operation with those of its path item, by location and name. */
  private parameters(locs: OperationLocs, document: JsonDocument): Map<string, Loc> {
    const found = new Map<string, Loc>()
    const names = templateNames(locs.path)
    for (const source of [child(locs.item, 'parameters'), child(locs.op, 'parameters')]) {
      if (!Array.isArray(source.node)) continue
      source.node.forEach((_, i) => {
        const parameter = document.follow(child(source, i))
        if (!isObject(parameter.node)) return
        const where = member(parameter.node, 'in')
        const name = member(parameter.node, 'name')
        if (typeof where !== 'string' || typeof name !== 'string') return
        // Path parameters match by their place in the path: /pets/{id} and /pets/{petId} are one operation.
        const position = where === 'path' ? names.indexOf(name) : -1
        const key = where === 'path' && position >= 0 ? `path#${position}` : where === 'header' ? `header:${name.toLowerCase()}` : `${where}:${name}`
        found.set(key, parameter)
      })
    }
    return found
  }

  private compareParameters(operation: number, before: OperationLocs, after: OperationLocs, side: Side, prefix: string): void {
    const bParameters = this.parameters(before, this.#before)
    const aParameters = this.parameters(after, this.#after)
    const label = (p: JsonObject) => `${prefix}${String(p.in)} parameter \`${String(p.name)}\``
    for (const [key, bParameter] of bParameters) {
      if (aParameters.has(key)) continue
      const p = bParameter.node as JsonObject
      const deprecated = member(p, 'deprecated') === true
      this.direct(operation, deprecated ? CHECKS.deprecatedParameterRemoved : CHECKS.parameterRemoved, 'removed', bParameter.ptr,
        `${label(p)} was removed`)
    }
    for (const [key, aParameter] of aParameters) {
      const p = aParameter.node as JsonObject
      const bParameter = bParameters.get(key)
      if (!bParameter) {
        const required = member(p, 'required') === true
        this.direct(operation, required ? CHECKS.requiredParameterAdded : CHECKS.parameterAdded, 'added', aParameter.ptr,
          `${required ? 'required' : 'optional'} ${label(p)} was added`)
        continue
      }
      this.compareParameter(operation, bParameter, aParameter, label(p), side)
    }
  }

  private compareParameter(operation: number, before: Loc, after: Loc, label: string, side: Side): void {
    const b = before.node as JsonObject
    const a = after.node as JsonObject
    if (member(b, 'name') !== member(a, 'name')) {
      this.direct(operation, CHECKS.annotationChanged, 'changed', child(after, 'name').ptr, `${label} was renamed from ${shown(member(b, 'name'))}`)
    }
    const wasRequired = member(b, 'required') === true
    const isRequired = member(a, 'required') === true
    if (wasRequired !== isRequired) {
      this.direct(operation, isRequired ? CHECKS.parameterBecameRequired : CHECKS.parameterBecameOptional, 'changed', child(after, 'required').ptr,
        `${label} ${isRequired ? 'became required' : 'is no longer required'}`)
    }
    if ((member(b, 'deprecated') === true) !== (member(a, 'deprecated') === true)) {
      const now = member(a, 'deprecated') === true
      this.direct(operation, CHECKS.parameterDeprecated, 'changed', child(after, 'deprecated').ptr, `${label} is ${now ? 'now' : 'no longer'} deprecated`)
    }
    const bSerialization = serialization(b)
    const aSerialization = serialization(a)
    for (const key of Object.keys(aSerialization) as (keyof typeof aSerialization)[]) {
      if (bSerialization[key] === aSerialization[key]) continue
      this.direct(operation, CHECKS.parameterSerializationChanged, 'changed', hasOwn(a, key) ? child(after, key).ptr : child(before, key).ptr,
        `${key} of ${label} changed from ${shown(bSerialization[key])} to ${shown(aSerialization[key])}`)
    }
    this.annotations(before, after, label, (kind, pointer, message) => this.direct(operation, CHECKS.annotationChanged, kind, pointer, message))
    this.schemaRoot(operation, label, side, child(before, 'schema'), child(after, 'schema'))
    this.compareContent(operation, child(before, 'content'), child(after, 'content'), label, side,
      CHECKS.parameterSerializationChanged, CHECKS.parameterSerializationChanged)
  }

  // ---------------------------------------------------------------- bodies and responses

  /** Media types of a body, a response or a parameter: each one's schema is a root on `side`. */
  private compareContent(operation: number, before: Loc, after: Loc, label: string, side: Side, removedCheck: Check, addedCheck: Check): void {
    const b = isObject(before.node) ? before.node : {}
    const a = isObject(after.node) ? after.node : {}
    for (const mediaType of keywordsOf(b, a)) {
      const bMedia = child(before, mediaType)
      const aMedia = child(after, mediaType)
      if (!hasOwn(a, mediaType)) {
        this.direct(operation, removedCheck, 'removed', bMedia.ptr, `${label} no longer has the media type ${mediaType}`, side)
      } else if (!hasOwn(b, mediaType)) {
        this.direct(operation, addedCheck, 'added', aMedia.ptr, `${label} has the new media type ${mediaType}`, side)
      } else {
        const where = `${label} (${mediaType})`
        this.annotations(bMedia, aMedia, where, (kind, pointer, message) => this.direct(operation, CHECKS.annotationChanged, kind, pointer, message))
        if (!deepEqual(member(b[mediaType] as JsonObject, 'encoding'), member(a[mediaType] as JsonObject, 'encoding'))) {
          this.direct(operation, CHECKS.parameterSerializationChanged, 'changed', child(aMedia, 'encoding').ptr, `encoding of ${where} changed`, side)
        }
        this.schemaRoot(operation, where, side, child(bMedia, 'schema'), child(aMedia, 'schema'))
      }
    }
  }

  private compareRequestBody(operation: number, beforeRef: Loc, afterRef: Loc, side: Side, prefix: string): void {
    const before = this.#before.follow(beforeRef)
    const after = this.#after.follow(afterRef)
    const hasB = isObject(before.node)
    const hasA = isObject(after.node)
    const label = `${prefix}request body`
    if (!hasB && !hasA) return
    if (!hasA) {
      this.direct(operation, CHECKS.requestBodyRemoved, 'removed', before.ptr, `the ${label} was removed`)
      return
    }
    const isRequired = member(after.node as JsonObject, 'required') === true
    if (!hasB) {
      this.direct(operation, isRequired ? CHECKS.requiredRequestBodyAdded : CHECKS.requestBodyAdded, 'added', after.ptr,
        `${isRequired ? 'a required' : 'an optional'} ${label} was added`)
      return
    }
    const wasRequired = member(before.node as JsonObject, 'required') === true
    if (wasRequired !== isRequired) {
      this.direct(operation, isRequired ? CHECKS.requestBodyBecameRequired : CHECKS.requestBodyBecameOptional, 'changed', child(after, 'required').ptr,
        `the ${label} ${isRequired ? 'became required' : 'is no longer required'}`)
    }
    this.annotations(before, after, `the ${label}`, (kind, pointer, message) => this.direct(operation, CHECKS.annotationChanged, kind, pointer, message))
    this.compareContent(operation, child(before, 'content'), child(after, 'content'), label, side, CHECKS.requestMediaTypeRemoved, CHECKS.requestMediaTypeAdded)
  }

  private compareResponses(operation: number, before: Loc, after: Loc, side: Side, prefix: string): void {
    const b = isObject(before.node) ? before.node : {}
    const a = isObject(after.node) ? after.node : {}
    for (const status of keywordsOf(b, a)) {
      const label = `${prefix}response ${status}`
      if (status.startsWith('x-')) {
        if (!deepEqual(b[status], a[status])) this.direct(operation, CHECKS.annotationChanged, 'changed', child(after, status).ptr, `${status} of the responses changed`)
        continue
      }
      if (!hasOwn(a, status)) {
        this.direct(operation, isSuccess(status) ? CHECKS.successResponseRemoved : CHECKS.responseRemoved, 'removed', child(before, status).ptr, `${label} was removed`)
        continue
      }
      if (!hasOwn(b, status)) {
        this.direct(operation, CHECKS.responseAdded, 'added', child(after, status).ptr, `${label} was added`)
        continue
      }
      const bResponse = this.#before.follow(child(before, status))
      const aResponse = this.#after.follow(child(after, status))
      this.annotations(bResponse, aResponse, label, (kind, pointer, message) => this.direct(operation, CHECKS.annotationChanged, kind, pointer, message))
      this.compareContent(operation, child(bResponse, 'content'), child(aResponse, 'content'), label, side,
        CHECKS.responseMediaTypeRemoved, CHECKS.responseMediaTypeAdded)
      this.compareHeaders(operation, child(bResponse, 'headers'), child(aResponse, 'headers'), label, side)
    }
  }

  private compareHeaders(operation: number, before: Loc, after: Loc, response: string, side: Side): void {
    const byName = (loc: Loc, document: JsonDocument) => {
      const found = new Map<string, Loc>()
      if (isObject(loc.node)) for (const name of Object.keys(loc.node)) found.set(name.toLowerCase(), document.follow(child(loc, name)))
      return found
    }
    const bHeaders = byName(before, this.#before)
    const aHeaders = byName(after, this.#after)
    const label = (name: string) => `${response} header \`${name}\``
    for (const [name, bHeader] of bHeaders) {
      if (aHeaders.has(name)) continue
      const required = isObject(bHeader.node) && member(bHeader.node, 'required') === true
      this.direct(operation, required ? CHECKS.responseHeaderRemoved : CHECKS.optionalResponseHeaderRemoved, 'removed', bHeader.ptr, `${label(name)} was removed`)
    }
    for (const [name, aHeader] of aHeaders) {
      const bHeader = bHeaders.get(name)
      if (!bHeader) {
        this.direct(operation, CHECKS.responseHeaderAdded, 'added', aHeader.ptr, `${label(name)} was added`)
        continue
      }
      const b = isObject(bHeader.node) ? bHeader.node : {}
      const a = isObject(aHeader.node) ? aHeader.node : {}
      const wasRequired = member(b, 'required') === true
      const isRequired = member(a, 'required') === true
      if (wasRequired !== isRequired) {
        this.direct(operation, isRequired ? CHECKS.responseHeaderBecameRequired : CHECKS.responseHeaderBecameOptional, 'changed',
          child(aHeader, 'required').ptr, `${label(name)} ${isRequired ? 'became required' : 'is no longer required'}`)
      }
      this.annotations(bHeader, aHeader, label(name), (kind, pointer, message) => this.direct(operation, CHECKS.annotationChanged, kind, pointer, message))
      this.schemaRoot(operation, label(name), side, child(bHeader, 'schema'), child(aHeader, 'schema'))
    }
  }

  // ---------------------------------------------------------------- security

  /** An operation's security: its own, else the document's; the pointer of where it is written. */
  private security(op: Loc, document: JsonDocument): { alternatives: Requirement[]; ptr: string } {
    const own = child(op, 'security')
    if (own.node !== undefined) return { alternatives: requirements(own.node), ptr: own.ptr }
    return { alternatives: requirements(document.at('/security')), ptr: '/security' }
  }

  private compareSecurity(operation: number, bOp: Loc, aOp: Loc, prefix: string): void {
    const before = this.security(bOp, this.#before)
    const after = this.security(aOp, this.#after)
    // No requirement at all, or an empty one, lets anonymous clients in.
    const open = (alternatives: Requirement[]) => alternatives.length === 0 ? [new Map() as Requirement] : alternatives
    const bAlternatives = open(before.alternatives)
    const aAlternatives = open(after.alternatives)
    for (const bAlternative of bAlternatives) {
      if (aAlternatives.some((aAlternative) => satisfies(bAlternative, aAlternative))) continue
      const message = bAlternative.size === 0
        ? `${prefix}the operation now requires authentication: ${aAlternatives.map(describe).join(' or ')}`
        : `${prefix}clients authenticating with ${describe(bAlternative)} must now use ${aAlternatives.map(describe).join(' or ')}`
      this.direct(operation, CHECKS.securityAdded, 'changed', after.ptr, message)
    }
    for (const aAlternative of aAlternatives) {
      if (bAlternatives.some((bAlternative) => satisfies(aAlternative, bAlternative))) continue
      const message = aAlternative.size === 0
        ? `${prefix}the operation no longer requires authentication`
        : `${prefix}the operation also accepts ${describe(aAlternative)}`
      this.direct(operation, CHECKS.securityRelaxed, 'changed', after.ptr, message)
    }
  }

  // ---------------------------------------------------------------- components

  /**
   * Components: schemas no operation reaches are compared keyword by keyword (every change
   * non-breaking: no client uses them); other components no operation uses are added, removed or
   * changed; security schemes are compared where operations use them.
   */
  private compareComponents(before: Loc, after: Loc): void {
    const b = isObject(before.node) ? before.node : {}
    const a = isObject(after.node) ? after.node : {}
    const usedSchemes = this.usedSecuritySchemes()
    for (const type of keywordsOf(b, a)) {
      const bGroup = child(before, type)
      const aGroup = child(after, type)
      const bg = isObject(bGroup.node) ? bGroup.node : {}
      const ag = isObject(aGroup.node) ? aGroup.node : {}
      for (const name of keywordsOf(bg, ag)) {
        const component = `${type}/${name}`
        const bLoc = child(bGroup, name)
        const aLoc = child(aGroup, name)
        if (this.#skipUnchanged && this.#unchanged.at(aLoc.ptr)) continue
        if (type === 'securitySchemes' && usedSchemes.has(name)) {
          this.compareSecurityScheme(bLoc, aLoc, component)
          continue
        }
        if (this.#graph.reaches(bLoc.ptr, aLoc.ptr) || (type !== 'schemas' && this.isReferenced(component))) continue
        if (!hasOwn(ag, name)) this.documentChange(CHECKS.componentRemoved, 'removed', bLoc.ptr, `the unused component ${component} was removed`, component)
        else if (!hasOwn(bg, name)) this.documentChange(CHECKS.componentAdded, 'added', aLoc.ptr, `the unused component ${component} was added`, component)
        else if (type === 'schemas') this.compareUnusedSchema(bLoc, aLoc, component)
        else if (!deepEqual(bg[name], ag[name])) this.documentChange(CHECKS.componentChanged, 'changed', aLoc.ptr, `the unused component ${component} changed`, component)
      }
    }
  }

  private compareUnusedSchema(before: Loc, after: Loc, component: string): void {
    const node = this.#graph.node('unused', before, after, '')
    const dirty = this.#graph.changedClosures([node])
    SchemaGraph.collect(node, dirty, new Set(), (change) => this.#result.atDocument(change, component))
  }

  /** Components other than schemas are used when an operation's `$ref` names them (resolved while comparing). */
  private isReferenced(component: string): boolean {
    return this.#before.wasResolved(`#/components/${component}`) || this.#after.wasResolved(`#/components/${component}`)
  }

  private usedSecuritySchemes(): Set<string> {
    const used = new Set<string>()
    const collect = (value: unknown) => {
      for (const requirement of requirements(value)) for (const scheme of requirement.keys()) used.add(scheme)
    }
    for (const document of [this.#before, this.#after]) {
      collect(document.at('/security'))
      const paths = document.at('/paths')
      if (!isObject(paths)) continue
      for (const item of Object.values(paths)) {
        for (const op of operationsOf({ node: item, ptr: '' }).values()) collect((op.node as JsonObject).security)
      }
    }
    return used
  }

  private compareSecurityScheme(before: Loc, after: Loc, component: string): void {
    const b = isObject(before.node) ? before.node : undefined
    const a = isObject(after.node) ? after.node : undefined
    if (deepEqual(b, a)) return
    if (!a || !b) {
      // Operations that start or stop using it report what that means for them.
      this.documentChange(a ? CHECKS.componentAdded : CHECKS.componentRemoved, a ? 'added' : 'removed', a ? after.ptr : before.ptr,
        `the security scheme ${component} was ${a ? 'added' : 'removed'}`, component)
      return
    }
    for (const key of keywordsOf(b, a)) {
      if (deepEqual(b[key], a[key])) continue
      const kind: ChangeKind = !hasOwn(b, key) ? 'added' : !hasOwn(a, key) ? 'removed' : 'changed'
      const pointer = kind === 'removed' ? child(before, key).ptr : child(after, key).ptr
      if (key === 'description' || key.startsWith('x-')) {
        this.documentChange(CHECKS.annotationChanged, kind, pointer, `${key} of the security scheme ${component} was ${kind}`, component)
      } else if (key === 'flows' && !this.flowsNarrowed(b.flows, a.flows)) {
        this.documentChange(CHECKS.securityRelaxed, kind, pointer, `the security scheme ${component} has new OAuth scopes or flows`, component)
      } else {
        this.documentChange(CHECKS.securitySchemeChanged, kind, pointer, `${key} of the security scheme ${component} was ${kind}`, component)
      }
    }
  }

  /** True when OAuth flows changed other than by adding flows or scopes. */
  private flowsNarrowed(before: unknown, after: unknown): boolean {
    const b = isObject(before) ? before : {}
    const a = isObject(after) ? after : {}
    for (const flow of Object.keys(b)) {
      const bf = b[flow]
      const af = a[flow]
      if (!isObject(bf) || !isObject(af)) return true
      for (const key of keywordsOf(bf, af)) {
        if (key === 'scopes') {
          const bScopes = isObject(bf.scopes) ? Object.keys(bf.scopes) : []
          const aScopes = isObject(af.scopes) ? af.scopes : {}
          if (bScopes.some((scope) => !hasOwn(aScopes, scope))) return true
        } else if (key !== 'description' && !deepEqual(bf[key], af[key])) {
          return true
        }
      }
    }
    return false
  }
}

interface OperationLocs {
  /** The path item (its parameters apply to the operation). */
  item: Loc
  op: Loc
  /** The path template, for path parameters by position. */
  path: string
}

export interface DiffOptions {
  /**
   * Skip path items and components equal in both versions down to everything they reference (the
   * default). The result is the same either way; tests compare the two.
   */
  skipUnchanged?: boolean
}

export function diffOpenApi(before: unknown, after: unknown, options: DiffOptions = {}): DiffResult {
  return new OpenApiDiff(before, after, options).run()
}

export type { Operation }
