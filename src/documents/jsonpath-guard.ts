/**
 * JSONPath expressions in rulesets (`given`, aliases, `then.field`) are compiled by Spectral's
 * JSONPath engine (nimma) into JavaScript, and the script parts of filters (`$..[?(@.type == 'x')]`)
 * are pasted into that code with only a shallow sandbox: `@.constructor.constructor('…')()` runs
 * arbitrary code in the worker. So every script part is parsed here with the very parser nimma uses
 * and must stay inside a small allowlist: literals, `@…` shorthands, member access by plain names
 * (never `constructor`, `__proto__`, `prototype` …), comparisons and logic, and calls of a few
 * side-effect-free string methods. Anything else is refused before a ruleset is ever compiled.
 */
import { createRequire } from 'node:module'
import { nimmaModule } from './current-nimma.js'

const require = createRequire(import.meta.url)

interface JsepNode {
  type: string
  [key: string]: unknown
}

interface NimmaNode {
  type: string
  value?: unknown
}

interface Engines {
  parsePath: (expression: string) => NimmaNode[]
  parseScript: (script: string) => JsepNode
}

let engines: Engines | undefined

/**
 * nimma's own parsers, from the copy and build of nimma that Spectral runs (current-nimma.ts).
 * Spectral is loaded first so the shared `jsep` instance carries every plugin that any engine
 * registers (nimma's and jsonpath-plus's): the parse here is exactly the parse at lint time.
 */
function load(): Engines {
  if (engines) return engines
  const spectralRequire = createRequire(require.resolve('@stoplight/spectral-core'))
  spectralRequire('@stoplight/spectral-core')
  const nimmaRequire = nimmaModule()
  const pick = <T>(mod: unknown): T => ((mod as { default?: T }).default ?? mod) as T
  const parsePath = pick<(e: string) => NimmaNode[]>(nimmaRequire('./parser/index.js'))
  const parseScript = pick<(s: string) => JsepNode>(nimmaRequire('./parser/jsep.js'))
  if (typeof parsePath !== 'function' || typeof parseScript !== 'function') {
    throw new Error('the JSONPath guard cannot load the parsers of nimma')
  }
  engines = { parsePath, parseScript }
  return engines
}

/** Member names never reachable from a filter: the ways out of the sandbox to constructors. */
const BLOCKED_MEMBERS = new Set([
  'constructor',
  '__proto__',
  'prototype',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
  'caller',
  'callee',
  'arguments',
])

/** Methods that may be called: pure functions of strings (and arrays of strings) without callbacks. */
const SAFE_METHODS = new Set([
  'match',
  'test',
  'includes',
  'startsWith',
  'endsWith',
  'indexOf',
  'lastIndexOf',
  'toLowerCase',
  'toUpperCase',
  'trim',
  'trimStart',
  'trimEnd',
  'charAt',
  'charCodeAt',
  'codePointAt',
  'at',
  'substring',
  'substr',
  'slice',
  'split',
  'search',
  'toString',
  'hasOwnProperty',
  'localeCompare',
  'normalize',
  'join',
])

/** nimma's shorthands (`@` is the current value, `@property` its key …). */
const SHORTHANDS = new Set([
  '@',
  '@root',
  '@path',
  '@property',
  '@parent',
  '@parentProperty',
  '@string',
  '@number',
  '@boolean',
  '@scalar',
  '@array',
  '@null',
  '@object',
  '@integer',
])

const IDENTIFIERS = new Set(['undefined', 'index'])

function checkNode(node: JsepNode | null | undefined): string | null {
  if (node === null || node === undefined) return null
  switch (node.type) {
    case 'Literal':
      return null
    case 'Identifier': {
      const name = String(node.name)
      if (SHORTHANDS.has(name) || IDENTIFIERS.has(name)) return null
      return `'${name}' is not available in a filter (use @, @property, @path, @parent, @root …)`
    }
    case 'MemberExpression': {
      const problem = checkNode(node.object as JsepNode)
      if (problem) return problem
      const property = node.property as JsepNode
      let name: string
      if (node.computed) {
        if (property.type !== 'Literal' || (typeof property.value !== 'string' && typeof property.value !== 'number')) {
          return 'computed member access is only allowed with a literal name or index, e.g. @["x-name"] or @[0]'
        }
        name = String(property.value)
      } else {
        if (property.type !== 'Identifier') return 'unsupported member access'
        name = String(property.name)
      }
      if (BLOCKED_MEMBERS.has(name)) return `access to '${name}' is not allowed`
      return null
    }
    case 'CallExpression': {
      const callee = node.callee as JsepNode
      for (const arg of (node.arguments as JsepNode[]) ?? []) {
        const problem = checkNode(arg)
        if (problem) return problem
      }
      if (callee.type === 'Identifier' && SHORTHANDS.has(String(callee.name))) return null
      if (callee.type === 'MemberExpression' && !callee.computed) {
        const method = String((callee.property as JsepNode).name)
        if (!SAFE_METHODS.has(method)) return `calling '${method}' is not allowed (allowed: ${[...SAFE_METHODS].join(', ')})`
        return checkNode(callee.object as JsepNode)
      }
      return 'only shorthands such as @string() and string methods such as @.match(/re/) can be called'
    }
    case 'BinaryExpression':
    case 'LogicalExpression':
      return checkNode(node.left as JsepNode) ?? checkNode(node.right as JsepNode)
    case 'UnaryExpression':
      return checkNode(node.argument as JsepNode)
    case 'ConditionalExpression':
      return checkNode(node.test as JsepNode) ?? checkNode(node.consequent as JsepNode) ?? checkNode(node.alternate as JsepNode)
    case 'ArrayExpression':
      for (const element of (node.elements as (JsepNode | null)[]) ?? []) {
        const problem = checkNode(element)
        if (problem) return problem
      }
      return null
    case 'Compound':
      return "a filter must be one expression ('typeof' is not available: use @string(), @number(), @object() …)"
    default:
      return `${node.type} is not allowed in a filter`
  }
}

function checkScript(script: string): string | null {
  let ast: JsepNode
  try {
    ast = load().parseScript(script)
  } catch (err) {
    return `the filter script cannot be parsed: ${err instanceof Error ? err.message : String(err)}`
  }
  // Guard against pathological nesting before the recursive check.
  if (script.length > 10_000) return 'the filter script is too long'
  return checkNode(ast)
}

/**
 * The script parts of an expression, found by scanning: every parenthesised group that is not inside
 * a quoted member name, with JavaScript strings and regular expressions inside it skipped correctly.
 * Returns null when the parentheses do not balance.
 */
export function scriptParts(expression: string): string[] | null {
  const parts: string[] = []
  let i = 0
  while (i < expression.length) {
    const c = expression[i]
    if (c === "'" || c === '"') {
      const end = skipString(expression, i)
      if (end === -1) return null
      i = end
    } else if (c === '(') {
      const end = scanScript(expression, i)
      if (end === -1) return null
      parts.push(expression.slice(i + 1, end))
      i = end + 1
    } else if (c === ')') {
      return null
    } else {
      i++
    }
  }
  return parts
}

/** From an opening quote at `start`, the index just past the closing quote (or -1). */
function skipString(text: string, start: number): number {
  const quote = text[start]
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++
    else if (text[i] === quote) return i + 1
  }
  return -1
}

/** From a `/` that starts a regular expression literal, the index just past its flags (or -1). */
function skipRegex(text: string, start: number): number {
  let inClass = false
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i]
    if (c === '\\') i++
    else if (c === '[') inClass = true
    else if (c === ']') inClass = false
    else if (c === '/' && !inClass) {
      let j = i + 1
      while (j < text.length && /[a-z]/i.test(text[j])) j++
      return j
    } else if (c === '\n') return -1
  }
  return -1
}

/** From the `(` at `start`, the index of its matching `)` (or -1). */
function scanScript(text: string, start: number): number {
  let depth = 0
  let previous = '('
  for (let i = start; i < text.length; ) {
    const c = text[i]
    if (c === "'" || c === '"' || c === '`') {
      const end = skipString(text, i)
      if (end === -1) return -1
      i = end
      previous = 'a'
      continue
    }
    if (c === '/' && '(,=:[!&|?{};+-*%<>~^'.includes(previous)) {
      const end = skipRegex(text, i)
      if (end === -1) return -1
      i = end
      previous = 'a'
      continue
    }
    if (c === '(') depth++
    else if (c === ')') {
      depth--
      if (depth === 0) return i
    }
    if (!/\s/.test(c)) previous = c
    i++
  }
  return -1
}

/**
 * Checks one JSONPath expression. Returns null when it is safe to hand to Spectral, else a reason.
 * Scripts in an expression nimma parses are checked exactly as nimma will compile them. An expression
 * nimma cannot parse goes to Spectral's fallback engine (jsonpath-plus, which evaluates scripts in its
 * own sandbox); its script parts are found by scanning and must pass the same allowlist.
 */
export function checkJsonPath(expression: string): string | null {
  let nodes: NimmaNode[]
  try {
    nodes = load().parsePath(expression)
  } catch {
    const parts = scriptParts(expression)
    if (parts === null) return 'the parentheses of the JSONPath expression do not balance'
    for (const part of parts) {
      const script = part.startsWith('?') ? part.slice(1) : part
      const problem = checkScript(script)
      if (problem) return problem
    }
    return null
  }
  for (const node of nodes) {
    if (node.type === 'ScriptFilterExpression' || node.type === 'ScriptExpression') {
      if (typeof node.value !== 'string') return 'unsupported script in the JSONPath expression'
      const problem = checkScript(node.value)
      if (problem) return problem
    }
  }
  return null
}
