/**
 * Schema migrations: the numbered SQL files of `migrations/` (shipped as they are, beside the compiled
 * code's source tree), applied at start by node-pg-migrate under its advisory lock, so that replicas
 * starting together apply each file once while the others wait. A database that has run a migration
 * this registry does not know (a newer release migrated it) is refused before anything is touched.
 */
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { runner } from 'node-pg-migrate'
import type pg from 'pg'

/** Found from src/storage/postgres/ and from dist/storage/postgres/ alike: the SQL is not compiled. */
export const MIGRATIONS_DIRECTORY = fileURLToPath(new URL('../../../src/storage/postgres/migrations/', import.meta.url))
const MIGRATIONS_TABLE = 'registry_migrations'

/** The names of the migrations this registry knows, in order (`001_initial`, …). */
export function knownMigrations(directory = MIGRATIONS_DIRECTORY): string[] {
  return readdirSync(directory).filter((name) => /^\d+_.+\.sql$/.test(name)).sort().map((name) => name.replace(/\.sql$/, ''))
}

export class NewerSchemaError extends Error {
  constructor(unknown: string[], known: string[]) {
    super(`the PostgreSQL database has a newer schema than this registry knows (migrations ${unknown.join(', ')} `
      + `were applied by a newer release; this one knows up to ${known.at(-1) ?? 'none'}): `
      + 'run the newer release, or point REGISTRY_DATABASE_URL at another database')
    this.name = 'NewerSchemaError'
  }
}

/** Refuses a database migrated by a newer release, then applies the migrations it has not run. */
export async function migrate(client: pg.ClientBase, directory = MIGRATIONS_DIRECTORY): Promise<string[]> {
  const known = knownMigrations(directory)
  const { rows: [table] } = await client.query<{ exists: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS exists`, [MIGRATIONS_TABLE])
  if (table.exists) {
    const { rows } = await client.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE} ORDER BY run_on, id`)
    const unknown = rows.map((row) => row.name).filter((name) => !known.includes(name))
    if (unknown.length > 0) throw new NewerSchemaError(unknown, known)
  }
  const applied = await runner({
    dbClient: client, dir: directory, migrationsTable: MIGRATIONS_TABLE, direction: 'up', checkOrder: true,
    advisoryLockMode: 'wait', log: () => {}, logger: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  })
  return applied.map((migration) => migration.name)
}
