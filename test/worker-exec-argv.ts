import { readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadsTsx } from '../src/worker-exec-argv.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/**
 * The node options of in-process test registries' worker threads: this process's without the test
 * runner's own. tap starts each test file with its module hooks (mocks, process info) and source maps;
 * worker threads inherit them by default and then load every module through those hooks, which made
 * each worker's start several times slower.
 *
 * tsx is dropped too when the build is current (`npm test` builds first): the registry then starts the
 * workers' compiled twins in dist/ (workerModule), which load in about half the time of the TypeScript
 * source under tsx. When a source file is newer than its compiled twin (an edit not built yet), the
 * workers keep tsx and run the source, so a test never runs stale code.
 * `typescript`: keep tsx whatever the build, for a worker module given as TypeScript (a test fixture).
 */
export function workerExecArgv(options: { typescript?: boolean } = {}): string[] {
  const dropTsx = !options.typescript && compiledTwinsCurrent()
  const dropped = (module: string | undefined) =>
    module !== undefined && (module.includes('@tapjs/') || (dropTsx && loadsTsx(module)))
  const kept: string[] = []
  const args = process.execArgv
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === '--enable-source-maps') continue
    const joined = /^--(?:import|loader)=(.*)$/.exec(arg)
    if (joined && dropped(joined[1])) continue
    // `--import <module>` in two words: drop both.
    if ((arg === '--import' || arg === '--loader') && dropped(args[i + 1])) { i++; continue }
    kept.push(arg)
  }
  return kept
}

let current: boolean | undefined

/** Whether every source file under src/ has a compiled twin in dist/ written after it. */
function compiledTwinsCurrent(): boolean {
  current ??= sourceFiles(join(ROOT, 'src')).every((source) => {
    const twin = join(ROOT, 'dist', relative(join(ROOT, 'src'), source)).replace(/\.ts$/, '.js')
    try {
      return statSync(twin).mtimeMs >= statSync(source).mtimeMs
    } catch {
      return false
    }
  })
  return current
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}
