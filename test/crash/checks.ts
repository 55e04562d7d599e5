/**
 * What must hold after a restart: every acknowledged write is there, as it was answered; and whatever
 * is there, acknowledged or not, is whole (no resource without its slug or listing, no gap in version
 * numbers, no version whose document is missing or is not its checksum). Returns the problems found.
 */
import { canonicalJson, checksumOf } from '../../src/documents/canonical.js'
import { parseDocumentText } from '../../src/documents/parse.js'
import { KINDS, type Kind, type Ledger } from './ledger.js'
import type { Target } from './workload.js'

interface Version {
  id: string
  number: number
  checksum: string
  format: 'json' | 'yaml'
  size: number
}

export interface CheckReport {
  problems: string[]
  resources: number
  versions: number
  /** Acknowledged versions found as answered. */
  acknowledged: number
  /** Documents read and checked against their checksum this time. */
  documents: number
}

async function get(target: Target, path: string, withKey = true): Promise<{ status: number; body: any; text: string; etag: string | null }> {
  const response = await fetch(`${target.url}${path}`, {
    headers: withKey ? { authorization: `Bearer ${target.key}` } : {}, signal: AbortSignal.timeout(60_000),
  })
  const text = await response.text()
  let body: unknown
  try { body = JSON.parse(text) } catch { body = undefined }
  return { status: response.status, body, text, etag: response.headers.get('etag') }
}

async function getAll<T>(target: Target, path: string, withKey = true): Promise<{ items: T[]; total: number }> {
  const items: T[] = []
  let total = 0
  for (let page = 1; ; page++) {
    const answer = await get(target, `${path}?limit=100&page=${page}`, withKey)
    if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status} ${answer.text.slice(0, 200)}`)
    total = answer.body.total
    items.push(...answer.body.data)
    if (answer.body.data.length < 100) return { items, total }
  }
}

/**
 * Checks the running server against the ledger. `verified` holds the ids of versions whose documents
 * were already read and checked in an earlier round (blobs are immutable; `registry verify` re-reads
 * them all every round anyway).
 */
export async function checkState(target: Target, ledger: Ledger, verified: Set<string>): Promise<CheckReport> {
  const report: CheckReport = { problems: [], resources: 0, versions: 0, acknowledged: 0, documents: 0 }
  const problem = (text: string) => report.problems.push(text)

  for (const kind of KINDS) {
    const listed = await getAll<{ id: string; slug: string; visibility: string; current: Version | null }>(target, `/v1/${kind}`)
    if (listed.items.length !== listed.total) problem(`${kind}: listing has ${listed.items.length} items, total says ${listed.total}`)
    const publicListed = await getAll<{ id: string }>(target, `/@default/${kind}`, false)
    const expectedPublic = listed.items.filter((r) => r.visibility === 'public').map((r) => r.id).sort()
    if (JSON.stringify(publicListed.items.map((r) => r.id).sort()) !== JSON.stringify(expectedPublic)) {
      problem(`${kind}: the public listing differs from the public resources`)
    }
    for (const resource of listed.items) {
      report.resources += 1
      await checkResource(target, kind, resource, verified, report)
    }
  }

  for (const tracked of ledger.resources.values()) {
    const answer = await get(target, `/v1/${tracked.kind}/${tracked.id}`)
    if (tracked.deleted === 'acked') {
      if (answer.status !== 404) problem(`${tracked.kind} ${tracked.id}: deleted (204) but answers ${answer.status} (${tracked.history.join(', ')})`)
      continue
    }
    if (answer.status === 404 && tracked.deleted === 'maybe') continue
    if (answer.status !== 200) {
      problem(`${tracked.kind} ${tracked.id}: created (201) but answers ${answer.status} (${tracked.history.join(', ')})`)
      continue
    }
    if (tracked.versions.size === 0) continue
    const versions = await getAll<Version>(target, `/v1/${tracked.kind}/${tracked.id}/versions`)
    const byNumber = new Map(versions.items.map((v) => [v.number, v]))
    for (const acked of tracked.versions.values()) {
      const found = byNumber.get(acked.number)
      if (!found) problem(`${tracked.kind} ${tracked.id}: acknowledged version ${acked.number} is missing`)
      else if (found.id !== acked.id || found.checksum !== acked.checksum) {
        problem(`${tracked.kind} ${tracked.id}: version ${acked.number} is ${found.id} ${found.checksum}, was answered as ${acked.id} ${acked.checksum}`)
      } else report.acknowledged += 1
    }
  }
  return report
}

async function checkResource(
  target: Target, kind: Kind, resource: { id: string; slug: string; current: Version | null }, verified: Set<string>, report: CheckReport,
): Promise<void> {
  const problem = (text: string) => report.problems.push(`${kind} ${resource.id}: ${text}`)
  const bySlug = await get(target, `/@default/${kind}/${resource.slug}`)
  if (bySlug.status !== 200 || bySlug.body.data.id !== resource.id) problem(`its slug '${resource.slug}' answers ${bySlug.status} ${bySlug.body?.data?.id ?? ''}`)
  const versions = await getAll<Version>(target, `/v1/${kind}/${resource.id}/versions`)
  report.versions += versions.items.length
  const numbers = versions.items.map((v) => v.number)
  const expected = Array.from({ length: versions.total }, (_, i) => versions.total - i)
  if (JSON.stringify(numbers) !== JSON.stringify(expected)) problem(`version numbers are ${numbers.join(',')}, not ${versions.total}..1`)
  const newest = versions.items[0]
  if ((resource.current?.id ?? null) !== (newest?.id ?? null)) problem(`current is ${resource.current?.id}, the newest version is ${newest?.id}`)
  for (const version of versions.items) {
    if (verified.has(version.id)) continue
    const document = await get(target, `/v1/${kind}/${resource.id}/versions/${version.id}/document?format=${version.format}`)
    if (document.status !== 200) {
      problem(`version ${version.number}: its document answers ${document.status}`)
      continue
    }
    const checksum = checksumOf(canonicalJson(parseDocumentText(document.text).document))
    if (checksum !== version.checksum) problem(`version ${version.number}: its document has checksum ${checksum}, not ${version.checksum}`)
    if (Buffer.byteLength(document.text) !== version.size) problem(`version ${version.number}: ${Buffer.byteLength(document.text)} bytes, not ${version.size}`)
    if (document.etag !== `"${version.checksum}"`) problem(`version ${version.number}: ETag ${document.etag}`)
    report.documents += 1
    verified.add(version.id)
  }
}
