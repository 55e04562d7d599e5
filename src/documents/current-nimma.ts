/**
 * Spectral matches its rules' `given` with nimma's `legacy` build: Babel's output for old engines,
 * where every private field goes through helper functions (0.3 s of a 5 s lint of
 * `amazonaws.com--ec2`, docs/lint.md). nimma ships the same version of the same source built for
 * current engines beside it. Spectral's runner reads the engine from the legacy module at each lint
 * (`legacy_1.default`), so that module's default export is pointed at the current build's engine:
 * the same expressions compiled the same way, without the helpers. The JSONPath guard parses filters
 * with this same build's parsers (`nimmaModule`), so what it checks is what runs.
 */
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
/** Requires as spectral-core does: its copy of nimma. */
const spectralRequire = (): NodeJS.Require => createRequire(require.resolve('@stoplight/spectral-core'))

/** The require of Spectral's copy of nimma, at the entry of the build that runs the rules. */
export function nimmaModule(): NodeJS.Require {
  return createRequire(spectralRequire().resolve('nimma'))
}

let engines: { legacy: { default: unknown }; legacyEngine: unknown; currentEngine: unknown } | undefined

/** Points Spectral at nimma's build for current engines; call before Spectral lints. */
export function installCurrentNimma(): void {
  if (engines) return
  const legacy = spectralRequire()('nimma/legacy') as { default: unknown }
  const current = spectralRequire()('nimma') as { default: unknown }
  if (typeof current.default !== 'function') throw new Error('nimma\'s build for current engines has no engine')
  engines = { legacy, legacyEngine: legacy.default, currentEngine: current.default }
  legacy.default = current.default
}

/** Runs Spectral with nimma's legacy build again, or not (the lint differential's plain Spectral side). */
export function useCurrentNimma(on: boolean): void {
  installCurrentNimma()
  engines!.legacy.default = on ? engines!.currentEngine : engines!.legacyEngine
}
