import type { Finding, LintCounts, Severity } from '../../documents/types.js'
import type { BlockingSeverity } from '../../storage/registry-records.js'

const RANK: Record<Severity, number> = { error: 0, warn: 1, info: 2, hint: 3 }
const LIMIT: Record<BlockingSeverity, number> = { off: -1, error: 0, warn: 1, info: 2 }

/** Findings at or above the threshold; Spectral's `hint` never blocks. */
export function blockingFindings(findings: Finding[], threshold: BlockingSeverity): Finding[] {
  return findings.filter((f) => f.severity !== 'hint' && RANK[f.severity] <= LIMIT[threshold])
}

export function countFindings(findings: Finding[]): LintCounts {
  const counts: LintCounts = { error: 0, warn: 0, info: 0, hint: 0 }
  for (const f of findings) counts[f.severity] += 1
  return counts
}
