/**
 * The secrets kept in the storage (the port's secrets section), opened with the keys the environment
 * names (docs/security.md), and what the CLI says of them: for `registry secrets`, `registry verify`
 * and `registry mirror set-remote`. Loaded by those commands' actions only (see main.ts).
 */
import { readFileSync } from 'node:fs'
import { Secrets, reentryLine, type SecretInventory } from '../domain/accounts/secrets.js'
import type { Storage } from '../storage/port.js'
import { openSecretKeys, parseSecretKeys, secretKeySetting, writeKeyFile, type OpenedSecretKeys } from '../secret-key-source.js'
import { keyId } from '../storage/secret-keyring.js'

export { reentryLine }

/**
 * The secrets of an open storage (`storageDir`: its directory, where a key file must not be) under the
 * keys the environment names. `create: false` (reports) does not create the default key file when it
 * is missing, nor fails on a missing key file: every sealed secret then shows as needing re-entry.
 */
export async function openSecrets(
  storage: Storage, storageDir: string, options: { create?: boolean } = {},
): Promise<{ secrets: Secrets; keys: OpenedSecretKeys }> {
  const keys = openSecretKeys(secretKeySetting(), storageDir, options)
  const secrets = new Secrets(storage, keys.keyring)
  if (options.create !== false) await warnOfAnotherKey(secrets, keys)
  return { secrets, keys }
}

/**
 * The CLI run with other settings than the server (another user's default key file, say) would seal
 * what it stores with a key the server does not hold: said on stderr when none of the stored secrets
 * opens with this process's keys.
 */
async function warnOfAnotherKey(secrets: Secrets, keys: OpenedSecretKeys): Promise<void> {
  const { sealed, needs_reentry } = await secrets.inventory()
  if (needs_reentry.length === 0 || Object.keys(sealed).length > 0) return
  process.stderr.write(`registry: warning: none of the ${needs_reentry.length} stored secret(s) opens with the secret key at ${keys.location}; `
    + 'run this command as the server does (same user, same REGISTRY_SECRET_KEY or REGISTRY_SECRET_KEY_FILE)\n')
}

/** What `registry verify` and `registry secrets status` say about the stored secrets. */
interface SecretsReport {
  key: { location: string; ids: string[] }
  inventory: SecretInventory
}

export async function secretsReport(storage: Storage, storageDir: string): Promise<SecretsReport> {
  const { secrets, keys } = await openSecrets(storage, storageDir, { create: false })
  return { key: { location: keys.location, ids: keys.keyring.ids }, inventory: await secrets.inventory() }
}

/** The human lines of a report: counts, then each secret to enter again and how. */
export function secretsLines(report: SecretsReport): string[] {
  const { inventory, key } = report
  const sealed = Object.values(inventory.sealed).reduce((sum, n) => sum + n, 0)
  const lines = [`secrets: ${sealed} sealed, ${inventory.plaintext} in plaintext (sealed at the server's next start), ${inventory.needs_reentry.length} to enter again (secret key: ${key.location}${key.ids.length ? `, key id ${key.ids.join(', ')}` : ', none found'})`]
  for (const secret of inventory.needs_reentry) lines.push(`  enter again: ${reentryLine(secret)}`)
  return lines
}

/** Leaves only the sealing key in the key file, when no secret it can open is sealed with another one. */
export async function retireOtherKeys(keyFile: string, secrets: Secrets): Promise<string[]> {
  const [primary, ...others] = parseSecretKeys(readFileSync(keyFile), keyFile)
  const stillUsed = Object.keys((await secrets.inventory()).sealed).filter((id) => id !== keyId(primary))
  if (stillUsed.length > 0) throw new Error(`secrets are still sealed with key(s) ${stillUsed.join(', ')}: run \`registry secrets rotate\` again before retiring them`)
  writeKeyFile(keyFile, [primary])
  return others.map(keyId)
}
