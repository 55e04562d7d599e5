/**
 * The `registry` command. The remote commands (push, lint, diff, pull, list, restore, login) talk HTTP
 * and need none of the storage: the domain, LMDB, isomorphic-git, the storage port and the
 * configuration are imported by the local admin commands' actions only (`await import(…)`), so that a
 * CI job's `npx registry push` does not load them. Loading them all was most of a remote command's
 * time (a remote command took 48 s on a loaded machine): 167 modules and about 470 ms of CPU before
 * it sent its request, 19 modules and 100 ms now. Keep the imports here and in the command files
 * `import type` unless every command needs them.
 */
import { resolve } from 'node:path'
import { Command, Option } from 'commander'
import type { Organizations } from '../domain/accounts/organizations.js'
import type { Storage } from '../storage/port.js'
import { KEY_ROLES, type KeyRole } from '../storage/registry-records.js'
import type { ImportResult } from './import.js'
import { registerMirrorCommands } from './mirror.js'
import { CliFailure } from './remote/client.js'
import { registerRemoteCommands } from './remote/commands.js'
import type { ProgressBars } from './progress.js'
import { registerSecretsCommands } from './secrets.js'

interface GlobalOptions {
  storage?: string
  json?: boolean
}

const program = new Command()
program
  .name('registry')
  .description('Operate an API registry storage directory (also while the server runs on it), or talk to a running registry over HTTP (push, lint, diff, pull, list, restore).')
  .option('--storage <dir>', 'the storage directory (default: REGISTRY_STORAGE or ./storage)')
  .option('--json', 'print one JSON object and nothing else')
  .showHelpAfterError()

const globals = (): GlobalOptions => program.opts<GlobalOptions>()

/** The storage directory: --storage, else the configuration's. */
async function storageDir(): Promise<string> {
  if (globals().storage) return resolve(globals().storage!)
  const { loadConfig } = await import('../config.js')
  return loadConfig().storage
}

/** The storage directory, checked: one that this user cannot read and write is refused with the fix. */
async function usableStorage(): Promise<string> {
  const [storage, { checkStorage }] = await Promise.all([storageDir(), import('../startup.js')])
  checkStorage(storage)
  return storage
}

/** Prints the result: the JSON object with --json, else the human lines. */
function output(json: unknown, lines: string[]): void {
  if (globals().json) process.stdout.write(`${JSON.stringify(json, null, 2)}\n`)
  else if (lines.length) process.stdout.write(`${lines.join('\n')}\n`)
}

/** Progress bars for a long command: on a terminal only, never with --json. */
async function progressOf(command: string): Promise<ProgressBars> {
  const { progressBars, showsProgress } = await import('./progress.js')
  return progressBars(command, showsProgress(process.stderr, Boolean(globals().json)))
}

/** Runs long work with its progress bars, and clears them before the result is printed. */
async function withProgress<T>(command: string, work: (progress: ProgressBars['listener']) => Promise<T>): Promise<T> {
  const bars = await progressOf(command)
  try {
    return await work(bars.listener)
  } finally {
    bars.stop()
  }
}

/**
 * The storage port the registry serves from: PostgreSQL when REGISTRY_DATABASE_URL is set and no
 * `--storage` was given (docs/storage.md), else the LMDB adapter on the storage directory.
 */
async function openStorage(): Promise<Storage> {
  const databaseUrl = globals().storage ? undefined : (await import('../config.js')).loadConfig().databaseUrl
  if (databaseUrl) return (await import('../storage/postgres/storage.js')).PostgresStorage.open(databaseUrl)
  return new (await import('../storage/lmdb/storage.js')).LmdbStorage(await usableStorage())
}

/** The organizations and their keys, on the storage port (docs/storage.md). */
async function withOrganizations<T>(action: (organizations: Organizations) => Promise<T>): Promise<T> {
  const { Organizations } = await import('../domain/accounts/organizations.js')
  const storage = await openStorage()
  try {
    return await action(new Organizations(storage))
  } finally {
    await storage.close()
  }
}

/** Opens only the storage port (with its blobs): the commands that need no worker threads. */
async function withStore<T>(action: (storage: Storage) => Promise<T>): Promise<T> {
  const storage = await openStorage()
  try {
    return await action(storage)
  } finally {
    await storage.close()
  }
}

program.command('serve').description('run the server (what npm start runs)').action(async () => {
  if (globals().storage) process.env.REGISTRY_STORAGE = await storageDir()
  const { serve } = await import('../server.js')
  await serve()
})

const org = program.command('org').description('organizations')
org.command('create <slug>').description('create an organization and its first key')
  .option('--name <name>', 'display name')
  .action(async (slug: string, options: { name?: string }) => withOrganizations(async (organizations) => {
    const { organizationView } = await import('../domain/resources/views.js')
    const created = await organizations.create(slug, options.name)
    output({ organization: organizationView(created.organization), api_key: created.secret },
      [`organization ${created.organization.slug} (${created.organization.id})`, `API key: ${created.secret}`])
  }))
org.command('list').description('list organizations').action(async () => withOrganizations(async (organizations) => {
  const { organizationView } = await import('../domain/resources/views.js')
  const orgs = await organizations.list()
  output({ organizations: orgs.map(organizationView) }, orgs.map((o) => `${o.slug}\t${o.id}\t${o.name}`))
}))

const key = program.command('key').description('organization keys')
key.command('create').description('issue a new key').requiredOption('--org <slug>', 'organization slug')
  .option('--name <name>', 'a name to recognise the key by')
  .addOption(new Option('--role <role>', 'read: GET only; write: all but keys and organization settings; admin: all')
    .choices([...KEY_ROLES]).default('admin'))
  .action(async (options: { org: string; name?: string; role: KeyRole }) => withOrganizations(async (organizations) => {
    const issued = await organizations.createKey(options.org, options.name, options.role)
    output({ id: issued.key.id, role: options.role, api_key: issued.secret }, [`key ${issued.key.id} (${options.role})`, `API key: ${issued.secret}`])
  }))
key.command('list').description('list keys (never their secrets)').requiredOption('--org <slug>', 'organization slug')
  .action(async (options: { org: string }) => withOrganizations(async (organizations) => {
    const [{ keyView }, { roleOf }] = await Promise.all([import('../domain/resources/views.js'), import('../domain/accounts/organizations.js')])
    const keys = await organizations.listKeys(options.org)
    output({ keys: keys.map(keyView) }, keys.map((k) =>
      `${k.id}\t${k.name ?? '-'}\t${roleOf(k)}\tcreated ${k.created_at}\tlast used ${k.last_used_at ?? 'never'}${k.revoked_at ? `\trevoked ${k.revoked_at}` : ''}`))
  }))
key.command('revoke <key-id>').description('revoke a key: the next request with it gets 401')
  .action(async (keyId: string) => withOrganizations(async (organizations) => {
    const { keyView } = await import('../domain/resources/views.js')
    const revoked = await organizations.revokeKey(keyId)
    output({ key: keyView(revoked) }, [`revoked ${revoked.id}`])
  }))

program.command('backup <dest-dir>').description('write a consistent, restorable copy of the storage directory')
  .action(async (destination: string) => withStore(async (port) => {
    const [{ backupStorage }, storage] = await Promise.all([import('../domain/operations/maintenance.js'), storageDir()])
    const target = resolve(destination)
    const result = await withProgress('backup', (progress) => backupStorage(port, storage, target, progress))
    output({ destination: target, ...result }, [`backup written to ${target} (${result.blobs} blobs)`])
  }))

program.command('verify').description('check every blob against its checksum and every version against the blobs')
  .action(async () => withStore(async (storage) => {
    const [{ verifyStorage }, { secretsLines, secretsReport }] = await Promise.all([import('../domain/operations/maintenance.js'), import('./stored-secrets.js')])
    const report = await withProgress('verify', (progress) => verifyStorage(storage, storage.blobs, progress))
    // Secrets to enter again are reported, not failed on: the storage is whole, the key is the operator's.
    const secrets = await secretsReport(storage, await storageDir())
    output({ ...report, secrets: { key: secrets.key, ...secrets.inventory } },
      [...report.problems, ...secretsLines(secrets), `${report.ok ? 'ok' : 'FAILED'}: ${report.blobs} blobs, ${report.versions} versions, ${report.problems.length} problems`])
    if (!report.ok) process.exitCode = 1
  }))

program.command('gc').description('remove blobs that no version references, and temporary files a crash left')
  .option('--grace-minutes <n>', 'keep blobs younger than this (an upload writes its blob before committing)', '15')
  .action(async (options: { graceMinutes: string }) => withStore(async (storage) => {
    const { collectGarbage } = await import('../domain/operations/maintenance.js')
    const result = await withProgress('gc', (progress) => collectGarbage(storage, storage.blobs, Number(options.graceMinutes) * 60_000, progress))
    output(result, [`removed ${result.removed} blobs, freed ${result.bytesFreed} bytes`])
  }))

/** A storage named on the command line: a postgres:// URL, or a storage directory (LMDB). */
const isDatabaseUrl = (place: string) => /^postgres(ql)?:\/\//i.test(place)

/** What a message may say of a storage: a directory, or user@host/database of a URL (never its password). */
function placeOf(place: string): string {
  if (!isDatabaseUrl(place)) return resolve(place)
  const url = new URL(place)
  return `postgres://${url.username ? `${decodeURIComponent(url.username)}@` : ''}${url.host || 'localhost'}${url.pathname}`
}

async function openPlace(place: string, role: 'source' | 'target'): Promise<Storage> {
  if (isDatabaseUrl(place)) return (await import('../storage/postgres/storage.js')).PostgresStorage.open(place)
  const directory = resolve(place)
  // A mistyped source must not become a new, empty registry that migrates nothing.
  const { existsSync } = await import('node:fs')
  if (role === 'source' && !existsSync(resolve(directory, 'index'))) throw new Error(`no registry storage at ${directory} (it has no index/)`)
  return new (await import('../storage/lmdb/storage.js')).LmdbStorage(directory)
}

program.command('migrate').description('copy a whole registry into an empty storage: a storage directory (LMDB) to PostgreSQL, or back (stop the server first)')
  .requiredOption('--from <dir|url>', 'the registry to copy: a storage directory, or a postgres:// URL')
  .requiredOption('--to <dir|url>', 'where to copy it: an empty storage directory, or the postgres:// URL of an empty database')
  .action(async (options: { from: string; to: string }) => {
    const { migrateStorage } = await import('../domain/operations/migration.js')
    const source = await openPlace(options.from, 'source')
    try {
      const target = await openPlace(options.to, 'target')
      try {
        const report = await withProgress('migrate', (progress) => migrateStorage(source, target, progress, placeOf(options.to)))
        output({ from: placeOf(options.from), to: placeOf(options.to), ...report }, [
          `copied ${placeOf(options.from)} to ${placeOf(options.to)}: ${report.organizations} organizations, ${report.keys} keys, ${report.resources} resources, ` +
          `${report.versions} versions, ${report.blobs} blobs, ${report.sites} sites, ${report.sdks} SDKs, ${report.builds} builds, ` +
          `${report.connections} repository connections, ${report.webhook_endpoints} webhook endpoints, ${report.mirror_history} mirror history entries`,
          'serve it with the same secret key (REGISTRY_SECRET_KEY or REGISTRY_SECRET_KEY_FILE): its secrets are copied sealed',
        ])
      } finally {
        await target.close()
      }
    } finally {
      await source.close()
    }
  })

program.command('import <dir>').description('upload every OpenAPI, JSON Schema and ruleset file under a folder')
  .requiredOption('--org <slug>', 'organization slug')
  .action(async (directory: string, options: { org: string }) => {
    const [{ loadConfig }, { Registry }, { importFile, listImportFiles }] = await Promise.all([import('../config.js'), import('../domain/registry.js'), import('./import.js')])
    const registry = await Registry.open({ ...loadConfig(), storage: await usableStorage() })
    try {
      const organization = await registry.organizations.requireBySlug(options.org)
      const actor = { organization, keyId: 'cli', role: 'admin' as const }
      const root = resolve(directory)
      const files = await listImportFiles(root)
      const bars = await progressOf('import')
      const results: ImportResult[] = []
      for (const file of files) {
        const result = await importFile(registry, actor, root, file)
        results.push(result)
        if (bars.listener) bars.listener('files', results.length, files.length)
        else if (!globals().json) {
          process.stdout.write(`${result.outcome}\t${result.file}${result.slug ? `\t${result.kind}s/${result.slug}` : ''}${result.version ? ` v${result.version}` : ''}${result.error ? `\t${result.error}` : ''}\n`)
        }
      }
      bars.stop()
      const count = (outcome: ImportResult['outcome']) => results.filter((r) => r.outcome === outcome).length
      const summary = { files: files.length, created: count('created'), new_versions: count('new-version'), unchanged: count('unchanged'), failed: count('failed'), skipped: count('skipped') }
      output({ ...summary, results }, [`${summary.files} files: ${summary.created} created, ${summary.new_versions} new versions, ${summary.unchanged} unchanged, ${summary.failed} failed, ${summary.skipped} skipped`])
      if (summary.failed > 0) process.exitCode = 1
    } finally {
      await registry.close()
    }
  })

registerMirrorCommands(program, { storageDir: usableStorage, openStorage, output, withProgress })
registerSecretsCommands(program, { storageDir: usableStorage, openStorage, output, withProgress })
registerRemoteCommands(program, globals)

program.parseAsync(process.argv).catch(async (error: Error & { code?: string }) => {
  // A remote command's usage, authentication or network error (2), or a refused bundle (1): one line.
  if (error instanceof CliFailure) {
    process.stderr.write(`registry: ${error.message}\n`)
    process.exitCode = error.exitCode
    return
  }
  // A storage directory this user cannot use, or a bad setting: the line says how to fix it.
  let storage: string | undefined
  try { storage = await storageDir() } catch { /* the configuration itself is what failed */ }
  const { explainStartupFailure } = await import('../startup.js')
  const message = explainStartupFailure(error, { storage }) ?? error.message
  const code = typeof error.code === 'string' ? error.code : 'error'
  if (globals().json) process.stdout.write(`${JSON.stringify({ error: { code, message } })}\n`)
  else process.stderr.write(`registry: ${message}\n`)
  process.exitCode = 1
})
