#!/usr/bin/env node
// The `registry` command (CONTRACT §1): runs the compiled CLI in dist/, never compiles anything itself.
// `npm ci` builds dist/ in a checkout (the `prepare` script); the container image carries it.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const main = new URL('../dist/cli/main.js', import.meta.url)
if (!existsSync(main)) {
  const root = fileURLToPath(new URL('..', import.meta.url))
  process.stderr.write(`registry: ${fileURLToPath(main)} is missing: run \`npm run build\` in ${root} first (\`npm ci\` builds it too)\n`)
  process.exit(1)
}
await import(main.href)
