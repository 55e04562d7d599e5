/**
 * The secrets section on PostgreSQL: the values are inside the `record` json of `repository_connections`
 * (007), `sdk_repositories` (006, the organization from `sdks`), `mirror_remotes` (008) and
 * `webhook_endpoints` (002), read in the order LMDB's keys give; a replacement goes through the same
 * transaction's feature stores.
 */
import {
  connectionSlots, mirrorRemoteSlots, outputRepositorySlots, replaceSecret, webhookEndpointSlots, type SecretHolders, type SecretRef,
  type SecretSlot, type SecretStore,
} from '../features/secrets.js'
import type { MirrorRemote, OutputRepositoryRecord, RepositoryConnectionRecord, StoredSecret, WebhookEndpointRecord } from '../records.js'
import { recordsOf, type Sql } from './sql.js'

export class PgSecrets implements SecretStore {
  constructor(private readonly sql: Sql, private readonly holders: SecretHolders) {}

  async slots(): Promise<SecretSlot[]> {
    const connections = await recordsOf<RepositoryConnectionRecord>(this.sql, 'SELECT record FROM repository_connections ORDER BY api_id', [])
    const { rows: repositories } = await this.sql.query<{ record: OutputRepositoryRecord; organization_id: string | null }>(
      `SELECT r.record, s.organization_id FROM sdk_repositories r LEFT JOIN sdks s ON s.id = r.sdk_id ORDER BY r.sdk_id, r.target`)
    const { rows: remotes } = await this.sql.query<{ organization_id: string; record: MirrorRemote }>(
      'SELECT organization_id, record FROM mirror_remotes ORDER BY organization_id')
    const endpoints = await recordsOf<WebhookEndpointRecord>(this.sql, 'SELECT record FROM webhook_endpoints ORDER BY id', [])
    return [
      ...connections.flatMap(connectionSlots),
      ...repositories.flatMap((row) => outputRepositorySlots(row.record, row.organization_id ?? undefined)),
      ...remotes.flatMap((row) => mirrorRemoteSlots(row.organization_id, row.record)),
      ...endpoints.flatMap(webhookEndpointSlots),
    ]
  }

  replace(ref: SecretRef, expected: StoredSecret, next: StoredSecret): Promise<boolean> {
    return replaceSecret(this.holders, ref, expected, next)
  }
}
