/** Shared by the secrets-at-rest tests: key files, a signed webhook ping, and a byte search of a directory. */
import { createHmac, randomUUID } from 'node:crypto'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cli } from '../process/spawn.js'

/** A new key file made by `registry secrets new-key`, outside any storage directory. */
export function newKeyFile(directory: string, name = 'secret-key'): string {
  const made = cli(['secrets', 'new-key'])
  if (made.code !== 0) throw new Error(`registry secrets new-key exited ${made.code}: ${made.stderr}`)
  const path = join(directory, name)
  writeFileSync(path, made.stdout, { mode: 0o600 })
  return path
}

/** A GitHub `ping` for a repository, signed with `secret`: 200 when a connection's webhook secret matches, 401 when none does. */
export async function webhookPing(base: string, repositoryUrl: string, secret: string): Promise<number> {
  const body = JSON.stringify({ zen: 'Keep it logically awesome.', repository: { clone_url: repositoryUrl } })
  const response = await fetch(`${base}/webhooks/github`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json', 'x-github-event': 'ping', 'x-github-delivery': randomUUID(),
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    },
    body,
  })
  await response.arrayBuffer()
  return response.status
}

/** Every file under `directory` whose raw bytes contain one of `needles`, with the needle found. */
export function filesContaining(directory: string, needles: string[]): string[] {
  const found: string[] = []
  for (const entry of readdirSync(directory, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath ?? entry.path, entry.name)
    const bytes = readFileSync(path)
    for (const needle of needles) if (bytes.includes(Buffer.from(needle, 'utf8'))) found.push(`${path}: ${needle}`)
  }
  return found
}

/** Count of files under `directory`: a search that found nothing must have looked at something. */
export function fileCount(directory: string): number {
  return readdirSync(directory, { withFileTypes: true, recursive: true }).filter((entry) => entry.isFile()).length
}
