/**
 * Console sign-in (issue 17): a person pastes an API key once and gets a session instead, held by the
 * browser in an HttpOnly cookie. The session id is 256 random bits, stored only as its SHA-256, and
 * expires after `SESSION_TTL_MS`; it acts as the key it was opened with, so the key's role applies and
 * revoking the key ends its sessions on the next request.
 *
 * Requests that change something from a session must also carry its CSRF token, which the page reads
 * from `GET /v1/session` (a cross-site page can neither read that answer nor set the header).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { Storage } from '../../storage/port.js'
import { hashKey } from './keys.js'
import { unauthorized, type Actor, type Organizations } from './organizations.js'

export const SESSION_TTL_MS = 12 * 60 * 60 * 1000
/** Expired sessions removed at most per sign-in (the sweep runs as people sign in). */
const SWEEP_LIMIT = 100
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/

export interface OpenedSession {
  /** The cookie's value: shown to nobody but the browser. */
  id: string
  csrfToken: string
  actor: Actor
}

/** The CSRF token of a session: derived from its id, so nothing more is stored and it cannot be guessed. */
export function csrfTokenOf(sessionId: string): string {
  return hashKey(`csrf:${sessionId}`)
}

export function csrfTokenMatches(sessionId: string, token: string | undefined): boolean {
  if (token === undefined) return false
  const expected = Buffer.from(csrfTokenOf(sessionId))
  const given = Buffer.from(token)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

const expired = () => unauthorized('the console session has expired or was signed out: sign in again')

export class Sessions {
  constructor(
    private readonly storage: Storage,
    private readonly organizations: Organizations,
    private readonly ttlMs = SESSION_TTL_MS,
  ) {}

  /** Exchanges a key for a session; a key that does not authenticate is the same 401 as anywhere. */
  async open(apiKey: string): Promise<OpenedSession> {
    const actor = await this.organizations.authenticate(`Bearer ${apiKey}`)
    const id = randomBytes(32).toString('base64url')
    const at = Date.now()
    const expiresAt = new Date(at + this.ttlMs).toISOString()
    const session = { key_id: actor.keyId, organization_id: actor.organization.id, created_at: new Date(at).toISOString(), expires_at: expiresAt }
    await this.storage.transaction(async (tx) => {
      for (const hash of await tx.sessions.expired(session.created_at, SWEEP_LIMIT)) await tx.sessions.remove(hash)
      await tx.sessions.put(hashKey(id), session)
    })
    return { id, csrfToken: csrfTokenOf(id), actor: { ...actor, session: { id, expiresAt } } }
  }

  /** The actor of a session cookie's value: 401 when unknown, expired, or its key was revoked. */
  async authenticate(id: string): Promise<Actor> {
    if (!SESSION_ID.test(id)) throw expired()
    const session = await this.storage.read.sessions.get(hashKey(id))
    if (!session || session.expires_at <= new Date().toISOString()) throw expired()
    const actor = await this.organizations.actorOfKey(session.key_id)
    if (actor.organization.id !== session.organization_id) throw expired()
    return { ...actor, session: { id, expiresAt: session.expires_at } }
  }

  /** Signs out: the session is gone for every tab and device that held it. */
  async close(id: string): Promise<void> {
    if (SESSION_ID.test(id)) await this.storage.transaction((tx) => tx.sessions.remove(hashKey(id)))
  }
}
