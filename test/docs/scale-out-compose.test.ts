/**
 * The scale-out example (examples/scale-out/, docs/scale-out.md) cannot be started here (no Docker
 * engine on these machines): what can be checked without one is. The compose file parses, every
 * replica is wired as the page says (the `postgres` service's database with its credentials, the one
 * shared secret key, a storage volume of its own, no port of its own, started once PostgreSQL is
 * healthy), every variable it sets is one the server reads and the page names, and nginx's upstream
 * is exactly the replicas on the image's port, with the limits the page asks of a balancer.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import t from 'tap'
import { parse } from 'yaml'

const root = join(import.meta.dirname, '..', '..')
const folder = join(root, 'examples', 'scale-out')
const read = (...path: string[]) => readFileSync(join(...path), 'utf8')
// Merge keys (`<<: *registry`) as Docker Compose reads them.
const compose = parse(read(folder, 'compose.yaml'), { merge: true })
const nginx = read(folder, 'nginx.conf')
const page = read(root, 'docs', 'scale-out.md')
const services: Record<string, any> = compose.services
const replicas = Object.keys(services).filter((name) => /^registry-\d+$/.test(name))

/** A compose value with its `${VAR:?message}` / `${VAR:-default}` interpolations replaced by `value`. */
const interpolated = (text: string, value = 'secret') => text.replace(/\$\{\w+(?::?[?-][^}]*)?\}/g, value)

/** The port the image listens on (the Dockerfile's runtime ENV PORT). */
const imagePort = /^ENV .*\bPORT=(\d+)/m.exec(read(root, 'Dockerfile'))?.[1]

t.test('the services: PostgreSQL 15, three replicas of the registry image, nginx', async (t) => {
  t.same(replicas, ['registry-1', 'registry-2', 'registry-3'])
  t.same(Object.keys(services).sort(), ['nginx', 'postgres', ...replicas].sort(), 'nothing else')
  t.match(services.postgres.image, /^postgres:15\b/, 'the PostgreSQL release the tests run')
  t.match(services.postgres.healthcheck.test.join(' '), /pg_isready/)
  t.match(services.postgres.command.join(' '), /tcp_keepalives_idle=\d+/, 'keepalives, as the page says the example sets')
  t.match(services.nginx.image, /^nginx\b/)
  t.same(services.nginx.ports, ['8080:8080'], 'only nginx is published')
})

t.test('every replica: the postgres service\'s database, the shared secret key, its own storage volume', async (t) => {
  const postgres = services.postgres.environment
  const storageVolumes = new Set<string>()
  for (const name of replicas) {
    const replica = services[name]
    t.ok(existsSync(join(folder, replica.build, 'Dockerfile')), `${name}: built from the project's Dockerfile`)
    const env: Record<string, string> = replica.environment
    const url = new URL(interpolated(env.REGISTRY_DATABASE_URL))
    t.same([url.protocol, url.hostname, url.port, url.username, url.pathname],
      ['postgres:', 'postgres', '5432', postgres.POSTGRES_USER, `/${postgres.POSTGRES_DB}`], `${name}: REGISTRY_DATABASE_URL names the postgres service's database`)
    t.ok(env.REGISTRY_DATABASE_URL.includes(postgres.POSTGRES_PASSWORD), `${name}: with the password the database is given`)
    const secret = /^\/run\/secrets\/(\w+)$/.exec(env.REGISTRY_SECRET_KEY_FILE)?.[1]
    t.ok(secret && replica.secrets.includes(secret) && compose.secrets[secret]?.file, `${name}: the secret key from a compose secret`)
    t.notOk(env.REGISTRY_SECRET_KEY, `${name}: one source of the key`)
    t.ok(env.REGISTRY_TRUST_PROXY, `${name}: trusts the balancer's X-Forwarded-For`)
    const storage = (replica.volumes as string[]).filter((volume) => volume.split(':')[1] === '/app/storage')
    t.equal(storage.length, 1, `${name}: one storage volume`)
    const volume = storage[0]?.split(':')[0]
    t.ok(volume in compose.volumes, `${name}: ${volume} is a named volume`)
    storageVolumes.add(volume)
    t.notOk(replica.ports, `${name}: publishes no port (only nginx reaches it)`)
    t.equal(replica.depends_on?.postgres?.condition, 'service_healthy', `${name}: started once PostgreSQL is ready (a replica exits when it cannot connect)`)
    t.equal(replica.restart, 'unless-stopped')
  }
  t.equal(storageVolumes.size, replicas.length, 'no two replicas share a storage volume')
  t.same(new Set(replicas.map((name) => services[name].environment.REGISTRY_DATABASE_URL)).size, 1, 'one database for all')
})

t.test('every variable a replica gets is one the server reads and the page names', async (t) => {
  const readers = read(root, 'src', 'config.ts') + read(root, 'src', 'secret-key-source.ts')
  const names = new Set(replicas.flatMap((name) => Object.keys(services[name].environment)))
  for (const name of names) {
    t.ok(readers.includes(`env.${name}`), `${name} is read by src/config.ts or src/secret-key-source.ts`)
    t.ok(page.includes(`\`${name}\``), `${name} is named in docs/scale-out.md`)
  }
  for (const required of ['REGISTRY_DATABASE_URL', 'REGISTRY_SECRET_KEY_FILE', 'REGISTRY_TRUST_PROXY']) t.ok(names.has(required), `${required} is set`)
})

t.test('nginx.conf: the upstream is the compose file\'s replicas on the image\'s port, with the limits the page asks', async (t) => {
  t.same(services.nginx.volumes, ['./nginx.conf:/etc/nginx/nginx.conf:ro'])
  t.ok(existsSync(join(dirname(join(folder, 'compose.yaml')), 'nginx.conf')))
  t.same(Object.keys(services.nginx.depends_on).sort(), replicas, 'nginx starts after the replicas it resolves')
  const upstream = /upstream\s+(\w+)\s*\{([^}]*)\}/.exec(nginx)
  t.ok(upstream, 'one upstream block')
  const servers = [...(upstream?.[2] ?? '').matchAll(/^\s*server\s+([\w.-]+):(\d+)/gm)].map((m) => `${m[1]}:${m[2]}`)
  t.same(servers.sort(), replicas.map((name) => `${name}:${imagePort}`), `the servers are the replicas, on port ${imagePort}`)
  t.match(nginx, new RegExp(`proxy_pass\\s+http://${upstream?.[1]};`), 'requests go to that upstream')
  t.match(nginx, /proxy_set_header\s+Host\s+\$host;/, 'Host passed through (sites route by it)')
  t.match(nginx, /proxy_set_header\s+X-Forwarded-For\s+\$proxy_add_x_forwarded_for;/)
  const bodyLimit = Number(/client_max_body_size\s+(\d+)m;/.exec(nginx)?.[1])
  t.ok(bodyLimit >= 64, `client_max_body_size ${bodyLimit}m: at least REGISTRY_BODY_LIMIT's default, 64mb`)
  const readTimeout = Number(/proxy_read_timeout\s+(\d+)s;/.exec(nginx)?.[1])
  t.ok(readTimeout > 120, `proxy_read_timeout ${readTimeout}s: longer than REGISTRY_LINT_TIMEOUT_MS's default, 120 s`)
  t.notMatch(nginx, /non_idempotent/, 'a POST cut off by a dying replica is not sent again to another')
})
