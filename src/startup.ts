/**
 * Start-up failures an operator can fix (the storage directory's permissions, a port in use, a bad
 * setting) are told in one line that says what to do, without a stack: they are not bugs. Anything
 * else is, and keeps its stack. The server logs the line (`serve`), the CLI prints it.
 */
import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { ConfigError } from './config.js'

/** The storage directory cannot be used: `path` is the file or folder that refused, `code` why. */
export class StorageAccessError extends Error {
  constructor(readonly storage: string, readonly path: string, readonly code: string) {
    super(`${code} on ${path}`)
    this.name = 'StorageAccessError'
  }
}

/** What the storage directory holds at its top: each must be readable and writable (`chown -R` fixes all). */
const STORAGE_ENTRIES = ['index', 'index/registry.mdb', 'index/registry.mdb-lock', 'blobs', 'blobs/sha256', 'tmp', 'git']

/**
 * Creates the storage directory when missing and checks that this process can read and write it and
 * what it already holds, before anything is opened: a folder owned by another user (a bind mount made
 * by root, a copy restored as root) otherwise fails deep inside LMDB with a bare error number.
 */
export function checkStorage(storage: string): void {
  const refuse = (path: string, error: unknown): never => {
    throw new StorageAccessError(storage, path, (error as NodeJS.ErrnoException).code ?? 'EACCES')
  }
  try {
    mkdirSync(storage, { recursive: true })
  } catch (error) {
    refuse(storage, error)
  }
  if (!statSync(storage).isDirectory()) refuse(storage, Object.assign(new Error(), { code: 'ENOTDIR' }))
  for (const entry of ['', ...STORAGE_ENTRIES]) {
    const path = entry ? join(storage, entry) : storage
    if (entry && !existsSync(path)) continue
    try {
      accessSync(path, constants.R_OK | constants.W_OK | (statSync(path).isDirectory() ? constants.X_OK : 0))
    } catch (error) {
      refuse(path, error)
    }
  }
}

/** Where the server was to listen and keep its state, as far as the configuration was read. */
export interface StartupContext {
  storage?: string
  host?: string
  port?: number
}

const PERMISSION = new Set(['EACCES', 'EPERM'])
/** LMDB reports the errno as a number: 13 is EACCES, 30 is EROFS. */
const LMDB_ERRNO: Record<number, string> = { 1: 'EPERM', 13: 'EACCES', 30: 'EROFS' }

/** One line that says what went wrong and how to fix it, or undefined for a failure that is a bug. */
export function explainStartupFailure(error: unknown, context: StartupContext = {}): string | undefined {
  if (error instanceof ConfigError) return `bad configuration: ${error.message}`
  // PostgreSQL mode (docs/storage.md): the database cannot be reached, or a newer release migrated it.
  if (error instanceof Error && (error.name === 'DatabaseUnavailable' || error.name === 'NewerSchemaError')) return error.message
  const failure = error as NodeJS.ErrnoException & { address?: string; port?: number }
  const code = typeof failure?.code === 'number' ? LMDB_ERRNO[failure.code] : failure?.code
  if (failure?.syscall === 'listen' || failure?.syscall === 'bind') return listenFailure(code, failure, context)
  if (failure?.syscall === 'getaddrinfo' && context.host !== undefined) return listenFailure('ENOTFOUND', {}, context)
  if (error instanceof StorageAccessError) return storageFailure(error.code, error.storage, error.path)
  if (code && (PERMISSION.has(code) || code === 'EROFS') && context.storage) {
    return storageFailure(code, context.storage, failure.path ?? context.storage)
  }
  return undefined
}

/** The line as the server's logger (pino) would write it at level fatal: the logger does not exist yet. */
export function fatalLogLine(message: string, fields: object = {}): string {
  return `${JSON.stringify({ level: 60, time: Date.now(), pid: process.pid, hostname: hostname(), ...fields, msg: message })}\n`
}

function storageFailure(code: string, storage: string, path: string): string {
  const where = path === storage ? '' : ` (${path})`
  if (code === 'EROFS') return `the storage directory ${storage} is on a read-only file system${where}: mount it read-write`
  if (code === 'ENOTDIR' || code === 'EEXIST') return `the storage directory ${storage} is not a directory${where}: set REGISTRY_STORAGE to a directory`
  const user = typeof process.getuid === 'function' ? `${process.getuid()}:${process.getgid?.()}` : 'this user'
  return `cannot read and write the storage directory ${storage}${where} as uid ${user} (${code}): ` +
    `give it to that user (on the host: chown -R ${user} <the folder>) or run as the folder's owner (docker run --user "$(id -u):$(id -g)" …)`
}

function listenFailure(code: string | undefined, failure: { address?: string; port?: number }, context: StartupContext): string | undefined {
  const host = failure.address ?? context.host
  const port = failure.port ?? context.port
  switch (code) {
    case 'EADDRINUSE':
      return `port ${port} on ${host} is already in use: stop the process that listens there, or set PORT to a free port (PORT=0 picks one)`
    case 'EACCES':
    case 'EPERM':
      return `not allowed to listen on ${host}:${port} (ports below 1024 need privileges): set PORT to 1024 or above and map it (docker run -p 80:8080)`
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return `HOST ${host} is not an address of this machine: set HOST to one of its addresses, 0.0.0.0 for all of them or 127.0.0.1`
    default:
      return undefined
  }
}
