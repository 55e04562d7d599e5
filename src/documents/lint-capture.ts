/**
 * Which part of a document each of Spectral's results came from (its route: docs/lint.md, "Re-linting
 * only what changed"). Spectral reports a result where its value is defined, so a path item's
 * traversal can report at a component it refers to; a re-lint must know the path item. A rule's
 * function sees the path it was called on and answers raw paths in the resolved document: the unit
 * that raw path lies in is the route. Spectral's lintNode pushes one result per raw result, in order,
 * right after the function answers, so the routes are handed over in that order.
 *
 * Spectral itself is not changed: each rule function of a compiled ruleset is wrapped (the same answer,
 * the same name), and the runner's result list of a captured run (a Document given to `capture`) notes
 * the route of each result pushed to it. Without a capture both do nothing.
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { Ruleset } from './spectral.js'
import { routeOf, WHOLE, type Segment } from './lint-units.js'

const require = createRequire(import.meta.url)
export const ROUTE = Symbol('route')

/** One of Spectral's results as its runner keeps it. */
export interface RawResult {
  code: string | number
  message: string
  path: Segment[]
  severity: number
  source?: string
  range?: unknown
  [ROUTE]?: string
}

export interface Capture {
  /** The runner's own list: every result pushed, before Spectral's de-duplication. */
  results?: RawResult[]
  /** Set when a result's route cannot be known: the run is then good only as a whole lint. */
  unsupported?: string
  pending: string[]
}

/** Rules of spectral:oas called on a container whose results are placed by their raw paths or computed apart (lint-cross-rules.ts). */
export const CONTAINER_RULES = new Set(['operation-operationId-unique', 'path-params', 'operation-tag-defined', 'oas3-unused-component', 'oas3-schema'])

const captures = new WeakMap<object, Capture>()
/** The capture of the run whose rules are being called now (a runner's traversal is synchronous). */
let current: Capture | undefined
let installed = false
const wrapped = new WeakSet<Ruleset>()

interface SpectralRunner { inventory: { document: object }; results: RawResult[]; run(...args: unknown[]): Promise<void> }
type RuleFunction = ((input: unknown, options: unknown, context: { path: Segment[] }) => unknown) & { validator?: unknown }

function spectralCore(path: string): unknown {
  return require(join(dirname(require.resolve('@stoplight/spectral-core')), path))
}

function install(): void {
  if (installed) return
  installed = true
  const { Runner } = spectralCore('runner/runner.js') as { Runner: { prototype: SpectralRunner } }
  const run = Runner.prototype.run
  Runner.prototype.run = function (this: SpectralRunner, ...args: unknown[]) {
    const capture = captures.get(this.inventory.document)
    if (!capture) return run.apply(this, args)
    const results = this.results
    capture.results = results
    results.push = (...items: RawResult[]) => {
      for (const item of items) {
        const route = capture.pending.shift()
        if (route === undefined) capture.unsupported ??= 'a result pushed without a rule function'
        else item[ROUTE] = route
      }
      return Array.prototype.push.apply(results, items)
    }
    // The traversal (and with it every rule function) runs before run's first await.
    current = capture
    try {
      return run.apply(this, args)
    } finally {
      current = undefined
    }
  }
}

const { decodeSegmentFragment } = createRequire(require.resolve('@stoplight/spectral-core'))('@stoplight/spectral-runtime') as {
  decodeSegmentFragment: (segment: Segment) => string
}
export { decodeSegmentFragment }

/**
 * Wraps each rule function of a compiled ruleset once, so that a captured run knows its results'
 * routes. Each rule gets a list of its own: the `then` objects of an extended ruleset's rules are
 * shared by every ruleset that extends it, and are left as they are.
 */
export function attributeResults(ruleset: Ruleset): void {
  install()
  if (wrapped.has(ruleset)) return
  wrapped.add(ruleset)
  for (const rule of Object.values(ruleset.rules)) {
    const thens = rule.then as { function: RuleFunction }[]
    rule.then = thens.map((then) => ({ ...then, function: routed(rule.name, then.function) })) as typeof rule.then
  }
}

function routed(name: string, fn: RuleFunction): RuleFunction {
  const wrapper: RuleFunction = function (input, options, context) {
    const capture = current
    if (!capture) return fn(input, options, context)
    capture.pending = []
    const targetPath = context.path.slice()
    // A `field` that finds nothing calls the function once on the container with nothing (an empty
    // `paths` and `@key`): what it answers then is placed by its path like anything else.
    if (routeOf(targetPath) === WHOLE && input !== undefined && !CONTAINER_RULES.has(name)) capture.unsupported ??= `rule ${name} looks at a whole container`
    const results = fn(input, options, context) as { path?: Segment[] }[] | Promise<unknown> | undefined
    if (results && typeof (results as Promise<unknown>).then === 'function') {
      capture.unsupported ??= `rule ${name} answers asynchronously`
    } else if (Array.isArray(results)) {
      for (const result of results) capture.pending.push(routeOf((result.path ?? targetPath).map(decodeSegmentFragment)))
    }
    return results
  }
  Object.defineProperty(wrapper, 'name', { value: fn.name })
  if (fn.validator) wrapper.validator = fn.validator
  return wrapper
}

/** Runs a lint of this Document with its results' routes noted. */
export async function captured<T>(document: object, lint: () => Promise<T>): Promise<{ value: T; capture: Capture }> {
  install()
  const capture: Capture = { pending: [] }
  captures.set(document, capture)
  try {
    return { value: await lint(), capture }
  } finally {
    captures.delete(document)
  }
}

/** Spectral's message templates (its runner's own), for results computed apart. */
export const renderMessage = (spectralCore('runner/utils/message.js') as { message: (template: string, vars: object) => string }).message
