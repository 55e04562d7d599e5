/** 008_mirror.sql: the git mirror's and search's tables keep their constraints against raw SQL. */
import pg from 'pg'
import t from 'tap'
import { PostgresStorage } from '../../../src/storage/postgres/storage.js'
import { postgresForFile } from '../../support/postgres.js'

const server = await postgresForFile(t)
if (server) {
  t.test('mirror and search: the constraints hold whatever the code above does', async (t) => {
    const url = await server.createDatabase()
    const storage = await PostgresStorage.open(url)
    t.teardown(() => storage.close())
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    t.teardown(() => client.end())
    await client.query("INSERT INTO organizations (id, slug, record) VALUES ('O', 'acme', '{}')")
    const commit = 'a'.repeat(40)
    const head = (organization: string, at: string, record = { commit: at, updated_at: 'now' }) =>
      client.query('INSERT INTO mirror_heads (organization_id, head_commit, record) VALUES ($1, $2, $3)', [organization, at, JSON.stringify(record)])
    await t.rejects(head('nope', commit), { code: '23503' }, 'a head of an organization that exists')
    await t.rejects(head('O', 'main'), { code: '23514' }, 'a head is a commit id')
    await t.rejects(head('O', commit, { commit: 'b'.repeat(40), updated_at: 'now' }), { code: '23514' }, 'the column is the record\'s commit')
    await head('O', commit)
    await t.rejects(head('O', commit), { code: '23505' }, 'one head per organization')

    const remote = (organization: string, target: string, record = { url: target }) =>
      client.query('INSERT INTO mirror_remotes (organization_id, url, record) VALUES ($1, $2, $3)', [organization, target, JSON.stringify(record)])
    await t.rejects(remote('nope', 'https://git.example.com/a.git'), { code: '23503' }, 'a remote of an organization that exists')
    await t.rejects(remote('O', 'file:///etc'), { code: '23514' }, 'an http(s) remote')
    await t.rejects(remote('O', 'https://git.example.com/a.git', { url: 'https://elsewhere.example.com/a.git' }), { code: '23514' }, 'the column is the record\'s URL')
    await remote('O', 'https://git.example.com/a.git')
    await t.rejects(remote('O', 'https://git.example.com/b.git'), { code: '23505' }, 'one remote per organization')

    const entry = (table: 'mirror_journal' | 'mirror_history', seq: number, record: Record<string, unknown>) =>
      client.query(`INSERT INTO ${table} (organization_id, seq, entry) VALUES ('O', $1, $2)`, [seq, JSON.stringify(record)])
    await t.rejects(entry('mirror_journal', 0, { seq: 0, organization_id: 'O', change: 'create' }), { code: '23514' }, 'numbers start at 1')
    await t.rejects(entry('mirror_journal', 1, { seq: 2, organization_id: 'O', change: 'create' }), { code: '23514' }, 'the entry\'s number is the row\'s')
    await t.rejects(entry('mirror_journal', 1, { seq: 1, organization_id: 'P', change: 'create' }), { code: '23514' }, 'the entry\'s organization is the row\'s')
    await t.rejects(entry('mirror_journal', 1, { seq: 1, organization_id: 'O', change: 'rename' }), { code: '23514' }, 'a change the mirror knows')
    await entry('mirror_journal', 1, { seq: 1, organization_id: 'O', change: 'rebuild' })
    await t.rejects(entry('mirror_history', 1, { seq: 1, change: 'rebuild' }), { code: '23514' }, 'a rebuild request is not history')
    await t.rejects(entry('mirror_history', 2, { seq: 1, change: 'create' }), { code: '23514' }, 'the history entry\'s number is the row\'s')
    await entry('mirror_history', 1, { seq: 1, change: 'create' })

    await client.query("INSERT INTO search_terms (checksum, terms) VALUES ('sha256:x', '{}')")
    await t.rejects(client.query("INSERT INTO search_terms (checksum, terms) VALUES ('sha256:x', '{}')"), { code: '23505' }, 'one set of terms per checksum')
  })
}
