import { keys } from './layout.js'
import type { ResultStore } from '../port.js'
import type { DiffResult, Finding } from '../records.js'
import type { IndexDatabases } from './databases.js'
import type { LmdbAccess } from './transaction-view.js'

/** Today's `lint-results` and `diff-results` databases, with their keys. */
export class LmdbResults implements ResultStore {
  constructor(private readonly access: LmdbAccess, private readonly db: IndexDatabases) {}

  async lint(rulesetChecksum: string, documentChecksum: string): Promise<Finding[] | undefined> {
    return this.access.get(this.db.lintResults, keys.lintResult(rulesetChecksum, documentChecksum))
  }

  async diff(method: string, fromChecksum: string, toChecksum: string): Promise<DiffResult | undefined> {
    return this.access.get(this.db.diffResults, keys.diffResult(method, fromChecksum, toChecksum))
  }

  async putLint(rulesetChecksum: string, documentChecksum: string, findings: Finding[]): Promise<void> {
    this.access.put(this.db.lintResults, keys.lintResult(rulesetChecksum, documentChecksum), findings)
  }

  async putDiff(method: string, fromChecksum: string, toChecksum: string, result: DiffResult): Promise<void> {
    this.access.put(this.db.diffResults, keys.diffResult(method, fromChecksum, toChecksum), result)
  }
}
