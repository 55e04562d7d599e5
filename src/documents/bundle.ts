/**
 * Bundling: an OpenAPI document split over several files of one repository snapshot becomes one
 * document with internal `$ref`s only, so that it can be published like an upload.
 *
 * How: the first `$ref` to a piece of another file is replaced by that piece (inlined where the
 * reference was); every later `$ref` to the same piece, or to a part of it, becomes an internal `$ref`
 * to that place. The
 * root's `components` are walked first, so shared pieces land in `components/…` when the root refers
 * to them from there, as most split documents do. Nothing is renamed or invented: the result
 * validates as the files did. A `$ref` with siblings (OpenAPI 3.1 `summary`/`description`) keeps
 * them: they are laid over the inlined object.
 *
 * What is refused (each a problem naming the file and the place): URLs and any `scheme:`, absolute
 * paths, paths that leave the snapshot (`..` past its root), fragments that are not JSON pointers,
 * files that do not exist or do not parse, pointers that resolve to nothing. Reading a file is the
 * caller's (`read`), which refuses symlinks out of the snapshot. Never fetches anything. A `$ref` to a
 * schema of this registry (`/@org/schemas/slug/…`) stays as it is: the upload resolves it.
 */
import { posix } from 'node:path'
import { stringify } from 'yaml'
import { RegistryError, type ProblemItem } from '../errors.js'
import { MAX_PROBLEMS } from './limits.js'
import { assertDocumentShape, parseDocumentText } from './parse.js'
import { encodePointer, lookupPointer, pointerSegments, type PathSegment } from './pointer.js'
import { quote } from './refs.js'
import { parseRegistryRef } from './registry-refs.js'
import type { DocumentFormat } from './types.js'

export interface BundleLimits {
  /** Most files read, the entry file included. */
  maxFiles: number
  /** Most bytes read from files and inlined, and the largest bundled text. */
  maxBytes: number
}

export interface BundleResult {
  /** The entry file's own text when it refers to no other file; otherwise the bundled document. */
  text: string
  format: DocumentFormat
  /** Files read, the entry file first. */
  files: string[]
}

/** Thrown by `read` for a file the snapshot does not have (or refuses to give). */
export class SnapshotFileError extends Error {}

type Container = Record<string, unknown> | unknown[]

interface Frame {
  container: Container
  key: string | number
  /** The file this value came from. */
  file: string
  /** Where the value is in the bundled document. */
  at: PathSegment[]
  /** Where the value is in its own file (for problems). */
  source: PathSegment[]
}

interface LoadedFile {
  document: unknown
  format: DocumentFormat
  text: string
}

const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:/

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function isRefObject(value: Record<string, unknown>): value is Record<string, unknown> & { $ref: string } {
  return Object.prototype.hasOwnProperty.call(value, '$ref') && typeof value.$ref === 'string'
}

/** Replaces a member as an own data property (a `__proto__` key from JSON stays an ordinary key). */
function setMember(container: Container, key: string | number, value: unknown): void {
  Object.defineProperty(container, key, { value, writable: true, enumerable: true, configurable: true })
}

/** A URI fragment for a bundled location: pointer escapes, then percent-encoding of what a fragment may not hold. */
function fragmentOf(at: readonly PathSegment[]): string {
  if (at.length === 0) return '#'
  return '#/' + at.map((s) => encodePointer([s]).replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@]/gu, encodeURIComponent)).join('/')
}

class Bundler {
  private readonly files = new Map<string, LoadedFile>()
  /** `file#pointer` → where its content was inlined in the bundled document. */
  private readonly placed = new Map<string, PathSegment[]>()
  private readonly problems: ProblemItem[] = []
  private bytes = 0
  private changed = false

  constructor(
    private readonly entry: string,
    private readonly read: (path: string) => Promise<string>,
    private readonly limits: BundleLimits,
  ) {}

  async run(): Promise<BundleResult> {
    const root = await this.load(this.entry, [], this.entry)
    if (!root) throw this.failure()
    // A private copy: YAML aliases may share objects, and the walk replaces values in place.
    const document: unknown = JSON.parse(JSON.stringify(root.document))
    const stack: Frame[] = []
    if (isObject(document)) {
      // Pushed last, walked first: `components` get the inlined pieces when they refer to them.
      const keys = Object.keys(document)
      const order = [...keys.filter((k) => k !== 'components').reverse(), ...keys.filter((k) => k === 'components')]
      for (const key of order) {
        stack.push({ container: document, key, file: this.entry, at: [key], source: [key] })
      }
    }
    await this.walk(stack)
    if (this.problems.length > 0) throw this.failure()
    if (!this.changed) return { text: root.text, format: root.format, files: [...this.files.keys()] }
    // Pieces nest inside pieces: refuse what no upload could store before serializing it.
    assertDocumentShape(document)
    const text = root.format === 'json'
      ? JSON.stringify(document, null, 2) + '\n'
      : stringify(document, { aliasDuplicateObjects: false, lineWidth: 0 })
    if (Buffer.byteLength(text, 'utf8') > this.limits.maxBytes) {
      throw new RegistryError('invalid_document', `the bundled document is larger than ${this.limits.maxBytes} bytes`)
    }
    return { text, format: root.format, files: [...this.files.keys()] }
  }

  private async walk(stack: Frame[]): Promise<void> {
    while (stack.length > 0 && this.problems.length < MAX_PROBLEMS) {
      const frame = stack.pop()!
      const member = (frame.container as Record<string | number, unknown>)[frame.key]
      if (member === null || typeof member !== 'object') continue
      const value = member as Container
      if (!Array.isArray(value) && isRefObject(value)) {
        const next = await this.resolve(value, frame)
        if (next === undefined) continue
        setMember(frame.container, frame.key, next.value)
        this.changed = true
        // Inlined content is walked again from its own file (it may itself be a `$ref`).
        if (next.inlined) stack.push({ ...frame, file: next.file, source: next.source })
        continue
      }
      const keys: (string | number)[] = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value)
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]
        stack.push({ container: value, key, file: frame.file, at: [...frame.at, key], source: [...frame.source, key] })
      }
    }
  }

  /**
   * What a `$ref` becomes: undefined when it stays as it is (an internal `$ref` of the entry file), an
   * internal `$ref` to where the piece already is, or the piece itself (inlined).
   */
  private async resolve(
    node: Record<string, unknown> & { $ref: string },
    frame: Frame,
  ): Promise<{ value: unknown; inlined: false } | { value: unknown; inlined: true; file: string; source: PathSegment[] } | undefined> {
    const { $ref: ref, ...siblings } = node
    // A schema of this registry is resolved from the registry's storage when the document is uploaded.
    if (parseRegistryRef(ref)) return undefined
    const hash = ref.indexOf('#')
    const target = hash === -1 ? ref : ref.slice(0, hash)
    const fragment = hash === -1 ? '' : ref.slice(hash + 1)
    const problemAt = [...frame.source, '$ref']
    let file = frame.file
    if (target !== '') {
      const resolved = this.resolvePath(target, frame.file)
      if ('problem' in resolved) return this.problem(frame.file, problemAt, `$ref ${quote(ref)} ${resolved.problem}`)
      file = resolved.path
    }
    if (fragment !== '' && !fragment.startsWith('/') && !/^%2f/i.test(fragment)) {
      return this.problem(frame.file, problemAt, `$ref ${quote(ref)} names an anchor; only JSON pointer fragments (#/…) can be bundled`)
    }
    let segments: string[] | null
    try {
      segments = pointerSegments(decodeURIComponent(fragment))
    } catch {
      segments = null
    }
    if (segments === null) return this.problem(frame.file, problemAt, `$ref ${quote(ref)} has a fragment that is not a JSON pointer`)
    // The entry file is the bundled document's own frame: its pieces are where they were.
    if (file === this.entry) {
      if (frame.file === this.entry && target === '') return undefined
      return { value: { ...siblings, $ref: fragmentOf(segments) }, inlined: false }
    }
    const key = `${file}#${encodePointer(segments)}`
    const there = this.placedAt(file, segments)
    if (there) return { value: { ...siblings, $ref: fragmentOf(there) }, inlined: false }
    const loaded = await this.load(file, problemAt, frame.file)
    if (!loaded) return undefined
    const found = lookupPointer(loaded.document, segments)
    if (!found.found) return this.problem(frame.file, problemAt, `$ref ${quote(ref)} resolves to nothing in ${quote(file)}: ${found.reason}`)
    const copy = JSON.stringify(found.value)
    this.bytes += copy.length
    if (this.bytes > this.limits.maxBytes) {
      throw new RegistryError('invalid_document', `bundling the document's $refs makes it larger than ${this.limits.maxBytes} bytes`)
    }
    let value: unknown = JSON.parse(copy)
    if (isObject(value) && Object.keys(siblings).length > 0) value = { ...value, ...siblings }
    this.placed.set(key, frame.at)
    return { value, inlined: true, file, source: segments }
  }

  /**
   * Where a piece of a file already is in the bundled document: inlined itself, or inside a larger
   * piece of the same file that was (a schema file's `$defs`, say, once the schema is inlined).
   */
  private placedAt(file: string, segments: readonly string[]): PathSegment[] | undefined {
    for (let length = segments.length; length >= 0; length--) {
      const there = this.placed.get(`${file}#${encodePointer(segments.slice(0, length))}`)
      if (there) return [...there, ...segments.slice(length)]
    }
    return undefined
  }

  /** The snapshot path a relative reference names, or why it names none. */
  private resolvePath(target: string, from: string): { path: string } | { problem: string } {
    if (SCHEME.test(target)) return { problem: 'is a URL: the registry never fetches anything; refer to files of the repository by relative path' }
    let decoded: string
    try {
      decoded = decodeURIComponent(target)
    } catch {
      return { problem: 'is not a valid relative reference' }
    }
    if (decoded.startsWith('/') || decoded.startsWith('\\')) return { problem: 'is an absolute path: refer to files of the repository by relative path' }
    if (decoded.includes('\0')) return { problem: 'is not a valid relative reference' }
    const path = posix.normalize(posix.join(posix.dirname(from), decoded))
    if (path === '..' || path.startsWith('../')) return { problem: 'leaves the repository snapshot' }
    if (path === '.' || path.endsWith('/')) return { problem: 'names a directory, not a file' }
    return { path }
  }

  private async load(file: string, at: PathSegment[], from: string): Promise<LoadedFile | undefined> {
    const cached = this.files.get(file)
    if (cached) return cached
    if (this.files.size >= this.limits.maxFiles) {
      throw new RegistryError('invalid_document', `the document refers to more than ${this.limits.maxFiles} files`)
    }
    let text: string
    try {
      text = await this.read(file)
    } catch (error) {
      if (!(error instanceof SnapshotFileError)) throw error
      return this.problem(from, at, `${quote(file)}: ${error.message}`)
    }
    this.bytes += text.length
    if (this.bytes > this.limits.maxBytes) {
      throw new RegistryError('invalid_document', `the document and the files it refers to are larger than ${this.limits.maxBytes} bytes`)
    }
    let parsed: { document: unknown; format: DocumentFormat }
    try {
      parsed = parseDocumentText(text)
    } catch (error) {
      if (!(error instanceof RegistryError)) throw error
      return this.problem(file, [], `${quote(file)} cannot be read as JSON or YAML: ${error.message}`)
    }
    const loaded = { ...parsed, text }
    this.files.set(file, loaded)
    return loaded
  }

  private problem(file: string, path: PathSegment[], message: string): undefined {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push({ file, path, message })
    return undefined
  }

  private failure(): RegistryError {
    const first = this.problems[0]
    const more = this.problems.length > 1 ? ` (and ${this.problems.length - 1} more)` : ''
    return new RegistryError('invalid_document', `the document cannot be bundled from the repository: ${first?.message ?? 'unknown problem'}${more}`,
      this.problems)
  }
}

/**
 * Bundles the document at `entry` (a normalized path inside the snapshot) with the files its relative
 * `$ref`s name, read through `read` (which throws `SnapshotFileError` for a file it cannot give).
 */
export function bundleDocument(entry: string, read: (path: string) => Promise<string>, limits: BundleLimits): Promise<BundleResult> {
  return new Bundler(entry, read, limits).run()
}
