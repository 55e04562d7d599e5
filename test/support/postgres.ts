/**
 * A real, throwaway PostgreSQL 15 server for one test file: `initdb` and `pg_ctl` on a temporary
 * directory, reached through a unix socket in that directory only (no TCP port to collide on), fsync
 * off. Run as the `postgres` user when the tests run as root (PostgreSQL refuses to run as root). One
 * database per test (`createDatabase`). Never a mock: the adapter's behaviour is the server's.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { chownSync, existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import type { Test } from 'tap'
import { tempDir } from '../temp.js'

export const POSTGRES_BIN = process.env.REGISTRY_TEST_POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin'

export interface PostgresServer {
  /** The socket directory: the server listens on nothing else. */
  readonly socketDirectory: string
  /** A new, empty database; answers its connection URL. */
  createDatabase(): Promise<string>
  /** Stops the server as an outage would (every session ends), keeping its data; `resume` starts it again. */
  pause(): void
  resume(): void
  stop(): Promise<void>
}

/** Why the tests cannot start PostgreSQL here, or undefined when they can. */
function postgresUnavailable(): string | undefined {
  for (const program of ['initdb', 'pg_ctl', 'postgres']) {
    if (!existsSync(join(POSTGRES_BIN, program))) {
      return `PostgreSQL server binaries not found in ${POSTGRES_BIN} (Debian: apt-get install postgresql; .ci/run does)`
    }
  }
  return undefined
}

/** The user and group to run the server as: `postgres` when this process is root, else this user. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
  return { uid: id('-u'), gid: id('-g') }
}

function run(program: string, args: string[], user: { uid: number; gid: number } | undefined): void {
  const result = spawnSync(join(POSTGRES_BIN, program), args, { encoding: 'utf8', ...user, env: { ...process.env, LC_ALL: 'C' } })
  if (result.status !== 0) throw new Error(`${program} ${args.join(' ')} failed (${result.status ?? result.signal}):\n${result.stdout}${result.stderr}`)
}

let databases = 0

export async function startPostgres(): Promise<PostgresServer> {
  const directory = tempDir('registry-pg-')
  const data = join(directory, 'data')
  const log = join(directory, 'server.log')
  const user = serverUser()
  if (user) chownSync(directory, user.uid, user.gid)
  run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'], user)
  const settings = [
    `-k ${directory}`, "-c listen_addresses=''", '-p 5432', '-c fsync=off', '-c synchronous_commit=off',
    '-c full_page_writes=off', '-c shared_buffers=32MB', '-c max_connections=60',
  ]
  const start = () => run('pg_ctl', ['-D', data, '-l', log, '-w', '-t', '60', '-o', settings.join(' '), 'start'], user)
  try {
    start()
  } catch (error) {
    const output = existsSync(log) ? readFileSync(log, 'utf8') : ''
    rmSync(directory, { recursive: true, force: true })
    throw new Error(`${(error as Error).message}\n${output}`)
  }
  const url = (database: string) => `postgres://postgres@localhost/${database}?host=${encodeURIComponent(directory)}`
  return {
    socketDirectory: directory,
    async createDatabase() {
      const name = `test_${process.pid}_${++databases}`
      const admin = new pg.Client({ connectionString: url('postgres') })
      await admin.connect()
      try {
        await admin.query(`CREATE DATABASE ${name}`)
      } finally {
        await admin.end()
      }
      return url(name)
    },
    pause: () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'], user),
    resume: start,
    async stop() {
      // Immediate: the data is thrown away, so there is nothing to write out.
      spawnSync(join(POSTGRES_BIN, 'pg_ctl'), ['-D', data, '-m', 'immediate', 'stop'], { ...user })
      rmSync(directory, { recursive: true, force: true })
    },
  }
}

/**
 * The server of one test file, stopped when the file ends; undefined, with the file planned as zero
 * tests and the reason as the skip message, when the binaries are missing.
 */
export async function postgresForFile(t: Test): Promise<PostgresServer | undefined> {
  const unavailable = postgresUnavailable()
  if (unavailable) {
    t.plan(0, unavailable)
    return undefined
  }
  const server = await startPostgres()
  t.teardown(() => server.stop())
  return server
}
