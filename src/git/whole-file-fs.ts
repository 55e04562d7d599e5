/**
 * The file system the mirror's repositories are written through: node's, except that isomorphic-git's
 * files (loose objects, refs) are written whole or not at all, under a temporary name in their folder
 * and then renamed over their name.
 *
 * Why: isomorphic-git writes a loose object in place, and never writes an object whose file already
 * exists. A process killed between creating that file and filling it (kill -9 of a replica, or of the
 * one server) left an empty object file, which no later write replaced: every read of a commit above it
 * failed on that machine for good (a replica answered every clone `upload-pack: not our ref`, and its
 * writer could not build on the tree; found by test/process/replicas-kill.test.ts).
 */
import { promises } from 'node:fs'
import { basename, dirname, join } from 'node:path'

let written = 0

/**
 * A name beside `path` that git never takes for what it holds: `tmp_obj_…` in an object folder (git's
 * own prefix for an object being written, which `git fsck` passes over), a dot file elsewhere (never a
 * ref name). A process killed before the rename leaves this name behind, never a partial `path`.
 */
function temporaryName(path: string): string {
  const folder = dirname(path)
  const unique = `${process.pid}_${++written}`
  return join(folder, /\/objects\/[0-9a-f]{2}$/.test(folder) ? `tmp_obj_${unique}` : `.${basename(path)}.${unique}.tmp`)
}

/** `fs.promises.writeFile`, whole or not at all. */
export async function writeFileWhole(path: string, data: Parameters<typeof promises.writeFile>[1], options?: Parameters<typeof promises.writeFile>[2]): Promise<void> {
  const temporary = temporaryName(path)
  try {
    await promises.writeFile(temporary, data, options)
    await promises.rename(temporary, path)
  } catch (error) {
    await promises.rm(temporary, { force: true })
    throw error
  }
}

/** What isomorphic-git takes as `fs` (a promise client): node's file system with `writeFileWhole`. */
export const wholeFileFs = { promises: { ...promises, writeFile: writeFileWhole } }
