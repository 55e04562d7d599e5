/**
 * `npm run build` runs this after the server's TypeScript: it builds the console with Vite unless
 * its output is newer than every source (console/ and the lock file), so `npm start` stays quick
 * when nothing changed. `--force` always builds.
 */
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = fileURLToPath(new URL('.', import.meta.url))
const output = fileURLToPath(new URL('../dist/console/index.html', import.meta.url))
const lockFile = fileURLToPath(new URL('../package-lock.json', import.meta.url))

function newestIn(directory) {
  let newest = 0
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestIn(path) : statSync(path).mtimeMs)
  }
  return newest
}

function upToDate() {
  if (!existsSync(output)) return false
  const sources = Math.max(newestIn(here), existsSync(lockFile) ? statSync(lockFile).mtimeMs : 0)
  return statSync(output).mtimeMs > sources
}

if (process.argv.includes('--force') || !upToDate()) {
  const { build } = await import('vite')
  const began = Date.now()
  await build({ configFile: join(here, 'vite.config.ts') })
  process.stderr.write(`console built in ${((Date.now() - began) / 1000).toFixed(1)} s (dist/console)\n`)
}
