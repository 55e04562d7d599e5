/**
 * Turning uploaded text into a document: JSON (fast path) or YAML 1.2 with the attack surface of YAML
 * closed (alias bombs, custom tags, multi-document streams, deep nesting).
 */
import { parseDocument, isMap, isSeq, isPair, isScalar, isAlias, Scalar } from 'yaml'
import type { Document, Node as YamlNode, Pair as YamlPair, YAMLError } from 'yaml'
import { LineCounter } from 'yaml'
import { RegistryError } from '../errors.js'
import type { ProblemItem } from '../errors.js'
import type { DocumentFormat } from './types.js'
import { MAX_ALIAS_COUNT, MAX_DEPTH, MAX_EXPANSION, MAX_PROBLEMS, MIN_EXPANSION_ALLOWANCE } from './limits.js'

export interface ParsedDocument {
  document: unknown
  format: DocumentFormat
}

const TOO_DEEP = `the document is nested too deeply (more than ${MAX_DEPTH} levels)`

function invalid(detail: string, messages: string[] = [detail]): RegistryError {
  const errors: ProblemItem[] = messages.slice(0, MAX_PROBLEMS).map((message) => ({ message, path: [] }))
  return new RegistryError('invalid_document', detail, errors)
}

/** Index of the first character that is not whitespace (and not a byte-order mark). */
function firstSignificant(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    // space, tab, LF, CR, BOM
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0xfeff) return i
  }
  return -1
}

/**
 * Parses a document sent as text. JSON is tried first when the text starts like JSON (`{` or `[`);
 * everything else, and JSON that does not parse, is read as YAML 1.2 (of which JSON is a subset).
 * Throws `invalid_document` with readable messages (YAML errors carry line and column).
 */
export function parseDocumentText(text: string): ParsedDocument {
  const start = firstSignificant(text)
  if (start === -1) throw invalid('the document is empty')
  const first = text[start]
  let jsonError: string | undefined
  if (first === '{' || first === '[') {
    try {
      return { document: JSON.parse(start === 0 ? text : text.slice(start)), format: 'json' }
    } catch (err) {
      jsonError = err instanceof Error ? err.message : String(err)
    }
  }
  try {
    return { document: parseYaml(text), format: 'yaml' }
  } catch (err) {
    if (err instanceof RegistryError && jsonError !== undefined) {
      // It looked like JSON: say why JSON failed first, then what YAML made of it.
      const yamlMessages = (err.errors ?? []).map((e) => `as YAML: ${e.message}`)
      throw invalid(`the document is neither valid JSON nor valid YAML: ${jsonError}`, [
        `as JSON: ${jsonError}`,
        ...yamlMessages,
      ])
    }
    throw err
  }
}

function yamlMessage(e: YAMLError, lines: LineCounter): string {
  // The yaml package's own messages end with "at line L, column C:" plus a source excerpt; keep one line.
  const firstLine = e.message.split('\n')[0].replace(/:$/, '')
  if (/ at line \d+, column \d+$/.test(firstLine)) return firstLine
  const pos = lines.linePos(e.pos[0])
  return `${firstLine} at line ${pos.line}, column ${pos.col}`
}

const YAML_ERROR_HINTS: Record<string, string> = {
  TAG_RESOLVE_FAILED: 'custom and non-JSON YAML tags are not allowed',
  MULTIPLE_DOCS: 'a YAML stream with several documents is not allowed: send one document',
  DUPLICATE_KEY: 'duplicate keys are not allowed',
}

function parseYaml(text: string): unknown {
  const lines = new LineCounter()
  let doc: Document.Parsed
  try {
    doc = parseDocument(text, {
      version: '1.2',
      schema: 'core',
      // Duplicate keys are found in checkYamlTree: the package's own check compares every key with
      // every other one in a mapping, which takes seconds for a mapping of 10,000 keys.
      uniqueKeys: false,
      // Merge keys (`<<`) are YAML 1.1, but hand-written OpenAPI documents and rulesets use them widely;
      // the alias limits below bound what they can expand to.
      merge: true,
      resolveKnownTags: false,
      stringKeys: true,
      strict: true,
      prettyErrors: true,
      lineCounter: lines,
      keepSourceTokens: false,
    })
  } catch (err) {
    if (err instanceof RangeError) throw invalid(TOO_DEEP)
    throw err
  }
  const problems = [...doc.errors, ...doc.warnings]
  if (problems.length > 0) {
    if (problems.some((e) => e.code === 'RESOURCE_EXHAUSTION' && /call stack/i.test(e.message))) throw invalid(TOO_DEEP)
    const messages: string[] = []
    const seen = new Set<string>()
    for (const e of problems) {
      const message = yamlMessage(e, lines)
      if (!seen.has(message)) {
        seen.add(message)
        messages.push(message)
      }
    }
    const hint = problems.map((e) => YAML_ERROR_HINTS[e.code]).find((h) => h !== undefined)
    throw invalid(`the document is not valid YAML${hint ? `: ${hint}` : ''}`, messages)
  }
  checkYamlTree(doc, doc.contents as YamlNode | null, lines)
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT })
  } catch (err) {
    if (err instanceof RangeError) throw invalid(TOO_DEEP)
    const message = err instanceof Error ? err.message : String(err)
    if (/alias/i.test(message)) {
      throw invalid(`the document uses too many YAML aliases (at most ${MAX_ALIAS_COUNT}): ${message}`)
    }
    throw invalid(`the document is not valid YAML: ${message}`)
  }
}

/**
 * Walks the YAML syntax tree without recursion, before `toJS` (which recurses and expands aliases):
 * refuses duplicate keys, nesting over MAX_DEPTH, and aliases that would expand the document far beyond its text (MAX_EXPANSION times its own nodes),
 * which `maxAliasCount` alone would still let grow a hundredfold.
 */
function checkYamlTree(doc: Document.Parsed, root: YamlNode | null, lines: LineCounter): void {
  if (root === null) return
  const sizes = new Map<unknown, number>()
  const open = new Set<unknown>()
  let nodes = 0
  // [node, depth, exiting]
  const stack: [YamlNode | YamlPair, number, boolean][] = [[root, 1, false]]
  while (stack.length > 0) {
    const [node, depth, exiting] = stack.pop()!
    if (exiting) {
      open.delete(node)
      let size = 1
      if (isPair(node)) size = (sizes.get(node.key) ?? 1) + (sizes.get(node.value) ?? 1)
      else if (isAlias(node)) size = sizes.get(node.resolve(doc)) ?? 1
      else if (isMap(node) || isSeq(node)) for (const item of node.items as unknown[]) size += sizes.get(item) ?? 1
      sizes.set(node, size)
      continue
    }
    if (sizes.has(node)) continue
    nodes++
    if (isPair(node)) {
      const key = node.key
      stack.push([node, depth, true])
      if (node.value) stack.push([node.value as YamlNode, depth, false])
      if (node.key) stack.push([node.key as YamlNode, depth, false])
    } else if (isMap(node) || isSeq(node)) {
      if (depth > MAX_DEPTH) throw invalid(TOO_DEEP)
      if (isMap(node)) checkUniqueKeys(node.items as YamlPair[], lines)
      open.add(node)
      stack.push([node, depth, true])
      for (const item of node.items as (YamlNode | YamlPair)[]) stack.push([item, depth + 1, false])
    } else if (isAlias(node)) {
      const target = node.resolve(doc)
      if (target && open.has(target)) throw invalid('a YAML alias refers to a node that contains it: the document would be infinite')
      stack.push([node, depth, true])
      if (target && !sizes.has(target)) stack.push([target, depth, false])
    } else {
      sizes.set(node, 1)
    }
  }
  const expanded = sizes.get(root) ?? 1
  const allowed = Math.max(MIN_EXPANSION_ALLOWANCE, MAX_EXPANSION * nodes)
  if (expanded > allowed) {
    throw invalid(
      `YAML aliases expand the document too much (${Math.round(expanded / nodes)} times its size; at most ${MAX_EXPANSION} times)`,
    )
  }
}

function checkUniqueKeys(pairs: readonly YamlPair[], lines: LineCounter): void {
  const seen = new Set<string>()
  for (const pair of pairs) {
    if (!isScalar(pair.key)) continue
    const key = String(pair.key.value)
    if (!seen.has(key)) {
      seen.add(key)
      continue
    }
    const at = pair.key.range ? lines.linePos(pair.key.range[0]) : undefined
    const where = at ? ` at line ${at.line}, column ${at.col}` : ''
    const shown = key.length > 100 ? key.slice(0, 100) + '…' : key
    throw invalid('the document is not valid YAML: duplicate keys are not allowed', [`duplicate key '${shown}'${where}`])
  }
}

function describeType(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return `a ${typeof value}`
}

/**
 * Checks what every stored document must be: a plain object at the top, nesting of at most
 * MAX_DEPTH, and only JSON values (finite numbers; YAML's .inf and .nan have no JSON form).
 * Iterative, so hostile depth cannot overflow the stack; a cyclic structure (from YAML aliases)
 * is refused as too deep.
 */
export function assertDocumentShape(doc: unknown): asserts doc is Record<string, unknown> {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new RegistryError('invalid_document', 'the document must be an object', [
      { message: `the document must be an object, not ${describeType(doc)}`, path: [] },
    ])
  }
  // Two parallel stacks (no allocation per node): paths are only worked out for a problem.
  const nodes: object[] = [doc]
  const depths: number[] = [1]
  while (nodes.length > 0) {
    const node = nodes.pop()!
    const depth = depths.pop()!
    if (depth > MAX_DEPTH) {
      throw new RegistryError('invalid_document', TOO_DEEP, [{ message: TOO_DEEP, path: [] }])
    }
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const v: unknown = node[i]
        if (v !== null && typeof v === 'object') {
          nodes.push(v)
          depths.push(depth + 1)
        } else if (!isJsonScalar(v)) refuseValue(doc, node, i, v)
      }
    } else {
      const obj = node as Record<string, unknown>
      for (const key of Object.keys(obj)) {
        const v = obj[key]
        if (v !== null && typeof v === 'object') {
          nodes.push(v)
          depths.push(depth + 1)
        } else if (!isJsonScalar(v)) refuseValue(doc, node, key, v)
      }
    }
  }
}

function isJsonScalar(v: unknown): boolean {
  return typeof v === 'string' || typeof v === 'boolean' || v === null || (typeof v === 'number' && Number.isFinite(v))
}

function refuseValue(doc: object, parent: object, key: string | number, v: unknown): never {
  const message =
    typeof v === 'number'
      ? `${Number.isNaN(v) ? 'NaN' : 'an infinite number'} has no JSON representation`
      : `a ${typeof v} value has no JSON representation`
  throw new RegistryError('invalid_document', `the document holds a value that JSON cannot represent: ${message}`, [
    { message, path: [...(pathTo(doc, parent) ?? []), key] },
  ])
}

/** The path from `doc` to the object `target` (depth is already known to be bounded). */
function pathTo(doc: object, target: object): (string | number)[] | null {
  const stack: [object, (string | number)[]][] = [[doc, []]]
  while (stack.length > 0) {
    const [node, path] = stack.pop()!
    if (node === target) return path
    if (path.length >= MAX_DEPTH) continue
    const entries: [string | number, unknown][] = Array.isArray(node) ? node.map((v, i) => [i, v]) : Object.entries(node)
    for (const [k, v] of entries) if (v !== null && typeof v === 'object') stack.push([v, [...path, k]])
  }
  return null
}
