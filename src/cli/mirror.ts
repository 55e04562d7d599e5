/**
 * `registry mirror …`: rebuild the git mirror from the index, and set the remote it is pushed to. The
 * mirror (isomorphic-git), the index and the storage are imported by the actions only (see main.ts).
 */
import type { Command } from 'commander'
import type { Mirror } from '../domain/mirror/mirror.js'
import type { ProgressListener } from '../domain/operations/progress.js'
import type { Organizations } from '../domain/accounts/organizations.js'
import type { Storage } from '../storage/port.js'
import type { OrganizationRecord } from '../storage/registry-records.js'

export interface CliContext {
  /** The storage directory, checked (the configuration is read only when a command needs it). */
  storageDir: () => Promise<string>
  /**
   * The storage port the registry serves from: PostgreSQL when REGISTRY_DATABASE_URL is set (and no
   * `--storage` was given), else the LMDB adapter on the storage directory. The caller closes it.
   */
  openStorage: () => Promise<Storage>
  output: (json: unknown, lines: string[]) => void
  /** Runs long work with progress bars on a terminal (see progress.ts). */
  withProgress: <T>(command: string, work: (progress: ProgressListener | undefined) => Promise<T>) => Promise<T>
}

/** Opens the index and the mirror (without starting its writer), runs `action`, closes both. */
async function withMirror<T>(context: CliContext, action: (mirror: Mirror, orgs: Organizations) => Promise<T>): Promise<T> {
  const [storage, { loadConfig }, { Mirror }, { OutboundPolicy }, { Organizations }, { openSecrets }] = await Promise.all([
    context.storageDir(), import('../config.js'), import('../domain/mirror/mirror.js'), import('../domain/outbound/outbound.js'), import('../domain/accounts/organizations.js'),
    import('./stored-secrets.js'),
  ])
  // set-remote refuses a host REGISTRY_OUTBOUND_HOSTS does not allow, like PUT /v1/mirror.
  const outbound = OutboundPolicy.of(loadConfig().outboundHosts)
  const port = await context.openStorage()
  // set-remote seals the token with the secret key the server uses (the same environment).
  const { secrets } = await openSecrets(port, storage)
  const mirror = new Mirror(port, port.blobs, { storage, outbound, secrets })
  try {
    return await action(mirror, new Organizations(port))
  } finally {
    await mirror.close()
    await port.close()
  }
}

export function registerMirrorCommands(program: Command, context: CliContext): void {
  const mirror = program.command('mirror').description('the git mirror of each organization')

  mirror.command('rebuild').description('rebuild the git repositories from the index, with the whole history in order')
    .option('--org <slug>', 'only this organization')
    .action(async (options: { org?: string }) => withMirror(context, async (m, orgs) => {
      const targets: OrganizationRecord[] = options.org ? [await orgs.requireBySlug(options.org)] : await orgs.list()
      const { queued } = await context.withProgress('mirror rebuild', (progress) => m.rebuild(targets, progress))
      const heads = Object.fromEntries(await Promise.all(targets.map(async (org) => [org.slug, (await m.status(org)).head] as const)))
      context.output({ queued, heads }, queued
        ? [`queued: the running server rebuilds ${targets.length} organization(s) on its next round`]
        : targets.map((org) => `${org.slug}\t${heads[org.slug] ?? '(empty)'}`))
    }))

  mirror.command('show').description('the mirror head and push remote of an organization (never the token)')
    .requiredOption('--org <slug>', 'organization slug')
    .action(async (options: { org: string }) => withMirror(context, async (m, orgs) => {
      const status = await m.status(await orgs.requireBySlug(options.org))
      context.output(status, Object.entries(status).map(([field, value]) => `${field}\t${value ?? '-'}`))
    }))

  mirror.command('set-remote <url>').description('push new commits to this remote (the server pushes them)')
    .requiredOption('--org <slug>', 'organization slug')
    .option('--token <token>', 'password for the remote (default: the REGISTRY_MIRROR_TOKEN environment variable, which keeps it out of the process list)')
    .action(async (url: string, options: { org: string; token?: string }) => withMirror(context, async (m, orgs) => {
      const token = options.token ?? process.env.REGISTRY_MIRROR_TOKEN ?? null
      const status = await m.setRemote(await orgs.requireBySlug(options.org), url, token || null)
      context.output(status, [`push mirror of ${options.org}: ${status.url}${status.token_set ? ' (with a token)' : ''}`])
    }))

  mirror.command('remove-remote').description('stop pushing to the remote')
    .requiredOption('--org <slug>', 'organization slug')
    .action(async (options: { org: string }) => withMirror(context, async (m, orgs) => {
      await m.removeRemote(await orgs.requireBySlug(options.org))
      context.output({ removed: true }, [`push mirror of ${options.org} removed`])
    }))
}
