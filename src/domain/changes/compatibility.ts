/**
 * The compatibility gate (issue 20): an API's or a schema's `compatibility` policy, checked against the
 * diff of a new document with the current version (or, for the `_transitive` policies, with every
 * earlier version). `backward`: no breaking change from the earlier version to the new one. `forward`:
 * none the other way round (the diff with the two swapped). `full`: both. Decided before the commit and
 * checked again inside it, like the lint gate: a policy or a current version that changed meanwhile
 * makes the upload decide again.
 */
import { changesPage } from '../../documents/diff/result.js'
import type { DiffResult } from '../../documents/diff/types.js'
import { pointerSegments } from '../../documents/pointer.js'
import { RegistryError, type ProblemItem } from '../../errors.js'
import type { Storage } from '../../storage/port.js'
import type { CompatibilityPolicy, ResourceRecord, VersionRecord } from '../../storage/registry-records.js'
import { isDiffable, type Changes, type DiffSide } from './changes.js'
import type { Tenant } from '../documents.js'

export type { CompatibilityPolicy }

export const COMPATIBILITY_POLICIES: readonly CompatibilityPolicy[] = [
  'none', 'backward', 'forward', 'full', 'backward_transitive', 'forward_transitive', 'full_transitive',
]

/** How often a write decides its gates again when they change under it before answering 409. */
const MAX_GATE_ATTEMPTS = 3

/** Thrown inside a commit transaction (before any write) when a gate the write passed has changed. */
export class StaleGate extends Error {}

/**
 * Runs a write whose commit checks the gates it passed (throwing StaleGate when one changed): again
 * with the gates as they are now, a few times at most, then 409 `conflict`.
 */
export async function withGateRetries<T>(write: () => Promise<T>, conflict: string): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write()
    } catch (error) {
      if (!(error instanceof StaleGate)) throw error
      if (attempt >= MAX_GATE_ATTEMPTS) throw new RegistryError('conflict', conflict)
    }
  }
}

/** Breaking changes listed in a refusal, at most (the detail says how many there are). */
const MAX_LISTED = 100

type Direction = 'backward' | 'forward'

/** What a gate decision was made against: it holds while both are still so at the commit. */
export interface GateDecision {
  policy: CompatibilityPolicy
  /** The current version when it was decided (null: there was none). */
  currentId: string | null
}

export function policyOf(resource: Pick<ResourceRecord, 'compatibility'>): CompatibilityPolicy {
  return resource.compatibility ?? 'none'
}

function directions(policy: CompatibilityPolicy): Direction[] {
  if (policy.startsWith('backward')) return ['backward']
  if (policy.startsWith('forward')) return ['forward']
  if (policy.startsWith('full')) return ['backward', 'forward']
  return []
}

export class CompatibilityGate {
  constructor(
    private readonly storage: Storage,
    private readonly changes: Changes,
  ) {}

  /**
   * Checks a new document (an upload, or a version being restored) against the resource's policy;
   * throws 422 `incompatible` with the breaking changes when it breaks it. Diffs are `tenant`'s work.
   */
  async check(resource: ResourceRecord, candidate: DiffSide, tenant?: Tenant): Promise<GateDecision> {
    const policy = policyOf(resource)
    const current = await this.storage.read.versions.current(resource.id)
    const decision: GateDecision = { policy, currentId: current?.id ?? null }
    // The current content again (a restore of it) changes nothing: there is nothing to check.
    if (policy === 'none' || !current || current.checksum === candidate.checksum || !isDiffable(resource.kind)) return decision
    const kind = resource.kind
    for (const earlier of await this.earlierVersions(resource, current, policy.endsWith('_transitive'))) {
      if (earlier.checksum === candidate.checksum) continue
      for (const direction of directions(policy)) {
        const earlierSide = this.changes.side(earlier)
        const result = direction === 'backward'
          ? await this.changes.diff(kind, earlierSide, candidate, tenant)
          : await this.changes.diff(kind, candidate, earlierSide, tenant)
        if (result.counts.breaking > 0) throw refusal(resource, policy, direction, earlier, result)
      }
    }
    return decision
  }

  /** `check` for a stored version being made current again (a restore). */
  checkVersion(resource: ResourceRecord, version: VersionRecord, tenant?: Tenant): Promise<GateDecision> {
    return this.check(resource, this.changes.side(version), tenant)
  }

  /** True while a decision still applies: run inside the commit transaction with what is there now. */
  holds(resource: ResourceRecord, current: VersionRecord | undefined, decision: GateDecision): boolean {
    const policy = policyOf(resource)
    if (policy !== decision.policy) return false
    // Without a policy (`none`) the current version decides nothing: concurrent uploads must not refuse
    // each other (they would answer 409 where they always got their own version numbers).
    return directions(policy).length === 0 || (current?.id ?? null) === decision.currentId
  }

  /** The current version, and for a transitive policy every earlier one, each content once, newest first. */
  private async earlierVersions(resource: ResourceRecord, current: VersionRecord, transitive: boolean): Promise<VersionRecord[]> {
    if (!transitive) return [current]
    const seen = new Set<string>()
    const versions: VersionRecord[] = []
    const page = 100
    for (let offset = 0; ; offset += page) {
      const { items, total } = await this.storage.read.versions.list(resource.id, { offset, limit: page })
      for (const version of items) {
        if (seen.has(version.checksum)) continue
        seen.add(version.checksum)
        versions.push(version)
      }
      if (offset + page >= total) break
    }
    return versions
  }
}

function refusal(resource: ResourceRecord, policy: CompatibilityPolicy, direction: Direction, earlier: VersionRecord, result: DiffResult): RegistryError {
  const n = result.counts.breaking
  const what = resource.kind === 'api' ? 'API' : 'schema'
  const how = direction === 'backward'
    ? `from version ${earlier.number} to this document`
    : `from this document back to version ${earlier.number} (forward compatibility)`
  const detail = `${n} breaking change${n === 1 ? '' : 's'} ${how} break the ${what}'s '${policy}' compatibility; nothing was stored`
  const errors: ProblemItem[] = changesPage(result, 0, MAX_LISTED, 'breaking').map((change) => ({
    code: change.check,
    message: change.operation ? `${change.operation.method.toUpperCase()} ${change.operation.path}: ${change.message}` : change.message,
    path: pointerSegments(change.pointer) ?? [],
    pointer: change.pointer,
    operation: change.operation,
    component: change.component,
    version: earlier.number,
    direction,
  }))
  return new RegistryError('incompatible', detail, errors)
}
