import { loadConfig } from './config.js'
import { buildApp } from './app.js'
import { Registry } from './domain/registry.js'
import { RegistryMetrics } from './metrics/registry-metrics.js'

/** Starts the registry: open storage, first-start bootstrap, listen, and shut down cleanly on signals. */
export async function serve(): Promise<void> {
  const config = loadConfig()
  const metrics = new RegistryMetrics({ processMetrics: true })
  const registry = Registry.open(config, metrics)
  const issued = await registry.organizations.bootstrap(config.bootstrapKey)
  if (issued) process.stdout.write(`API key: ${issued.secret}\n`)
  const app = await buildApp(registry, config, { metrics })
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
  const address = await app.listen({ port: config.port, host: config.host })
  app.log.info({ address, storage: config.storage }, `registry listening on ${address}`)
  // The git mirror's writer replays pending changes, then follows new ones. It starts once the server
  // answers: its first round checks every organization's repository, which on a large index (or after
  // an import) would otherwise hold back start-up.
  registry.mirror?.start(app.log)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  serve().catch((error) => {
    console.error(error)
    process.exit(1)
  })
}
