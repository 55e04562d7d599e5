/**
 * The named databases the LMDB adapter reads and writes (layout.ts), in the environment file and with
 * the options the registry has always used, so that an existing `./storage` is read as it is.
 */
import { join } from 'node:path'
import { mkdirSync } from 'node:fs'
import { open, type Database, type RootDatabase } from 'lmdb'
import {
  DATABASES, MIRROR_DATABASES, REPOSITORY_DATABASES, SDK_DATABASES, SEARCH_DATABASES, SESSION_DATABASES, SITE_DATABASES,
} from './layout.js'
import type { Key } from './transaction-view.js'

/** The environment's file under `<storage>/index` (a backup copies it under the same name). */
export const INDEX_FILE = 'registry.mdb'

export type IndexDatabases = { -readonly [name in keyof typeof DATABASES]: Database<any, Key> }
export type MirrorDatabases = { -readonly [name in keyof typeof MIRROR_DATABASES]: Database<any, Key> }
export type SearchDatabases = { -readonly [name in keyof typeof SEARCH_DATABASES]: Database<any, Key> }
export type SessionDatabases = { -readonly [name in keyof typeof SESSION_DATABASES]: Database<any, Key> }
export type SiteDatabases = { -readonly [name in keyof typeof SITE_DATABASES]: Database<any, Key> }
export type SdkDatabases = { -readonly [name in keyof typeof SDK_DATABASES]: Database<any, Key> }
export type RepositoryDatabases = { -readonly [name in keyof typeof REPOSITORY_DATABASES]: Database<any, Key> }

/**
 * Databases of features that started on the port (their layout is the adapter's own): each feature
 * keeps its records in one database and its orderings in another, keyed by arrays that name the kind.
 */
export const PORT_DATABASES = {
  /** ['endpoint' | 'event' | 'delivery', id] → WebhookEndpointRecord | WebhookEventRecord | WebhookDeliveryRecord */
  webhooks: 'webhooks',
  /**
   * ['endpoints', org, endpoint id] → null: an organization's endpoints; ['deliveries', endpoint id,
   * delivery id] → null: an endpoint's deliveries (ULID order); ['due', next attempt at, delivery id] →
   * null: pending deliveries by when they are due
   */
  webhookOrder: 'webhook-order',
} as const

export type PortDatabases = { -readonly [name in keyof typeof PORT_DATABASES]: Database<any, Key> }

export interface LmdbEnvironment {
  root: RootDatabase<any, Key>
  index: IndexDatabases
  mirror: MirrorDatabases
  /** Search's terms by document checksum (`search-terms`), as today. */
  search: SearchDatabases
  port: PortDatabases
  sessions: SessionDatabases
  /** The databases of sites, SDKs and repository connections (layout.ts), read as they are. */
  sites: SiteDatabases
  sdks: SdkDatabases
  repositories: RepositoryDatabases
}

/** Opens `<storage>/index/registry.mdb`. */
export function openEnvironment(storage: string): LmdbEnvironment {
  const directory = join(storage, 'index')
  mkdirSync(directory, { recursive: true })
  return environmentOn(open<any, Key>({ path: join(directory, INDEX_FILE), maxDbs: 64 }))
}

function environmentOn(root: RootDatabase<any, Key>): LmdbEnvironment {
  const named = <T extends Record<string, string>>(names: T) => {
    const opened = {} as { -readonly [field in keyof T]: Database<any, Key> }
    // No decoded-record cache: lmdb's cache did not see writes made by another process (the CLI
    // revoking a key, importing or restoring), so a revoked key kept authenticating and the server's
    // next write put the cached record back. Every read goes to the memory map.
    for (const field of Object.keys(names) as (keyof T)[]) opened[field] = root.openDB<any, Key>({ name: names[field], cache: false })
    return opened
  }
  return { root, index: named(DATABASES), mirror: named(MIRROR_DATABASES), search: named(SEARCH_DATABASES), port: named(PORT_DATABASES), sessions: named(SESSION_DATABASES),
    sites: named(SITE_DATABASES), sdks: named(SDK_DATABASES), repositories: named(REPOSITORY_DATABASES),
  }
}
