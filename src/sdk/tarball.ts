/**
 * A deterministic `.tar.gz` of generated files, written with tar-stream: POSIX ustar, with a PAX header
 * for a path that does not fit ustar's 100 + 155 bytes (the PHP SDK of a large API has such paths).
 * Entries are sorted by path, with a fixed mtime (0), mode 0644, uid/gid 0 and no user names; gzip
 * writes no name or time. The same files give byte-identical archives.
 */
import { promisify } from 'node:util'
import { gzip } from 'node:zlib'
import { pack } from 'tar-stream'
import { sortFiles, type GeneratedFile } from './types.js'

const compress = promisify(gzip)
const EPOCH = new Date(0)

/** Compresses on libuv's thread pool: a large SDK is megabytes, not for the event loop. */
export async function tarGz(files: GeneratedFile[]): Promise<Buffer> {
  return compress(await tar(files), { level: 9 })
}

async function tar(files: GeneratedFile[]): Promise<Buffer> {
  const archive = pack()
  const chunks: Buffer[] = []
  const collected = (async () => { for await (const chunk of archive) chunks.push(chunk as Buffer) })()
  for (const file of sortFiles(files)) {
    archive.entry({ name: file.path, mode: 0o644, uid: 0, gid: 0, mtime: EPOCH, type: 'file' }, Buffer.from(file.content, 'utf8'))
  }
  archive.finalize()
  await collected
  return Buffer.concat(chunks)
}
