import type { ResultStore } from '../port.js'
import type { DiffResult, Finding } from '../records.js'
import { json, recordOf, type Sql } from './sql.js'

export class PgResults implements ResultStore {
  constructor(private readonly sql: Sql) {}

  lint(rulesetChecksum: string, documentChecksum: string): Promise<Finding[] | undefined> {
    return recordOf(this.sql, 'SELECT findings AS record FROM lint_results WHERE ruleset_checksum = $1 AND document_checksum = $2',
      [rulesetChecksum, documentChecksum])
  }

  diff(method: string, fromChecksum: string, toChecksum: string): Promise<DiffResult | undefined> {
    return recordOf(this.sql, 'SELECT result AS record FROM diff_results WHERE method = $1 AND from_checksum = $2 AND to_checksum = $3',
      [method, fromChecksum, toChecksum])
  }

  async putLint(rulesetChecksum: string, documentChecksum: string, findings: Finding[]): Promise<void> {
    // Computed from the content alone: a concurrent put of the same key wrote the same value.
    await this.sql.query(`INSERT INTO lint_results (ruleset_checksum, document_checksum, findings) VALUES ($1, $2, $3)
      ON CONFLICT DO NOTHING`, [rulesetChecksum, documentChecksum, json(findings)])
  }

  async putDiff(method: string, fromChecksum: string, toChecksum: string, result: DiffResult): Promise<void> {
    await this.sql.query(`INSERT INTO diff_results (method, from_checksum, to_checksum, result) VALUES ($1, $2, $3, $4)
      ON CONFLICT DO NOTHING`, [method, fromChecksum, toChecksum, json(result)])
  }
}
