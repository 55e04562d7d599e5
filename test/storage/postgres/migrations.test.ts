import pg from 'pg'
import t from 'tap'
import { knownMigrations } from '../../../src/storage/postgres/migrate.js'
import { PostgresStorage } from '../../../src/storage/postgres/storage.js'
import { postgresForFile } from '../../support/postgres.js'

const server = await postgresForFile(t)
if (server) {
  const applied = async (url: string) => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      return (await client.query<{ name: string }>('SELECT name FROM registry_migrations ORDER BY id')).rows.map((row) => row.name)
    } finally {
      await client.end()
    }
  }

  t.test('replicas starting together against an empty database apply each migration once', async (t) => {
    const url = await server.createDatabase()
    const replicas = await Promise.all([1, 2, 3].map(() => PostgresStorage.open(url)))
    t.teardown(() => Promise.all(replicas.map((replica) => replica.close())))
    t.same(await applied(url), knownMigrations())
    t.ok(knownMigrations().includes('001_initial'))
    t.same(await replicas[2].read.organizations.list(), [], 'every replica serves')
    const again = await PostgresStorage.open(url)
    await again.close()
    t.same(await applied(url), knownMigrations(), 'nothing applied twice')
  })

  t.test('a database migrated by a newer release is refused with a message that says what to do', async (t) => {
    const url = await server.createDatabase()
    await (await PostgresStorage.open(url)).close()
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    await client.query("INSERT INTO registry_migrations (name, run_on) VALUES ('999_from_the_future', now())")
    await client.end()
    await t.rejects(PostgresStorage.open(url), {
      name: 'NewerSchemaError',
      message: /newer schema than this registry knows \(migrations 999_from_the_future .*run the newer release/,
    })
  })

  t.test('the constraints hold whatever the code above does', async (t) => {
    const url = await server.createDatabase()
    const storage = await PostgresStorage.open(url)
    t.teardown(() => storage.close())
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    t.teardown(() => client.end())
    const record = '{}'
    await client.query("INSERT INTO organizations (id, slug, record) VALUES ('O', 'acme', $1)", [record])
    await client.query("INSERT INTO resources (id, organization_id, kind, slug, name, visibility, last_number, record) VALUES ('R', 'O', 'api', 'shop', 'Shop', 'private', 0, $1)", [record])
    await t.rejects(client.query("INSERT INTO resources (id, organization_id, kind, slug, name, visibility, last_number, record) VALUES ('S', 'O', 'api', 'shop', 'Shop', 'private', 0, $1)", [record]),
      { code: '23505' }, 'one slug per organization and kind')
    await t.rejects(client.query("UPDATE resources SET last_number = 1, current_number = 1 WHERE id = 'R'"),
      { code: '23503' }, 'a current version that does not exist')
    await t.rejects(client.query("UPDATE resources SET last_number = 2, current_number = 1 WHERE id = 'R'"),
      { code: '23514' }, 'the current version is the last one')
    await t.rejects(client.query("INSERT INTO versions (id, resource_id, number, kind, checksum, record) VALUES ('V', 'R', 0, 'api', 'c', $1)", [record]),
      { code: '23514' }, 'numbers start at 1')
    await client.query("INSERT INTO versions (id, resource_id, number, kind, checksum, record) VALUES ('V1', 'R', 1, 'api', 'c', $1)", [record])
    await t.rejects(client.query("INSERT INTO versions (id, resource_id, number, kind, checksum, record) VALUES ('V2', 'R', 1, 'api', 'c', $1)", [record]),
      { code: '23505' }, 'one version per number')
  })

  t.test('sites: the constraints hold whatever the code above does', async (t) => {
    const url = await server.createDatabase()
    const storage = await PostgresStorage.open(url)
    t.teardown(() => storage.close())
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    t.teardown(() => client.end())
    const record = '{}'
    const site = (id: string, slug: string) => client.query(
      "INSERT INTO sites (id, organization_id, slug, name, visibility, record) VALUES ($1, 'O', $2, 'Docs', 'private', $3)", [id, slug, record])
    await client.query("INSERT INTO organizations (id, slug, record) VALUES ('O', 'acme', $1)", [record])
    await client.query("INSERT INTO resources (id, organization_id, kind, slug, name, visibility, last_number, record) VALUES ('R', 'O', 'api', 'shop', 'Shop', 'private', 0, $1)", [record])
    await site('S', 'docs')
    await t.rejects(site('T', 'docs'), { code: '23505' }, 'one slug per organization')
    await t.rejects(client.query("INSERT INTO sites (id, organization_id, slug, name, visibility, record) VALUES ('T', 'nope', 'x', 'X', 'private', $1)", [record]),
      { code: '23503' }, 'a site of an organization that exists')
    await site('T', 'other')
    await client.query("INSERT INTO site_domains (domain, site_id) VALUES ('docs.acme.example', 'S')")
    await t.rejects(client.query("INSERT INTO site_domains (domain, site_id) VALUES ('docs.acme.example', 'T')"), { code: '23505' }, 'one site per domain')
    await t.rejects(client.query("INSERT INTO site_domains (domain, site_id) VALUES ('Docs.example', 'T')"), { code: '23514' }, 'domains are lowercase')
    await client.query("INSERT INTO site_guides (site_id, slug, id, position, record) VALUES ('S', 'intro', 'G', 0, $1)", [record])
    await t.rejects(client.query("INSERT INTO site_guides (site_id, slug, id, position, record) VALUES ('S', 'intro', 'H', 1, $1)", [record]),
      { code: '23505' }, 'one guide per slug in a site')
    await t.rejects(client.query("INSERT INTO site_guides (site_id, slug, id, position, record) VALUES ('S', 'x', 'H', -1, $1)", [record]),
      { code: '23514' }, 'positions from 0')
    await t.rejects(client.query("INSERT INTO site_apis (api_id, site_id) VALUES ('nope', 'S')"), { code: '23503' }, 'a listed API exists (checked at commit)')
    await client.query("INSERT INTO site_apis (api_id, site_id) VALUES ('R', 'S')")
    await t.rejects(client.query("DELETE FROM resources WHERE id = 'R'"), { code: '23503' }, 'an API a site lists is not removed without leaving the site')
    await client.query('BEGIN')
    await client.query("DELETE FROM resources WHERE id = 'R'")
    await client.query("DELETE FROM site_apis WHERE api_id = 'R'")
    await client.query('COMMIT')
    t.pass('in one transaction, in either order')
    await client.query("DELETE FROM sites WHERE id = 'S'")
    const left = await client.query("SELECT (SELECT count(*) FROM site_domains) + (SELECT count(*) FROM site_guides) + (SELECT count(*) FROM site_apis) AS n")
    t.equal(Number(left.rows[0].n), 0, "a site's domains, guides and API references go with it")
  })
}
