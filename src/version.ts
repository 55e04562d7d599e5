import { readFileSync } from 'node:fs'

/**
 * The package's version (package.json), which is also the version of the interface it serves: the
 * `info.version` of `/openapi.json` and the badge on `/docs`. `src/` and `dist/` both sit next to
 * package.json. See "Versions" in the README for what a change of each part means.
 */
export const PACKAGE_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version
