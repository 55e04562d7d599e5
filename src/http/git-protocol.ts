/**
 * The server side of git's smart HTTP, protocol version 2 (gitprotocol-v2(5), gitprotocol-http(5)):
 * pkt-lines, the capability advertisement, `ls-refs` and `fetch` with its `shallow` and `filter`
 * features (what `git clone --depth 1` and `--filter=blob:none` in CI checkouts send). Read-only:
 * upload-pack only.
 */
import type { Deepen, ShallowUpdate } from '../git/git-upload.js'

export const FLUSH = Buffer.from('0000')
export const DELIM = Buffer.from('0001')
/** Largest side-band-64k payload: 65520 bytes per pkt-line, minus the length and the band byte. */
const SIDEBAND_CHUNK = 65515

export function pkt(text: string | Buffer): Buffer {
  const body = typeof text === 'string' ? Buffer.from(text) : text
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body])
}

/** A request's pkt-lines: strings without the trailing newline; `null` for a flush, `'\u0001'` for a delim. */
export function parsePktLines(body: Buffer): (string | null)[] {
  const lines: (string | null)[] = []
  let at = 0
  while (at + 4 <= body.length) {
    const length = Number.parseInt(body.subarray(at, at + 4).toString('latin1'), 16)
    if (!Number.isInteger(length)) throw new Error('malformed pkt-line')
    if (length === 0) { lines.push(null); at += 4; continue }
    if (length === 1) { lines.push('\u0001'); at += 4; continue }
    if (length === 2) { at += 4; continue } // response-end: not sent by clients
    if (length < 4 || at + length > body.length) throw new Error('malformed pkt-line')
    lines.push(body.subarray(at + 4, at + length).toString('utf8').replace(/\n$/, ''))
    at += length
  }
  return lines
}

/** The answer to `GET info/refs?service=git-upload-pack` from a protocol v2 client. */
export function advertisement(): Buffer {
  return Buffer.concat([
    pkt('# service=git-upload-pack\n'), FLUSH,
    pkt('version 2\n'),
    pkt('agent=api-registry\n'),
    pkt('ls-refs\n'),
    pkt('fetch=shallow filter\n'),
    pkt('object-format=sha1\n'),
    FLUSH,
  ])
}

/** A fatal error the git client prints as `remote error: …`. */
export function errorLine(message: string): Buffer {
  return Buffer.concat([pkt(`ERR ${message}\n`), FLUSH])
}

export interface CommandRequest {
  command: string
  args: string[]
}

/** `command=…`, capabilities, delim, arguments, flush. */
export function parseCommand(body: Buffer): CommandRequest {
  const lines = parsePktLines(body)
  const first = lines[0]
  if (typeof first !== 'string' || !first.startsWith('command=')) throw new Error('expected command=')
  const delim = lines.indexOf('\u0001')
  const args = delim < 0 ? [] : lines.slice(delim + 1).filter((line): line is string => typeof line === 'string')
  return { command: first.slice('command='.length), args }
}

/** `ls-refs`: HEAD (a symref to main) and main, filtered by the client's ref-prefixes. */
export function lsRefs(args: string[], head: string | undefined): Buffer {
  const prefixes = args.filter((arg) => arg.startsWith('ref-prefix ')).map((arg) => arg.slice('ref-prefix '.length))
  const symrefs = args.includes('symrefs')
  const wanted = (name: string) => prefixes.length === 0 || prefixes.some((prefix) => name.startsWith(prefix))
  const out: Buffer[] = []
  if (head) {
    if (wanted('HEAD')) out.push(pkt(`${head} HEAD${symrefs ? ' symref-target:refs/heads/main' : ''}\n`))
    if (wanted('refs/heads/main')) out.push(pkt(`${head} refs/heads/main\n`))
  } else if (args.includes('unborn') && wanted('HEAD')) {
    out.push(pkt(`unborn HEAD${symrefs ? ' symref-target:refs/heads/main' : ''}\n`))
  }
  out.push(FLUSH)
  return Buffer.concat(out)
}

export interface FetchRequest {
  wants: string[]
  haves: string[]
  done: boolean
  /** The client's shallow commits: it has them, but not their parents. */
  shallows: string[]
  deepen: Deepen | undefined
  /** `filter blob:none`: commits and trees only; the client fetches the blobs it needs later. */
  omitBlobs: boolean
}

/** A request this server does not serve: answered as `ERR …`, which git prints as a remote error. */
export class UnsupportedFetch extends Error {}

const OID = /^[0-9a-f]{40}$/

export function parseFetch(args: string[]): FetchRequest {
  const request: FetchRequest = { wants: [], haves: [], done: false, shallows: [], deepen: undefined, omitBlobs: false }
  let relative = false
  for (const arg of args) {
    const space = arg.indexOf(' ')
    const [word, value] = space < 0 ? [arg, ''] : [arg.slice(0, space), arg.slice(space + 1)]
    if (word === 'want' && OID.test(value)) request.wants.push(value)
    else if (word === 'have' && OID.test(value)) request.haves.push(value)
    else if (word === 'shallow' && OID.test(value)) request.shallows.push(value)
    else if (word === 'done') request.done = true
    else if (word === 'deepen') request.deepen = { depth: positive(value, 'deepen'), relative: false }
    else if (word === 'deepen-relative') relative = true
    else if (word === 'deepen-since') request.deepen = { since: positive(value, 'deepen-since') }
    else if (word === 'deepen-not') throw new UnsupportedFetch('deepen-not (--shallow-exclude) is not supported: use --depth or --shallow-since')
    else if (word === 'filter') request.omitBlobs = filterOmitsBlobs(value)
  }
  if (relative && request.deepen && 'depth' in request.deepen) request.deepen.relative = true
  return request
}

function positive(value: string, what: string): number {
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < 1) throw new UnsupportedFetch(`${what} needs a positive number, got '${value}'`)
  return n
}

function filterOmitsBlobs(spec: string): boolean {
  if (spec === 'blob:none') return true
  throw new UnsupportedFetch(`filter '${spec}' is not supported: only blob:none (--filter=blob:none)`)
}



/**
 * The `fetch` response: without `done`, acknowledgments (`ACK` of the common commits and `ready`
 * when there is one, else `NAK` and the client sends more haves); then, when ready or done, the
 * packfile on side-band 1.
 */
export function fetchResponse(request: FetchRequest, common: string[], pack: Uint8Array | undefined, shallow?: ShallowUpdate): Buffer {
  const out: Buffer[] = []
  if (!request.done) {
    out.push(pkt('acknowledgments\n'))
    if (common.length === 0) {
      out.push(pkt('NAK\n'), FLUSH)
      return Buffer.concat(out)
    }
    for (const oid of common) out.push(pkt(`ACK ${oid}\n`))
    out.push(pkt('ready\n'), DELIM)
  }
  if (shallow) {
    out.push(pkt('shallow-info\n'))
    for (const oid of shallow.shallow) out.push(pkt(`shallow ${oid}\n`))
    for (const oid of shallow.unshallow) out.push(pkt(`unshallow ${oid}\n`))
    out.push(DELIM)
  }
  out.push(pkt('packfile\n'))
  const bytes = Buffer.from(pack!.buffer, pack!.byteOffset, pack!.byteLength)
  for (let at = 0; at < bytes.length; at += SIDEBAND_CHUNK) {
    out.push(pkt(Buffer.concat([Buffer.from([1]), bytes.subarray(at, at + SIDEBAND_CHUNK)])))
  }
  out.push(FLUSH)
  return Buffer.concat(out)
}
