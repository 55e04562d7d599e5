/**
 * What the server acknowledged (answered 2xx) during a crash run: the facts that must hold after every
 * restart. Writes that were not answered (the server was killed first) are not here: they may or may
 * not have happened, and the checks only ask that whatever is there is whole.
 */
export type Kind = 'apis' | 'schemas' | 'rulesets'
export const KINDS: Kind[] = ['apis', 'schemas', 'rulesets']

export interface AckedVersion {
  id: string
  number: number
  checksum: string
}

export interface Tracked {
  kind: Kind
  id: string
  /** Acknowledged versions by number. */
  versions: Map<number, AckedVersion>
  /** 'acked': a DELETE was answered 204; 'maybe': a DELETE was sent and not answered. */
  deleted?: 'acked' | 'maybe'
  /** The last document this test uploaded to it and saw acknowledged (to send it again unchanged). */
  lastDocument?: unknown
  /** What happened to it, for the report of a problem: `round operation status`. */
  history: string[]
}

export class Ledger {
  readonly resources = new Map<string, Tracked>()
  /** Acknowledged writes: creates, uploads (new or unchanged), restores, updates, deletes. */
  writes = 0
  /** Versions acknowledged, each counted once. */
  versionsAcknowledged = 0
  /** Requests that got no answer because the server was killed. */
  unanswered = 0
  /** Answers that should never happen (5xx, unexpected 4xx): each is a failure. */
  readonly unexpected: string[] = []
  /** The current round (kill number), for histories. */
  round = 1

  track(kind: Kind, id: string): Tracked {
    let tracked = this.resources.get(id)
    if (!tracked) this.resources.set(id, (tracked = { kind, id, versions: new Map(), history: [] }))
    return tracked
  }

  ackVersion(tracked: Tracked, version: AckedVersion): void {
    const known = tracked.versions.get(version.number)
    if (known && (known.id !== version.id || known.checksum !== version.checksum)) {
      this.unexpected.push(`${tracked.kind} ${tracked.id}: version ${version.number} acknowledged twice with different content`)
    }
    if (!known) this.versionsAcknowledged += 1
    tracked.versions.set(version.number, version)
  }

  /** Live resources to pick from (not known to be deleted), optionally of one kind. */
  live(kind?: Kind): Tracked[] {
    return [...this.resources.values()].filter((r) => !r.deleted && (kind === undefined || r.kind === kind))
  }
}
