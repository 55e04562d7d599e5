/**
 * Where the secret key comes from: never the storage directory, so that a copy of the directory (or a
 * backup) does not carry the key with the secrets it protects.
 *
 * - `REGISTRY_SECRET_KEY`: the key in base64 or hex (32 bytes); several, comma-separated, while a
 *   rotation is under way (the first seals, every one opens).
 * - `REGISTRY_SECRET_KEY_FILE`: a file the operator placed, holding one key per line (base64 or hex,
 *   `#` comments), or exactly 32 raw bytes. It must exist.
 * - neither: `<config dir>/api-registry/secret-key` (`$XDG_CONFIG_HOME`, else `~/.config`; `%APPDATA%`
 *   on Windows), created with mode 0600 on first use so that `npm ci && npm start` works on a fresh
 *   machine. The server logs where it is and that it must be backed up apart from the storage.
 *
 * A key file is read again when it changes (size, time or inode), so a running server follows a
 * rotation made by `registry secrets rotate`.
 */
import { randomBytes } from 'node:crypto'
import {
  chmodSync, closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, statSync, unlinkSync, writeSync,
} from 'node:fs'
import { homedir } from 'node:os'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { ConfigError } from './config.js'
import { SECRET_KEY_BYTES, SecretKeyring, keyId } from './storage/secret-keyring.js'

export type SecretKeySetting =
  | { from: 'env'; value: string }
  | { from: 'file'; path: string }
  | { from: 'default'; path: string }

export interface OpenedSecretKeys {
  keyring: SecretKeyring
  setting: SecretKeySetting
  /** For people: the variable, or the key file's path. */
  location: string
  /** True when this call created the default key file. */
  created: boolean
}

/** The setting the environment makes; both variables at once is an error. */
export function secretKeySetting(env: NodeJS.ProcessEnv = process.env): SecretKeySetting {
  const value = env.REGISTRY_SECRET_KEY
  const file = env.REGISTRY_SECRET_KEY_FILE
  if (value && file) throw new ConfigError('set REGISTRY_SECRET_KEY or REGISTRY_SECRET_KEY_FILE, not both')
  if (value) return { from: 'env', value }
  if (file) return { from: 'file', path: resolve(file) }
  return { from: 'default', path: defaultKeyFile(env) }
}

export function defaultKeyFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || (process.platform === 'win32' ? env.APPDATA : undefined) || join(homedir(), '.config')
  return resolve(base, 'api-registry', 'secret-key')
}

/**
 * The keyring a setting gives, for the storage directory `storage`. A key file inside the storage
 * directory is refused. `create: false` (reports, verify) neither creates the default file nor fails
 * on a missing one: the keyring is then empty, and every sealed secret needs to be entered again.
 */
export function openSecretKeys(setting: SecretKeySetting, storage: string, options: { create?: boolean } = {}): OpenedSecretKeys {
  if (setting.from === 'env') {
    return { keyring: new SecretKeyring(parseSecretKeys(setting.value.split(',').join('\n'), 'REGISTRY_SECRET_KEY')), setting, location: 'REGISTRY_SECRET_KEY', created: false }
  }
  const path = setting.path
  if (isInside(storage, path)) {
    throw new ConfigError(`the secret key file ${path} is inside the storage directory ${storage}: a copy of the directory would carry the key with the secrets it protects; keep it elsewhere`)
  }
  let created = false
  if (!exists(path)) {
    if (options.create === false) return { keyring: new SecretKeyring([]), setting, location: path, created: false }
    if (setting.from === 'file') throw new ConfigError(`REGISTRY_SECRET_KEY_FILE: ${path} does not exist (create one with \`registry secrets new-key > ${path}\`)`)
    try {
      created = createKeyFile(path, [newSecretKey()])
    } catch (error) {
      throw new ConfigError(`cannot create the secret key file ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): `
        + 'set REGISTRY_SECRET_KEY_FILE to a key file you placed, or REGISTRY_SECRET_KEY')
    }
  }
  const file = new KeyFile(path)
  let keys: Buffer[]
  try {
    keys = file.read()
  } catch (error) {
    if (error instanceof ConfigError) throw error
    throw new ConfigError(`cannot read the secret key file ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
  }
  return { keyring: new SecretKeyring(keys, () => file.readIfChanged()), setting, location: path, created }
}

export function newSecretKey(): Buffer {
  return randomBytes(SECRET_KEY_BYTES)
}

/** Keys from text (one per line, base64 or hex, `#` comments) or a file of exactly 32 raw bytes. */
export function parseSecretKeys(content: string | Buffer, origin: string): Buffer[] {
  if (Buffer.isBuffer(content) && content.length === SECRET_KEY_BYTES) return [Buffer.from(content)]
  const text = Buffer.isBuffer(content) ? content.toString('utf8') : content
  const keys: Buffer[] = []
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const key = /^[0-9a-f]{64}$/i.test(line) ? Buffer.from(line, 'hex')
      : /^[A-Za-z0-9+/_-]{43}=?$/.test(line) ? Buffer.from(line, line.includes('-') || line.includes('_') ? 'base64url' : 'base64')
        : undefined
    if (!key || key.length !== SECRET_KEY_BYTES) {
      throw new ConfigError(`${origin}: key ${keys.length + 1} is not ${SECRET_KEY_BYTES} bytes in base64 or hex`)
    }
    keys.push(key)
  }
  if (keys.length === 0) throw new ConfigError(`${origin}: no key in it`)
  return keys
}

/** A key file's text: one base64 key per line, the sealing one first, with their ids as comments. */
export function formatSecretKeys(keys: Buffer[]): string {
  const lines = ['# API registry secret keys: the first seals, every one opens. Keep this file out of the storage directory and back it up.']
  for (const key of keys) lines.push(`# key id ${keyId(key)}`, key.toString('base64'))
  return `${lines.join('\n')}\n`
}

/** Replaces a key file whole (temporary file, fsync, rename), mode 0600. */
export function writeKeyFile(path: string, keys: Buffer[]): void {
  const temporary = `${path}.${process.pid}.tmp`
  writeWhole(temporary, formatSecretKeys(keys))
  renameSync(temporary, path)
}

/** A key file, read again when its size, time or inode change. */
class KeyFile {
  #seen = ''

  constructor(private readonly path: string) {}

  read(): Buffer[] {
    this.#seen = this.#stamp()
    return parseSecretKeys(readFileSync(this.path), this.path)
  }

  /** The keys when the file changed since the last read; undefined when it did not, or does not read now. */
  readIfChanged(): Buffer[] | undefined {
    let stamp: string
    try {
      stamp = this.#stamp()
    } catch {
      return undefined
    }
    if (stamp === this.#seen) return undefined
    try {
      return this.read()
    } catch {
      return undefined // half-written by hand, say: keep the keys held until it reads again
    }
  }

  #stamp(): string {
    const stat = statSync(this.path)
    return `${stat.ino}:${stat.size}:${stat.mtimeMs}`
  }
}

/**
 * Creates the default key file unless another process did first: written whole beside it, then linked
 * into place, so that no process ever reads a partial key. Answers whether this call created it.
 */
function createKeyFile(path: string, keys: Buffer[]): boolean {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  const temporary = `${path}.${process.pid}.tmp`
  writeWhole(temporary, formatSecretKeys(keys))
  try {
    linkSync(temporary, path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    return false
  } finally {
    unlinkSync(temporary)
  }
}

function writeWhole(path: string, text: string): void {
  const fd = openSync(path, 'w', 0o600)
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  chmodSync(path, 0o600)
}

function exists(path: string): boolean {
  try {
    statSync(path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
}

/** Is `path` the storage directory or inside it (through symbolic links too)? */
function isInside(storage: string, path: string): boolean {
  const real = (p: string) => {
    try {
      return realpathSync(p)
    } catch {
      return resolve(p)
    }
  }
  for (const [root, target] of [[resolve(storage), resolve(path)], [real(storage), join(real(dirname(path)), relative(dirname(path), path))]]) {
    const rel = relative(root, target)
    if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) return true
  }
  return false
}
