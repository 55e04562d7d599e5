/**
 * The webhook endpoints' signing secrets as a SecretHolder, so that `registry secrets status|rotate`
 * and the start-up inventory see them with the other secrets (src/domain/secrets.ts, still LMDB-bound:
 * its holders are read synchronously). Replacements are port transactions on the same environment.
 */
import type { RootDatabase } from 'lmdb'
import { sameStoredSecret, webhookSecretRef, type SecretHolder, type SecretRef, type SecretSlot } from '../../store/secret-slots.js'
import type { StoredSecret, WebhookEndpointRecord } from '../records.js'
import { environmentOn, type LmdbEnvironment } from './databases.js'
import { optimistic } from './optimistic.js'
import type { Key } from './transaction-view.js'
import { LmdbWebhooks } from './webhooks.js'

export class LmdbWebhookSecrets implements SecretHolder {
  private readonly environment: LmdbEnvironment

  constructor(root: RootDatabase<any, Key>) {
    this.environment = environmentOn(root)
  }

  * secretSlots(): Iterable<SecretSlot> {
    for (const { value } of this.environment.port.webhooks.getRange({ start: ['endpoint', ''], end: ['endpoint', '\uffff'] })) {
      const endpoint = value as WebhookEndpointRecord
      yield { ref: webhookSecretRef(endpoint.id), organization_id: endpoint.organization_id, value: endpoint.secret }
    }
  }

  replaceSecret(ref: SecretRef, expected: StoredSecret, next: StoredSecret): Promise<boolean> {
    if (ref.holder !== 'webhook-endpoint') return Promise.resolve(false)
    return optimistic(this.environment.root, async (view) => {
      const webhooks = new LmdbWebhooks(view, this.environment.port, this.environment.index)
      const endpoint = await webhooks.endpoint(ref.endpoint_id)
      if (!endpoint || !sameStoredSecret(endpoint.secret, expected)) return false
      await webhooks.putEndpoint({ ...endpoint, secret: next })
      return true
    })
  }
}
