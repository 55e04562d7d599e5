/**
 * The `execArgv` option of a worker thread (piscina's or node's Worker): the node options it starts
 * with. None given: the thread inherits this one's, as node does by default.
 */
export function execArgvOption(execArgv: readonly string[] | undefined): { execArgv?: string[] } {
  return execArgv ? { execArgv: [...execArgv] } : {}
}

/**
 * The URL of the worker module `name` next to the module at `own` (that module's import.meta.url).
 * Compiled code starts the compiled worker. The TypeScript source, run under tsx (the tests), starts
 * the source worker, which needs tsx's loader in the new thread. Given node options without that
 * loader, it starts the compiled twin instead, which the build writes from the same source
 * (`src/a/b.ts` → `dist/a/b.js`): a thread without tsx starts in about half the time.
 */
export function workerModule(own: string, name: string, execArgv: readonly string[] | undefined): string {
  if (!own.endsWith('.ts')) return new URL(`./${name}.js`, own).href
  if (execArgv === undefined || execArgv.some(loadsTsx)) return new URL(`./${name}.ts`, own).href
  const source = new URL(`./${name}.js`, own).href
  const at = source.lastIndexOf('/src/')
  return `${source.slice(0, at)}/dist/${source.slice(at + '/src/'.length)}`
}

/** `--import=tsx`, `--import tsx` (its second word, or the module name alone) or `--loader=tsx/esm`. */
export function loadsTsx(arg: string): boolean {
  return /(^|=)tsx(\/|$)/.test(arg)
}
