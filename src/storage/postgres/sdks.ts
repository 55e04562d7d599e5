import { RegistryError, notFound } from '../../errors.js'
import { requireSameBuild, sdkWithBuildAdded, type BuildScope } from '../features/sdks.js'
import type { SdkStore } from '../port.js'
import type { BuildRecord, OutputRepositoryRecord, Page, PageRequest, SdkRecord, SdkTarget } from '../records.js'
import { json, recordOf, recordsOf, type Sql } from './sql.js'

/** The sdks section on PostgreSQL (migrations/006_sdks.sql). */
export class PgSdks implements SdkStore {
  constructor(readonly sql: Sql) {}

  // ---------------------------------------------------------------- SDKs

  get(id: string): Promise<SdkRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM sdks WHERE id = $1', [id])
  }

  bySlug(organizationId: string, slug: string): Promise<SdkRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM sdks WHERE organization_id = $1 AND slug = $2', [organizationId, slug])
  }

  async list(organizationId: string, page: PageRequest): Promise<Page<SdkRecord>> {
    const { rows: [{ total }] } = await this.sql.query<{ total: string }>('SELECT count(*) AS total FROM sdks WHERE organization_id = $1', [organizationId])
    const items = await recordsOf<SdkRecord>(this.sql,
      'SELECT record FROM sdks WHERE organization_id = $1 ORDER BY id DESC OFFSET $2 LIMIT $3', [organizationId, page.offset, page.limit])
    return { items, total: Number(total) }
  }

  async sdksUsingApi(apiId: string): Promise<string[]> {
    const { rows } = await this.sql.query<{ sdk_id: string }>('SELECT sdk_id FROM sdk_apis WHERE api_id = $1 ORDER BY sdk_id', [apiId])
    return rows.map((row) => row.sdk_id)
  }

  async create(sdk: SdkRecord): Promise<void> {
    if (sdk.last_build_number !== 0) throw new Error('an SDK is created without builds: add them')
    const { rowCount } = await this.sql.query('SELECT 1 FROM organizations WHERE id = $1', [sdk.organization_id])
    if (!rowCount) throw notFound('organization')
    if (await this.get(sdk.id)) throw new RegistryError('conflict', `SDK ${sdk.id} exists`)
    await this.checkApis(sdk)
    await this.checkSlugFree(sdk)
    await this.sql.query('INSERT INTO sdks (id, organization_id, slug, last_build_number, record) VALUES ($1, $2, $3, 0, $4)',
      [sdk.id, sdk.organization_id, sdk.slug, json(sdk)])
    await this.attach(sdk)
  }

  async update(after: SdkRecord): Promise<void> {
    const before = await this.get(after.id)
    if (!before) throw notFound('sdk')
    if (after.organization_id !== before.organization_id) throw new Error('an SDK does not change organization')
    if (after.last_build_number !== before.last_build_number) throw new Error('last_build_number changes only through addBuild')
    await this.checkApis(after)
    if (after.slug !== before.slug) await this.checkSlugFree(after)
    await this.sql.query('UPDATE sdks SET slug = $2, record = $3 WHERE id = $1', [after.id, after.slug, json(after)])
    await this.sql.query('DELETE FROM sdk_apis WHERE sdk_id = $1', [after.id])
    await this.attach(after)
  }

  remove(id: string): Promise<SdkRecord | undefined> {
    // Its attachments, repositories, builds, logs and artifacts go with it (ON DELETE CASCADE).
    return recordOf(this.sql, 'DELETE FROM sdks WHERE id = $1 RETURNING record', [id])
  }

  private async attach(sdk: SdkRecord): Promise<void> {
    for (const api of sdk.apis) {
      await this.sql.query('INSERT INTO sdk_apis (sdk_id, api_id, version_id) VALUES ($1, $2, $3)', [sdk.id, api.api_id, api.version_id])
    }
  }

  /** The unique constraint holds whatever happens; this says which slug, in the registry's words. */
  private async checkSlugFree(sdk: SdkRecord): Promise<void> {
    const owner = await this.bySlug(sdk.organization_id, sdk.slug)
    if (owner && owner.id !== sdk.id) throw new RegistryError('conflict', `slug '${sdk.slug}' is already used by another SDK`)
  }

  /** Attached APIs are APIs of the SDK's organization, pinned versions versions of them. */
  private async checkApis(sdk: SdkRecord): Promise<void> {
    for (const attachment of sdk.apis) {
      const { rowCount } = await this.sql.query("SELECT 1 FROM resources WHERE id = $1 AND kind = 'api' AND organization_id = $2",
        [attachment.api_id, sdk.organization_id])
      if (!rowCount) throw notFound('API')
      if (attachment.version_id === null) continue
      const { rowCount: found } = await this.sql.query('SELECT 1 FROM versions WHERE id = $1 AND resource_id = $2', [attachment.version_id, attachment.api_id])
      if (!found) throw notFound('version')
    }
  }

  // ---------------------------------------------------------------- output repositories

  repository(sdkId: string, target: SdkTarget): Promise<OutputRepositoryRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM sdk_repositories WHERE sdk_id = $1 AND target = $2', [sdkId, target])
  }

  repositories(sdkId: string): Promise<OutputRepositoryRecord[]> {
    return recordsOf(this.sql, 'SELECT record FROM sdk_repositories WHERE sdk_id = $1 ORDER BY target', [sdkId])
  }

  async putRepository(repository: OutputRepositoryRecord): Promise<void> {
    if (!(await this.get(repository.sdk_id))) throw notFound('sdk')
    await this.sql.query(
      `INSERT INTO sdk_repositories (sdk_id, target, record) VALUES ($1, $2, $3)
       ON CONFLICT (sdk_id, target) DO UPDATE SET record = excluded.record`,
      [repository.sdk_id, repository.target, json(repository)],
    )
  }

  async removeRepository(sdkId: string, target: SdkTarget): Promise<boolean> {
    const { rowCount } = await this.sql.query('DELETE FROM sdk_repositories WHERE sdk_id = $1 AND target = $2', [sdkId, target])
    return rowCount === 1
  }

  // ---------------------------------------------------------------- builds, the queue, logs and artifacts

  build(id: string): Promise<BuildRecord | undefined> {
    return recordOf(this.sql, 'SELECT record FROM builds WHERE id = $1', [id])
  }

  async builds(scope: BuildScope, page: PageRequest): Promise<Page<BuildRecord>> {
    const [where, value] = 'organizationId' in scope ? ['organization_id = $1', scope.organizationId] : ['sdk_id = $1', scope.sdkId]
    const { rows: [{ total }] } = await this.sql.query<{ total: string }>(`SELECT count(*) AS total FROM builds WHERE ${where}`, [value])
    const items = await recordsOf<BuildRecord>(this.sql,
      `SELECT record FROM builds WHERE ${where} ORDER BY id DESC OFFSET $2 LIMIT $3`, [value, page.offset, page.limit])
    return { items, total: Number(total) }
  }

  queue(): Promise<BuildRecord[]> {
    return recordsOf(this.sql, "SELECT record FROM builds WHERE status IN ('queued', 'running') ORDER BY id", [])
  }

  nextQueued(at: string): Promise<BuildRecord | undefined> {
    // features/sdks.ts `claimable` in SQL (a json null or absent lease reads as NULL). SKIP LOCKED: a
    // build another replica's claim holds is passed over rather than waited for; the lock lasts until
    // this transaction ends, so the claimer that took it is the one that marks it running.
    return recordOf(this.sql, `SELECT record FROM builds
      WHERE status = 'queued' OR (status = 'running' AND coalesce(record->'lease'->>'until' <= $1 COLLATE "C", true))
      ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`, [at])
  }

  log(buildId: string): Promise<string | undefined> {
    return this.sql.query<{ log: string }>('SELECT log FROM build_logs WHERE build_id = $1', [buildId]).then(({ rows }) => rows[0]?.log)
  }

  async artifact(buildId: string): Promise<Buffer | undefined> {
    const { rows } = await this.sql.query<{ bytes: Buffer }>('SELECT bytes FROM build_artifacts WHERE build_id = $1', [buildId])
    return rows[0]?.bytes
  }

  async addBuild(build: BuildRecord): Promise<SdkRecord> {
    const updated = await sdkWithBuildAdded(await this.get(build.sdk_id), build, (id) => this.build(id))
    await this.sql.query('INSERT INTO builds (id, organization_id, sdk_id, number, status, record) VALUES ($1, $2, $3, $4, $5, $6)',
      [build.id, build.organization_id, build.sdk_id, build.number, build.status, json(build)])
    // The number moves only from the one this transaction read (serializable: a concurrent add fails one of the two).
    const { rowCount } = await this.sql.query('UPDATE sdks SET last_build_number = $2, record = $3 WHERE id = $1 AND last_build_number = $2 - 1',
      [updated.id, build.number, json(updated)])
    if (rowCount !== 1) throw new RegistryError('conflict', `build ${build.number} of SDK ${updated.id} was taken meanwhile`)
    return updated
  }

  async putBuild(build: BuildRecord): Promise<void> {
    requireSameBuild(await this.build(build.id), build)
    await this.sql.query('UPDATE builds SET status = $2, record = $3 WHERE id = $1', [build.id, build.status, json(build)])
  }

  async putLog(buildId: string, log: string): Promise<void> {
    if (log.includes('\u0000')) throw new Error('a build log holds no NUL character')
    if (!(await this.build(buildId))) throw notFound('build')
    await this.sql.query(
      'INSERT INTO build_logs (build_id, log) VALUES ($1, $2) ON CONFLICT (build_id) DO UPDATE SET log = excluded.log', [buildId, log])
  }

  async putArtifact(buildId: string, artifact: Buffer): Promise<void> {
    if (!(await this.build(buildId))) throw notFound('build')
    await this.sql.query(
      'INSERT INTO build_artifacts (build_id, bytes) VALUES ($1, $2) ON CONFLICT (build_id) DO UPDATE SET bytes = excluded.bytes', [buildId, artifact])
  }
}
