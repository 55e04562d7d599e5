/**
 * `registry secrets …`: the secret key that seals the tokens and webhook secrets the registry keeps
 * (docs/security.md). `status` says where the key is and which secrets must be entered again; `rotate`
 * seals every secret with a new key, safely while the server runs; `new-key` prints a fresh key.
 */
import { readFileSync } from 'node:fs'
import type { Command } from 'commander'
import { Secrets, reentryLine, type SecretInventory } from '../domain/secrets.js'
import { LmdbIndex } from '../store/lmdb-index.js'
import {
  newSecretKey, openSecretKeys, parseSecretKeys, secretKeySetting, writeKeyFile, type OpenedSecretKeys,
} from '../secret-key-source.js'
import { keyId } from '../store/secret-keyring.js'
import type { CliContext } from './mirror.js'

/**
 * The secrets of an open index under the keys the environment names. `create: false` (reports) does
 * not create the default key file when it is missing, nor fails on a missing key file: every sealed
 * secret then shows as needing re-entry.
 */
export function openSecrets(index: LmdbIndex, storage: string, options: { create?: boolean } = {}): { secrets: Secrets; keys: OpenedSecretKeys } {
  const keys = openSecretKeys(secretKeySetting(), storage, options)
  const secrets = Secrets.of(index, keys.keyring)
  if (options.create !== false) warnOfAnotherKey(secrets, keys)
  return { secrets, keys }
}

/**
 * The CLI run with other settings than the server (another user's default key file, say) would seal
 * what it stores with a key the server does not hold: said on stderr when none of the stored secrets
 * opens with this process's keys.
 */
function warnOfAnotherKey(secrets: Secrets, keys: OpenedSecretKeys): void {
  const { sealed, needs_reentry } = secrets.inventory()
  if (needs_reentry.length === 0 || Object.keys(sealed).length > 0) return
  process.stderr.write(`registry: warning: none of the ${needs_reentry.length} stored secret(s) opens with the secret key at ${keys.location}; `
    + 'run this command as the server does (same user, same REGISTRY_SECRET_KEY or REGISTRY_SECRET_KEY_FILE)\n')
}

/** What `registry verify` and `registry secrets status` say about the stored secrets. */
export function secretsReport(index: LmdbIndex, storage: string): { key: { location: string; ids: string[] }; inventory: SecretInventory } {
  const { secrets, keys } = openSecrets(index, storage, { create: false })
  return { key: { location: keys.location, ids: keys.keyring.ids }, inventory: secrets.inventory() }
}

/** The human lines of a report: counts, then each secret to enter again and how. */
export function secretsLines(report: ReturnType<typeof secretsReport>): string[] {
  const { inventory, key } = report
  const sealed = Object.values(inventory.sealed).reduce((sum, n) => sum + n, 0)
  const lines = [`secrets: ${sealed} sealed, ${inventory.plaintext} in plaintext (sealed at the server's next start), ${inventory.needs_reentry.length} to enter again (secret key: ${key.location}${key.ids.length ? `, key id ${key.ids.join(', ')}` : ', none found'})`]
  for (const secret of inventory.needs_reentry) lines.push(`  enter again: ${reentryLine(secret)}`)
  return lines
}

async function withIndex<T>(context: CliContext, action: (index: LmdbIndex, storage: string) => Promise<T>): Promise<T> {
  const storage = context.storageDir()
  const index = new LmdbIndex(`${storage}/index`)
  try {
    return await action(index, storage)
  } finally {
    await index.close()
  }
}

export function registerSecretsCommands(program: Command, context: CliContext): void {
  const secrets = program.command('secrets').description('the secret key that seals stored tokens and webhook secrets')

  secrets.command('status').description('where the secret key is, and which stored secrets must be entered again')
    .action(async () => withIndex(context, async (index, storage) => {
      const report = secretsReport(index, storage)
      context.output({ key: report.key, ...report.inventory }, secretsLines(report))
    }))

  secrets.command('new-key').description('print a new random key (base64, 32 bytes) for REGISTRY_SECRET_KEY or a key file')
    .action(() => {
      const key = newSecretKey()
      context.output({ key: key.toString('base64'), key_id: keyId(key) }, [key.toString('base64')])
    })

  secrets.command('rotate').description('seal every stored secret with a new key (safe while the server runs)')
    .option('--new-key-file <file>', 'the new key (as `secrets new-key` prints it): put first in the configured key file, the old keys kept after it')
    .option('--retire-old-keys', 'then remove every other key from the key file (backups made before need the old file to open their secrets)')
    .action(async (options: { newKeyFile?: string; retireOldKeys?: boolean }) => withIndex(context, async (index, storage) => {
      const { secrets: stored, keys } = openSecrets(index, storage)
      const keyFile = keys.setting.from === 'env' ? undefined : keys.location
      if ((options.newKeyFile || options.retireOldKeys) && !keyFile) {
        throw new Error('the secret key comes from REGISTRY_SECRET_KEY, which this command cannot change: put the new key first in it '
          + '(REGISTRY_SECRET_KEY=<new>,<old>) for the server and this command, restart the server, run `registry secrets rotate`, then drop the old key')
      }
      if (options.newKeyFile && keyFile) {
        const [next] = parseSecretKeys(readFileSync(options.newKeyFile), options.newKeyFile)
        const held = parseSecretKeys(readFileSync(keyFile), keyFile)
        // The running server reads the key file again when it changes: it opens and seals with the new key from now on.
        writeKeyFile(keyFile, [next, ...held.filter((key) => keyId(key) !== keyId(next))])
      }
      const result = await stored.rotate()
      let retired: string[] = []
      if (options.retireOldKeys && keyFile) retired = retireOtherKeys(keyFile, stored)
      context.output({ ...result, key_location: keys.location, retired }, [
        `sealed ${result.resealed} secret(s) with key ${result.key_id}; ${result.current} are sealed with it now`,
        ...result.needs_reentry.map((secret) => `enter again: ${reentryLine(secret)}`),
        ...(retired.length ? [`removed key(s) ${retired.join(', ')} from ${keys.location}`]
          : keyFile ? [`the previous keys stay in ${keyFile} after the new one (to open backups made before now); --retire-old-keys removes them`] : []),
      ])
    }))
}

/** Leaves only the sealing key in the key file, when no secret it can open is sealed with another one. */
function retireOtherKeys(keyFile: string, secrets: Secrets): string[] {
  const [primary, ...others] = parseSecretKeys(readFileSync(keyFile), keyFile)
  const stillUsed = Object.keys(secrets.inventory().sealed).filter((id) => id !== keyId(primary))
  if (stillUsed.length > 0) throw new Error(`secrets are still sealed with key(s) ${stillUsed.join(', ')}: run \`registry secrets rotate\` again before retiring them`)
  writeKeyFile(keyFile, [primary])
  return others.map(keyId)
}
