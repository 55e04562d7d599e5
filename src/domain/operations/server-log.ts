/**
 * The server's log as the domain writes to it: what only the operator may read, such as why a sync,
 * a build's delivery or a mirror push could not reach its repository (key holders are told no more
 * than "unreachable"). Until the server's logger exists (and in the CLI), lines go to stderr as JSON,
 * in pino's shape.
 */
export interface ServerLog {
  warn(details: Record<string, unknown>, message: string): void
}

export const STDERR_LOG: ServerLog = {
  warn: (details, message) => process.stderr.write(`${JSON.stringify({ level: 40, time: Date.now(), msg: message, ...details })}\n`),
}

/** A log whose destination is set later (`buildApp` points it at the server's logger). */
export class ForwardingLog implements ServerLog {
  #to: ServerLog

  constructor(to: ServerLog = STDERR_LOG) {
    this.#to = to
  }

  use(to: ServerLog): void {
    this.#to = to
  }

  warn(details: Record<string, unknown>, message: string): void {
    this.#to.warn(details, message)
  }
}
