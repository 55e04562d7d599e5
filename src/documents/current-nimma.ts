/**
 * Spectral matches its rules' `given` with nimma's `legacy` build: Babel's output for old engines,
 * where every private field goes through helper functions (0.3 s of a 5 s lint of
 * `amazonaws.com--ec2`, docs/lint.md). nimma ships the same version of the same source built for
 * current engines beside it. Spectral's runner reads the engine from the legacy module at each lint
 * (`legacy_1.default`), so that module's default export is pointed at the current build's engine:
 * the same expressions compiled the same way, without the helpers. The JSONPath guard parses filters
 * with this same build's parsers (`nimmaModule`), so what it checks is what runs. Each set of
 * expressions is compiled once (compiledOnce).
 */
import { createRequire } from 'node:module'
import { LRUCache } from 'lru-cache'

const require = createRequire(import.meta.url)
/** Requires as spectral-core does: its copy of nimma. */
const spectralRequire = (): NodeJS.Require => createRequire(require.resolve('@stoplight/spectral-core'))

/** The require of Spectral's copy of nimma, at the entry of the build that runs the rules. */
export function nimmaModule(): NodeJS.Require {
  return createRequire(spectralRequire().resolve('nimma'))
}

let engines: { legacy: { default: unknown }; legacyEngine: unknown; currentEngine: unknown } | undefined

/** Points Spectral at nimma's build for current engines, each set of expressions compiled once; call before Spectral lints. */
export function installCurrentNimma(): void {
  if (engines) return
  const legacy = spectralRequire()('nimma/legacy') as { default: unknown }
  const current = spectralRequire()('nimma') as { default: unknown }
  if (typeof current.default !== 'function') throw new Error('nimma\'s build for current engines has no engine')
  engines = { legacy, legacyEngine: legacy.default, currentEngine: compiledOnce(current.default as Engine) }
  legacy.default = engines.currentEngine
}

type Engine = new (expressions: string[], options?: EngineOptions) => object
interface EngineOptions { fallback?: object | null; unsafe?: boolean; output?: string; customShorthands?: Record<string, string> | null; npmProvider?: string | null }

/** Compiled engines kept per fallback: two per ruleset (its resolved and unresolved rules' expressions). */
const ENGINES_KEPT = 64

/**
 * The engine, made once for each set of expressions. Spectral's runner makes a new engine at every
 * lint (one for the rules on the resolved document, one for the others), and each parses its
 * expressions, generates JavaScript and compiles it: 7 to 30 ms a lint, whatever the document. The
 * generated function keeps nothing between queries (each query has a scope of its own, and a query
 * runs to its end before the next starts), so one engine answers every lint with the same expressions
 * as a new one would. Only the options Spectral's runner gives are kept this way; any other call
 * gets a new engine, as before.
 */
function compiledOnce(Engine: Engine): Engine {
  const kept = new WeakMap<object, LRUCache<string, object>>()
  function engineFor(expressions: string[], options?: EngineOptions): object {
    if (!asSpectralRuns(options)) return new Engine(expressions, options)
    let engines = kept.get(options.fallback)
    if (!engines) kept.set(options.fallback, (engines = new LRUCache({ max: ENGINES_KEPT })))
    const key = JSON.stringify(expressions)
    let engine = engines.get(key)
    if (!engine) engines.set(key, (engine = new Engine(expressions, options)))
    return engine
  }
  // Called with `new` by Spectral: a constructor that returns an object gives that object.
  engineFor.prototype = Engine.prototype
  return engineFor as unknown as Engine
}

/** The options of Spectral's runner (runner.js `execute`): a fallback, not unsafe, `auto` output, no shorthands. */
function asSpectralRuns(options: EngineOptions | undefined): options is EngineOptions & { fallback: object } {
  return options !== undefined && typeof options.fallback === 'object' && options.fallback !== null && options.unsafe === false
    && options.output === 'auto' && options.npmProvider === undefined
    && typeof options.customShorthands === 'object' && options.customShorthands !== null && Object.keys(options.customShorthands).length === 0
}

/** Runs Spectral with nimma's legacy build again, or not (the lint differential's plain Spectral side). */
export function useCurrentNimma(on: boolean): void {
  installCurrentNimma()
  engines!.legacy.default = on ? engines!.currentEngine : engines!.legacyEngine
}
