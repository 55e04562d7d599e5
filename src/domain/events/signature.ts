/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): `webhook-id`, `webhook-timestamp`
 * and `webhook-signature` (`v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` under the secret),
 * made by the specification's own library, so that receivers verifying with it (or with svix) agree.
 */
import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'

const SECRET_PREFIX = 'whsec_'

/** A new signing secret: `whsec_` and 24 random bytes in base64, as the specification's libraries read it. */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(24).toString('base64')}`
}

/** The headers of one attempt to deliver `body` as the message `id`, signed at `at`. */
export function signedHeaders(secret: string, id: string, at: Date, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  }
}
