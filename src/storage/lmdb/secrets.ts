/**
 * The secrets section on LMDB: the feature databases as they are (`repository-connections`,
 * `sdk-repositories` with `sdks` for the organization, `mirror-remotes`, `webhooks`' endpoints), read
 * in key order; a replacement goes through the same transaction's feature stores. (Merged from the four
 * LMDB-only secret holders `Secrets` used to read synchronously: same databases and keys, nothing migrates.)
 */
import {
  connectionSlots, mirrorRemoteSlots, outputRepositorySlots, replaceSecret, webhookEndpointSlots, type SecretHolders, type SecretRef,
  type SecretSlot, type SecretStore,
} from '../features/secrets.js'
import type { MirrorRemote, OutputRepositoryRecord, RepositoryConnectionRecord, SdkRecord, StoredSecret, WebhookEndpointRecord } from '../records.js'
import type { LmdbEnvironment } from './databases.js'
import type { LmdbAccess } from './transaction-view.js'

export class LmdbSecrets implements SecretStore {
  constructor(private readonly access: LmdbAccess, private readonly environment: LmdbEnvironment, private readonly holders: SecretHolders) {}

  async slots(): Promise<SecretSlot[]> {
    const { access, environment: { repositories, sdks, mirror, port } } = this
    const slots: SecretSlot[] = []
    for (const { value } of access.range<RepositoryConnectionRecord>(repositories.repositoryConnections)) slots.push(...connectionSlots(value))
    for (const { value } of access.range<OutputRepositoryRecord>(sdks.sdkRepositories)) {
      if (value.token === null) continue
      slots.push(...outputRepositorySlots(value, access.get<SdkRecord>(sdks.sdks, value.sdk_id)?.organization_id))
    }
    for (const { key, value } of access.range<MirrorRemote>(mirror.remotes)) slots.push(...mirrorRemoteSlots(String(key), value))
    for (const { value } of access.range<WebhookEndpointRecord>(port.webhooks, { start: ['endpoint', ''], end: ['endpoint', '\uffff'] })) {
      slots.push(...webhookEndpointSlots(value))
    }
    return slots
  }

  replace(ref: SecretRef, expected: StoredSecret, next: StoredSecret): Promise<boolean> {
    return replaceSecret(this.holders, ref, expected, next)
  }
}
