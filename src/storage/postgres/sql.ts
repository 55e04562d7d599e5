import type pg from 'pg'

/** A pool (reads outside a transaction) or the one client of a transaction. */
export interface Sql {
  query<R extends pg.QueryResultRow = any>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>
}

/** The `record` column of the first row, if any. */
export async function recordOf<T>(sql: Sql, text: string, values: unknown[]): Promise<T | undefined> {
  const { rows } = await sql.query<{ record: T }>(text, values)
  return rows[0]?.record
}

export async function recordsOf<T>(sql: Sql, text: string, values: unknown[]): Promise<T[]> {
  const { rows } = await sql.query<{ record: T }>(text, values)
  return rows.map((row) => row.record)
}

/** A record as the `record` column stores it (json keeps the text as given). */
export const json = (record: unknown): string => JSON.stringify(record)
