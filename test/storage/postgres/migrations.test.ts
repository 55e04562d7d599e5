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

  t.test('sdks: the constraints hold whatever the code above does', async (t) => {
    const url = await server.createDatabase()
    const storage = await PostgresStorage.open(url)
    t.teardown(() => storage.close())
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    t.teardown(() => client.end())
    const record = '{}'
    const sdk = (id: string, organization: string, slug: string) => client.query(
      'INSERT INTO sdks (id, organization_id, slug, last_build_number, record) VALUES ($1, $2, $3, 0, $4)', [id, organization, slug, record])
    const build = (id: string, organization: string, sdkId: string, number: number, status = 'queued') => client.query(
      'INSERT INTO builds (id, organization_id, sdk_id, number, status, record) VALUES ($1, $2, $3, $4, $5, $6)', [id, organization, sdkId, number, status, record])
    await client.query("INSERT INTO organizations (id, slug, record) VALUES ('O', 'acme', $1), ('P', 'beta', $1)", [record])
    await client.query("INSERT INTO resources (id, organization_id, kind, slug, name, visibility, last_number, record) VALUES ('R', 'O', 'api', 'shop', 'Shop', 'private', 0, $1)", [record])
    await sdk('S', 'O', 'pets')
    await t.rejects(sdk('T', 'O', 'pets'), { code: '23505' }, 'one slug per organization')
    await sdk('T', 'P', 'pets')
    await t.rejects(sdk('U', 'nope', 'x'), { code: '23503' }, 'an SDK of an organization that exists')
    await t.rejects(client.query("INSERT INTO sdk_apis (sdk_id, api_id) VALUES ('S', 'nope')"), { code: '23503' }, 'an attached API exists')
    await client.query("INSERT INTO sdk_apis (sdk_id, api_id) VALUES ('S', 'R')")
    await t.rejects(client.query("DELETE FROM resources WHERE id = 'R'"), { code: '23503' }, 'an attached API is not removed')
    await t.rejects(client.query("INSERT INTO sdk_repositories (sdk_id, target, record) VALUES ('S', 'cobol', $1)", [record]), { code: '23514' }, 'a known target')
    await client.query("INSERT INTO sdk_repositories (sdk_id, target, record) VALUES ('S', 'php', $1)", [record])
    await t.rejects(client.query("INSERT INTO sdk_repositories (sdk_id, target, record) VALUES ('S', 'php', $1)", [record]), { code: '23505' }, 'one repository per target')
    await build('B1', 'O', 'S', 1)
    await t.rejects(build('B2', 'O', 'S', 1), { code: '23505' }, 'one build per number of an SDK')
    await t.rejects(build('B2', 'O', 'S', 0), { code: '23514' }, 'numbers start at 1')
    await t.rejects(build('B2', 'P', 'S', 2), { code: '23503' }, "a build is of its SDK's organization")
    await t.rejects(build('B2', 'O', 'S', 2, 'lost'), { code: '23514' }, 'a known status')
    await t.rejects(client.query("INSERT INTO build_logs (build_id, log) VALUES ('nope', '')"), { code: '23503' }, 'a log of a build')
    await client.query("INSERT INTO build_logs (build_id, log) VALUES ('B1', 'x')")
    await client.query("INSERT INTO build_artifacts (build_id, bytes) VALUES ('B1', '\\x00ff')")
    await client.query("DELETE FROM sdks WHERE id = 'S'")
    const left = await client.query(`SELECT (SELECT count(*) FROM sdk_apis) + (SELECT count(*) FROM sdk_repositories) + (SELECT count(*) FROM builds)
      + (SELECT count(*) FROM build_logs) + (SELECT count(*) FROM build_artifacts) AS n`)
    t.equal(Number(left.rows[0].n), 0, "an SDK's attachments, repositories, builds, logs and artifacts go with it")
    await client.query("DELETE FROM resources WHERE id = 'R'")
    t.pass('detached, the API is removed')
  })
}
