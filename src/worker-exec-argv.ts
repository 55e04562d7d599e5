/**
 * The `execArgv` option of a worker thread (piscina's or node's Worker): the node options it starts
 * with. None given: the thread inherits this one's, as node does by default.
 */
export function execArgvOption(execArgv: readonly string[] | undefined): { execArgv?: string[] } {
  return execArgv ? { execArgv: [...execArgv] } : {}
}
