/**
 * Where the registry keeps secrets: which record and field each one is (its additional authenticated
 * data). The storage port's secrets section lists and replaces them (src/storage/features/secrets.ts).
 */
import type { StoredSecret } from './secret-keyring.js'

export type SecretRef =
  | { holder: 'repository-connection'; api_id: string; connection_id: string; field: 'token' | 'webhook_secret' }
  | { holder: 'sdk-output-repository'; sdk_id: string; target: string; field: 'token' }
  | { holder: 'mirror-remote'; organization_id: string; field: 'token' }
  | { holder: 'webhook-endpoint'; endpoint_id: string; field: 'secret' }

/** Where a webhook endpoint's signing secret is. */
export const webhookSecretRef = (endpointId: string): Extract<SecretRef, { holder: 'webhook-endpoint' }> =>
  ({ holder: 'webhook-endpoint', endpoint_id: endpointId, field: 'secret' })

/** Where a repository connection's secret is: its additional authenticated data names the API, the connection and the field. */
export const connectionSecretRef = (
  connection: { api_id: string; id: string }, field: 'token' | 'webhook_secret',
): Extract<SecretRef, { holder: 'repository-connection' }> =>
  ({ holder: 'repository-connection', api_id: connection.api_id, connection_id: connection.id, field })

/** One secret as committed: where it is, whose it is, and its stored value. */
export interface SecretSlot {
  ref: SecretRef
  organization_id: string
  value: StoredSecret
}

/**
 * The additional authenticated data of a secret: the record it belongs to and the field. A value
 * sealed for one record does not open in another, nor in the other field of the same record.
 */
export function secretAad(ref: SecretRef): string {
  switch (ref.holder) {
    case 'repository-connection': return JSON.stringify(['api-registry', ref.holder, ref.api_id, ref.connection_id, ref.field])
    case 'sdk-output-repository': return JSON.stringify(['api-registry', ref.holder, ref.sdk_id, ref.target, ref.field])
    case 'mirror-remote': return JSON.stringify(['api-registry', ref.holder, ref.organization_id, ref.field])
    case 'webhook-endpoint': return JSON.stringify(['api-registry', ref.holder, ref.endpoint_id, ref.field])
  }
}

/** For people (logs, `registry verify`): which secret it is. */
export function describeSecret(ref: SecretRef): string {
  switch (ref.holder) {
    case 'repository-connection':
      return `the ${ref.field === 'token' ? 'token' : 'webhook secret'} of the repository connection of API ${ref.api_id}`
    case 'sdk-output-repository': return `the token of the ${ref.target} output repository of SDK ${ref.sdk_id}`
    case 'mirror-remote': return `the push mirror token of organization ${ref.organization_id}`
    case 'webhook-endpoint': return `the signing secret of webhook endpoint ${ref.endpoint_id}`
  }
}

/** Stored values compare as their JSON (a sealed value has a fresh IV every time it is sealed). */
export function sameStoredSecret(a: StoredSecret | null | undefined, b: StoredSecret | null | undefined): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null)
}
