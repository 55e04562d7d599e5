/**
 * The port's secrets section (issue 14 item 6, issue 16): every secret the registry keeps for its users,
 * wherever its feature stores it (repository connections' tokens and webhook secrets, SDK output
 * repositories' tokens, push mirror tokens, webhook endpoints' signing secrets), as `Secrets`
 * (src/domain/accounts/secrets.ts) inventories, migrates and rotates them. The values are the feature records'
 * own fields: this section reads and replaces them in place and keeps nothing of its own, so each
 * adapter only says where the records are; what a slot is and how a value is replaced is below, once.
 */
import { connectionSecretRef, sameStoredSecret, webhookSecretRef, type SecretRef, type SecretSlot } from '../secret-slots.js'
import type { MirrorJournalStore, WebhookStore } from '../port.js'
import {
  mirrorSecretRef, outputRepositorySecretRef,
  type MirrorRemote, type OutputRepositoryRecord, type RepositoryConnectionRecord, type SdkTarget, type StoredSecret, type WebhookEndpointRecord,
} from '../records.js'
import type { RepositoryStore } from './repositories.js'
import type { SdkStore } from './sdks.js'

export type { SecretRef, SecretSlot }

export interface SecretReader {
  /**
   * Every stored secret (a field that holds none is left out): repository connections by API id (the
   * token before the webhook secret), then output repositories by SDK id and target (the organization
   * is their SDK's, '' when the SDK is gone), push mirrors by organization id, webhook endpoints by id.
   */
  slots(): Promise<SecretSlot[]>
}

export interface SecretStore extends SecretReader {
  /**
   * Sets the secret `ref` names to `next` only while its record still holds `expected` there (another
   * process may have changed, removed or replaced it meanwhile: a repository connection replaced by
   * one with another id is another record); answers whether it did. Nothing else of the record
   * changes (a connection's `updated_at` stays, so a sync running meanwhile still records its outcome).
   */
  replace(ref: SecretRef, expected: StoredSecret, next: StoredSecret): Promise<boolean>
}

// What both adapters share: the slots of each kind of record, and a replacement through the features' own stores.

export function connectionSlots(connection: RepositoryConnectionRecord): SecretSlot[] {
  return (['token', 'webhook_secret'] as const).flatMap((field) => {
    const value = connection[field]
    return value === null ? [] : [{ ref: connectionSecretRef(connection, field), organization_id: connection.organization_id, value }]
  })
}

export function outputRepositorySlots(repository: OutputRepositoryRecord, organizationId: string | undefined): SecretSlot[] {
  return repository.token === null ? [] : [{ ref: outputRepositorySecretRef(repository), organization_id: organizationId ?? '', value: repository.token }]
}

export function mirrorRemoteSlots(organizationId: string, remote: MirrorRemote): SecretSlot[] {
  return remote.token === null ? [] : [{ ref: mirrorSecretRef(organizationId), organization_id: organizationId, value: remote.token }]
}

export function webhookEndpointSlots(endpoint: WebhookEndpointRecord): SecretSlot[] {
  return [{ ref: webhookSecretRef(endpoint.id), organization_id: endpoint.organization_id, value: endpoint.secret }]
}

/** The stores a secret is replaced through: the same transaction's. */
export interface SecretHolders {
  repositories: RepositoryStore
  sdks: SdkStore
  mirror: MirrorJournalStore
  webhooks: WebhookStore
}

/** `SecretStore.replace` on the features' own stores (their checks and indexes stay theirs). */
export async function replaceSecret(stores: SecretHolders, ref: SecretRef, expected: StoredSecret, next: StoredSecret): Promise<boolean> {
  switch (ref.holder) {
    case 'repository-connection': {
      const connection = await stores.repositories.get(ref.api_id)
      if (!connection || connection.id !== ref.connection_id || !sameStoredSecret(connection[ref.field], expected)) return false
      await stores.repositories.put({ ...connection, [ref.field]: next })
      return true
    }
    case 'sdk-output-repository': {
      const repository = await stores.sdks.repository(ref.sdk_id, ref.target as SdkTarget)
      if (!repository || !sameStoredSecret(repository.token, expected)) return false
      await stores.sdks.putRepository({ ...repository, token: next })
      return true
    }
    case 'mirror-remote': {
      const remote = await stores.mirror.remote(ref.organization_id)
      if (!remote || !sameStoredSecret(remote.token, expected)) return false
      await stores.mirror.putRemote(ref.organization_id, { ...remote, token: next })
      return true
    }
    case 'webhook-endpoint': {
      const endpoint = await stores.webhooks.endpoint(ref.endpoint_id)
      if (!endpoint || !sameStoredSecret(endpoint.secret, expected)) return false
      await stores.webhooks.putEndpoint({ ...endpoint, secret: next })
      return true
    }
  }
}
