import type { AddressInfo } from 'node:net'
import { loadConfig } from './config.js'
import { buildApp } from './app.js'
import { Registry } from './domain/registry.js'
import { METRICS_LOOPBACK_NOTICE } from './http/metrics-routes.js'
import { RegistryMetrics } from './metrics/registry-metrics.js'
import { checkStorage, explainStartupFailure, fatalLogLine, type StartupContext } from './startup.js'

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
  const registry = Registry.open(config, metrics)
  let app
  try {
    const issued = await registry.organizations.bootstrap(config.bootstrapKey)
    if (issued) process.stdout.write(`API key: ${issued.secret}\n`)
    app = await buildApp(registry, config, { metrics })
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
  app.log.info({ address, storage: config.storage }, `registry listening on ${address}`)
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

if (import.meta.url === `file://${process.argv[1]}`) {
  serve().catch((error) => {
    console.error(error)
    process.exit(1)
  })
}
