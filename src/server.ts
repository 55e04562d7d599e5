import type { AddressInfo } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import { loadConfig } from './config.js'
import { reentryLine, type SecretToReenter } from './domain/accounts/secrets.js'
import { buildApp } from './app.js'
import { Registry } from './domain/registry.js'
import { METRICS_LOOPBACK_NOTICE } from './http/metrics-routes.js'
import { RegistryMetrics } from './metrics/registry-metrics.js'
import { checkStorage, explainStartupFailure, fatalLogLine, type StartupContext } from './startup.js'
import { openSecretKeys, secretKeySetting, type OpenedSecretKeys } from './secret-key-source.js'

/**
 * Starts the registry: open storage, first-start bootstrap, listen, and shut down cleanly on signals.
 * A start-up failure an operator can fix is logged as one line that says how, and the process exits 1.
 */
export async function serve(): Promise<void> {
  const context: StartupContext = {}
  try {
    await start(context)
  } catch (error) {
    const reason = explainStartupFailure(error, context)
    if (!reason) throw error
    await new Promise((resolve) => process.stdout.write(fatalLogLine(reason, context), resolve))
    process.exit(1)
  }
}

async function start(context: StartupContext): Promise<void> {
  const config = loadConfig()
  Object.assign(context, { storage: config.storage, host: config.host, port: config.port })
  checkStorage(config.storage)
  const metrics = new RegistryMetrics({ processMetrics: true })
  const keys = openSecretKeys(secretKeySetting(), config.storage)
  const registry = await Registry.open({ ...config, secretKeys: keys.keyring }, metrics)
  let app
  try {
    const issued = await registry.organizations.bootstrap(config.bootstrapKey)
    if (issued) process.stdout.write(`API key: ${issued.secret}\n`)
    // Tokens and webhook secrets an earlier version stored in plaintext are sealed now.
    const sealed = await registry.secrets.sealPlaintext()
    app = await buildApp(registry, config, { metrics })
    logSecrets(app.log, keys, sealed, (await registry.secrets.inventory()).needs_reentry)
    // Listening on 0.0.0.0, Fastify logs each interface as where the server can be reached; the line
    // below says what it listens on.
    await app.listen({ port: config.port, host: config.host, listenTextResolver: (address) => `reachable at ${address}` })
  } catch (error) {
    await app?.close().catch(() => undefined)
    await registry.close().catch(() => undefined)
    throw error
  }
  let closing = false
  const shutdown = async (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down')
    const force = setTimeout(() => process.exit(1), 10_000).unref()
    try {
      await app.close()
      await registry.close()
      clearTimeout(force)
      process.exit(0)
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed')
      process.exit(1)
    }
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
  const address = listeningAddress(app.server.address() as AddressInfo)
  app.log.info({ address, storage: config.databaseUrl ? 'postgresql' : config.storage }, `registry listening on ${address}`)
  if (!config.metricsToken) app.log.info(METRICS_LOOPBACK_NOTICE)
  // The git mirror's writer replays pending changes, then follows new ones. It starts once the server
  // answers: its first round checks every organization's repository, which on a large index (or after
  // an import) would otherwise hold back start-up.
  registry.mirror?.start(app.log)
}

/**
 * The address the server listens on, as configured: `http://0.0.0.0:8080` in a container, not the
 * first of its interfaces (Fastify logs each of those as "reachable at").
 */
function listeningAddress(bound: AddressInfo): string {
  return `http://${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`
}

/** Where the secret key is, what start-up sealed, and every stored secret that must be entered again. */
function logSecrets(log: FastifyBaseLogger, keys: OpenedSecretKeys, sealed: number, toReenter: SecretToReenter[]): void {
  const key_id = keys.keyring.primaryId
  if (keys.created) {
    log.warn({ key_file: keys.location, key_id },
      `created the secret key file ${keys.location}: it seals the repository tokens and webhook secrets in the storage directory. Back it up apart from the storage (a backup without it cannot open them), or set REGISTRY_SECRET_KEY_FILE / REGISTRY_SECRET_KEY`)
  } else {
    log.info({ key_location: keys.location, key_id }, `secret key: ${keys.location}`)
  }
  if (sealed > 0) log.info({ sealed }, `sealed ${sealed} secret(s) stored in plaintext by an earlier version`)
  for (const secret of toReenter) {
    log.warn({ organization_id: secret.organization_id, secret: secret.ref, reason: secret.reason, kid: secret.kid },
      `secret must be entered again: ${reentryLine(secret)}`)
  }
  if (toReenter.length > 0) {
    log.warn({ count: toReenter.length }, `${toReenter.length} stored secret(s) do not open with this server's secret key and must be entered again (see above); everything else is served`)
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  serve().catch((error) => {
    console.error(error)
    process.exit(1)
  })
}
