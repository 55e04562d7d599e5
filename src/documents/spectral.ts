/**
 * Spectral, loaded on first use (these are CommonJS packages and heavy: the main thread imports the
 * documents layer's light modules and must not pay for Spectral, which only runs in worker threads).
 */
import { createRequire } from 'node:module'
import { installCurrentNimma } from './current-nimma.js'
import { installDependencyGraphSpeedup } from './dependency-graph-speedup.js'
import { installValidatorCache } from './validator-cache.js'
import type * as SpectralCore from '@stoplight/spectral-core'
import type * as SpectralFunctions from '@stoplight/spectral-functions'
import type * as SpectralFormats from '@stoplight/spectral-formats'
import type * as SpectralRulesets from '@stoplight/spectral-rulesets'
import type * as SpectralParsers from '@stoplight/spectral-parsers'
import type * as SpectralRefResolver from '@stoplight/spectral-ref-resolver'

const require = createRequire(import.meta.url)

export interface SpectralModules {
  core: typeof SpectralCore
  functions: typeof SpectralFunctions
  formats: typeof SpectralFormats
  rulesets: typeof SpectralRulesets
  parsers: typeof SpectralParsers
  refResolver: typeof SpectralRefResolver
}

let modules: SpectralModules | undefined

export function spectral(): SpectralModules {
  installValidatorCache()
  installDependencyGraphSpeedup()
  installCurrentNimma()
  modules ??= {
    core: require('@stoplight/spectral-core') as typeof SpectralCore,
    functions: require('@stoplight/spectral-functions') as typeof SpectralFunctions,
    formats: require('@stoplight/spectral-formats') as typeof SpectralFormats,
    rulesets: require('@stoplight/spectral-rulesets') as typeof SpectralRulesets,
    parsers: require('@stoplight/spectral-parsers') as typeof SpectralParsers,
    refResolver: require('@stoplight/spectral-ref-resolver') as typeof SpectralRefResolver,
  }
  return modules
}

export type Ruleset = SpectralCore.Ruleset
