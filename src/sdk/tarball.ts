/**
 * A deterministic `.tar.gz` of generated files: entries sorted by path, ustar headers with a fixed
 * mtime (0), mode 0644, uid/gid 0 and no user names, gzip without a name or time. The same files give
 * byte-identical archives.
 */
import { gzipSync } from 'node:zlib'
import { sortFiles, type GeneratedFile } from './types.js'

const BLOCK = 512

export function tarGz(files: GeneratedFile[]): Buffer {
  const parts: Buffer[] = []
  for (const file of sortFiles(files)) {
    const body = Buffer.from(file.content, 'utf8')
    parts.push(header(file.path, body.length), body, Buffer.alloc((BLOCK - (body.length % BLOCK)) % BLOCK))
  }
  parts.push(Buffer.alloc(BLOCK * 2))
  return gzipSync(Buffer.concat(parts), { level: 9 })
}

function header(path: string, size: number): Buffer {
  const block = Buffer.alloc(BLOCK)
  const [prefix, name] = splitPath(path)
  block.write(name, 0, 100, 'utf8')
  writeOctal(block, 0o644, 100, 8)
  writeOctal(block, 0, 108, 8)
  writeOctal(block, 0, 116, 8)
  writeOctal(block, size, 124, 12)
  writeOctal(block, 0, 136, 12)
  block.fill(' ', 148, 156)
  block.write('0', 156, 1, 'latin1')
  block.write('ustar\u000000', 257, 8, 'latin1')
  block.write(prefix, 345, 155, 'utf8')
  let sum = 0
  for (const byte of block) sum += byte
  block.write(sum.toString(8).padStart(6, '0') + '\u0000 ', 148, 8, 'latin1')
  return block
}

/** ustar keeps names up to 100 bytes, with up to 155 more in `prefix` (split at a slash). */
function splitPath(path: string): [string, string] {
  if (Buffer.byteLength(path) <= 100) return ['', path]
  for (let at = path.indexOf('/'); at >= 0; at = path.indexOf('/', at + 1)) {
    const prefix = path.slice(0, at)
    const name = path.slice(at + 1)
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) return [prefix, name]
  }
  throw new Error(`path too long for the archive: ${path}`)
}

function writeOctal(block: Buffer, value: number, offset: number, length: number): void {
  block.write(value.toString(8).padStart(length - 1, '0') + '\u0000', offset, length, 'latin1')
}
