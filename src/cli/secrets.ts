/**
 * `registry secrets …`: the secret key that seals the tokens and webhook secrets the registry keeps
 * (docs/security.md). `status` says where the key is and which secrets must be entered again; `rotate`
 * seals every secret with a new key, safely while the server runs; `new-key` prints a fresh key. The
 * storage port and the key source are imported by the actions only (see main.ts).
 */
import { readFileSync } from 'node:fs'
import type { Command } from 'commander'
import type { Storage } from '../storage/port.js'
import { keyId } from '../storage/secret-keyring.js'
import type { CliContext } from './mirror.js'

/** The storage port (docs/storage.md), open while `action` runs. */
async function withStorage<T>(context: CliContext, action: (storage: Storage, storageDir: string) => Promise<T>): Promise<T> {
  const storageDir = await context.storageDir()
  const storage = await context.openStorage()
  try {
    return await action(storage, storageDir)
  } finally {
    await storage.close()
  }
}

export function registerSecretsCommands(program: Command, context: CliContext): void {
  const secrets = program.command('secrets').description('the secret key that seals stored tokens and webhook secrets')

  secrets.command('status').description('where the secret key is, and which stored secrets must be entered again')
    .action(async () => withStorage(context, async (storage, storageDir) => {
      const { secretsLines, secretsReport } = await import('./stored-secrets.js')
      const report = await secretsReport(storage, storageDir)
      context.output({ key: report.key, ...report.inventory }, secretsLines(report))
    }))

  secrets.command('new-key').description('print a new random key (base64, 32 bytes) for REGISTRY_SECRET_KEY or a key file')
    .action(async () => {
      const { newSecretKey } = await import('../secret-key-source.js')
      const key = newSecretKey()
      context.output({ key: key.toString('base64'), key_id: keyId(key) }, [key.toString('base64')])
    })

  secrets.command('rotate').description('seal every stored secret with a new key (safe while the server runs)')
    .option('--new-key-file <file>', 'the new key (as `secrets new-key` prints it): put first in the configured key file, the old keys kept after it')
    .option('--retire-old-keys', 'then remove every other key from the key file (backups made before need the old file to open their secrets)')
    .action(async (options: { newKeyFile?: string; retireOldKeys?: boolean }) => withStorage(context, async (storage, storageDir) => {
      const [{ openSecrets, reentryLine, retireOtherKeys }, { parseSecretKeys, writeKeyFile }] = await Promise.all([import('./stored-secrets.js'), import('../secret-key-source.js')])
      const { secrets: stored, keys } = await openSecrets(storage, storageDir)
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
      if (options.retireOldKeys && keyFile) retired = await retireOtherKeys(keyFile, stored)
      context.output({ ...result, key_location: keys.location, retired }, [
        `sealed ${result.resealed} secret(s) with key ${result.key_id}; ${result.current} are sealed with it now`,
        ...result.needs_reentry.map((secret) => `enter again: ${reentryLine(secret)}`),
        ...(retired.length ? [`removed key(s) ${retired.join(', ')} from ${keys.location}`]
          : keyFile ? [`the previous keys stay in ${keyFile} after the new one (to open backups made before now); --retire-old-keys removes them`] : []),
      ])
    }))
}
