import { readFile, realpath } from 'node:fs/promises'
import { basename, dirname, relative, resolve, sep } from 'node:path'
import { bundleDocument, SnapshotFileError } from '../../documents/bundle.js'
import { locatePaths, type DocumentPath, type Position } from '../../documents/positions.js'
import { RegistryError } from '../../errors.js'
import { CliFailure, usage } from './client.js'

/** What `push`, `lint` and `diff` send: the text, and the file's own text that findings are placed in. */
export interface DocumentFile {
  /** The file as named on the command line. */
  file: string
  /** The file's own text: findings' lines and columns are in it. */
  text: string
  /** What is sent: the file's text, or the bundle when it refers to other files. */
  sent: string
  /** Files bundled in besides the entry file, relative to its folder. */
  bundled: string[]
  /**
   * Where paths into the document are in the file's own text: the registry's positions are in what was
   * sent, which may be a bundle of the file.
   */
  locate(paths: readonly DocumentPath[]): Position[]
}

const LIMITS = { maxFiles: 500, maxBytes: 64 * 1024 * 1024 }

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    throw usage(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
  }
}

/**
 * Reads a document to upload. For an OpenAPI document, local `$ref`s to files in the same folder (or
 * below it) are bundled first, with the bundler repository syncs use (src/documents/bundle.ts): a
 * `$ref` out of the folder, absolute, or to a URL is refused, and so is a symlink that leads out of it.
 */
export async function readDocumentFile(file: string, bundle: boolean): Promise<DocumentFile> {
  const text = await readText(file)
  const locate = (paths: readonly DocumentPath[]) => locatePaths(text, paths)
  if (!bundle) return { file, text, sent: text, bundled: [], locate }
  const folder = await realpath(dirname(resolve(file)))
  const read = async (path: string): Promise<string> => {
    if (path === basename(file)) return text
    let real: string
    try {
      real = await realpath(resolve(folder, path))
    } catch {
      throw new SnapshotFileError(`${path} does not exist`)
    }
    if (relative(folder, real).startsWith(`..${sep}`) || relative(folder, real) === '..') {
      throw new SnapshotFileError(`${path} leads out of ${folder}`)
    }
    return readFile(real, 'utf8')
  }
  try {
    const result = await bundleDocument(basename(file), read, LIMITS)
    return { file, text, sent: result.text, bundled: result.files.slice(1), locate }
  } catch (error) {
    if (error instanceof RegistryError) {
      const first = error.errors?.[0]?.message
      throw new CliFailure(`cannot bundle ${file}: ${first ?? error.message}`, 1)
    }
    throw error
  }
}
