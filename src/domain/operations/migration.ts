/**
 * `registry migrate` (issue 16, item 10): copies a whole registry from one storage to another, LMDB to
 * PostgreSQL or back, through the storage port only, so the copy keeps every id, date, number and
 * source and the registry answers the same on the target (docs/storage.md, "Migrating between LMDB and
 * PostgreSQL"). The target must be empty. The source must not be written meanwhile (stop the server):
 * the copy reads it as it goes, not as one snapshot.
 *
 * Order, so that every record's references exist when the target checks them: organizations and keys;
 * the blobs the versions and the mirror history name (written before the records that name them, as
 * uploads do); per organization rulesets, then schemas, then APIs (an API names its ruleset), each
 * created without versions, its versions appended in number order, then its record as it was (an
 * update after the last version moved `updated_at`); the lint findings and search terms kept by
 * checksum; sites and guides (they list APIs); SDKs (they attach APIs and pin versions), their output
 * repositories, builds in number order with logs and artifacts; repository connections; webhook
 * endpoints, their deliveries and the events those deliver; console sessions; the mirror's history,
 * pending journal, head and push remote.
 *
 * Not copied: diffs (a cache by checksum, computed again when asked), webhook events no delivery names
 * (nothing reads them), the inbound webhook delivery ids kept to ignore a provider's redelivery (no
 * reader lists them: a redelivery after the move syncs again, which is a no-op on unchanged content),
 * and blobs nothing names (what gc would remove). Secrets are copied as stored, sealed: the target
 * must be served with the same secret key.
 */
import { RegistryError } from '../../errors.js'
import type { ReadStores, Storage, Stores } from '../../storage/port.js'
import type {
  BlobRef, BuildRecord, Finding, HistoryPosition, OrganizationRecord, ResourceKind, ResourceRecord, SearchTerms, SdkRecord,
  VersionRecord, WebhookDeliveryRecord, WebhookEventRecord,
} from '../../storage/records.js'
import { NO_PROGRESS, type ProgressListener } from './progress.js'

/** Records read or written at a time: one transaction per page, not per record. */
const PAGE = 200

/** Console sessions are bounded (each lasts hours): all of them are read in one listing. */
const SESSIONS = 1_000_000
const FAR_FUTURE = '9999-12-31T23:59:59.999Z'

export interface MigrationReport {
  organizations: number
  keys: number
  resources: number
  versions: number
  blobs: number
  sites: number
  guides: number
  sdks: number
  builds: number
  connections: number
  webhook_endpoints: number
  webhook_deliveries: number
  sessions: number
  mirror_history: number
  mirror_pending: number
}

const KINDS: ResourceKind[] = ['ruleset', 'schema', 'api']
const refKey = (ref: BlobRef) => `${ref.checksum}.${ref.digest}.${ref.format}`

/** Every page of a paged listing, `PAGE` at a time. */
async function all<T>(list: (page: { offset: number; limit: number }) => Promise<{ items: T[]; total: number }>): Promise<T[]> {
  const items: T[] = []
  for (;;) {
    const page = await list({ offset: items.length, limit: PAGE })
    items.push(...page.items)
    if (page.items.length < PAGE) return items
  }
}

/** Runs `write` on the items a page at a time, each page one transaction of the target. */
async function inPages<T>(target: Storage, items: T[], write: (tx: Stores, item: T) => Promise<void>, done?: (count: number) => void): Promise<void> {
  for (let start = 0; start < items.length; start += PAGE) {
    const page = items.slice(start, start + PAGE)
    await target.transaction(async (tx) => {
      for (const item of page) await write(tx, item)
    })
    done?.(start + page.length)
  }
}

/** Refuses a target that already holds a registry: the copy would mix two. */
export async function requireEmpty(target: Storage, description: string): Promise<void> {
  const organizations = await target.read.organizations.list()
  if (organizations.length > 0) {
    throw new RegistryError('conflict',
      `the target ${description} is not empty (${organizations.length} organization${organizations.length === 1 ? '' : 's'}: ${organizations.map((o) => o.slug).join(', ')}); migrate copies into an empty storage only`)
  }
}

export async function migrateStorage(source: Storage, target: Storage, progress: ProgressListener = NO_PROGRESS, targetDescription = 'storage'): Promise<MigrationReport> {
  await requireEmpty(target, targetDescription)
  const { read } = source
  const report: MigrationReport = {
    organizations: 0, keys: 0, resources: 0, versions: 0, blobs: 0, sites: 0, guides: 0, sdks: 0, builds: 0, connections: 0,
    webhook_endpoints: 0, webhook_deliveries: 0, sessions: 0, mirror_history: 0, mirror_pending: 0,
  }

  const organizations = await read.organizations.list()
  for (const [i, organization] of organizations.entries()) {
    const keys = await read.keys.list(organization.id)
    await target.transaction(async (tx) => {
      await tx.organizations.put(organization)
      for (const key of keys) await tx.keys.put(key)
    })
    report.organizations += 1
    report.keys += keys.length
    progress('organizations and keys', i + 1, organizations.length)
  }

  report.blobs = await copyBlobs(source, target, progress)

  for (const organization of organizations) {
    const counts = await copyResources(source, target, organization, progress)
    report.resources += counts.resources
    report.versions += counts.versions
  }
  await copyContentResults(source, target, progress)

  for (const [i, organization] of organizations.entries()) {
    progress('sites, SDKs, connections, webhooks', i, organizations.length)
    const sites = await copySites(read, target, organization)
    report.sites += sites.sites
    report.guides += sites.guides
    const sdks = await copySdks(read, target, organization)
    report.sdks += sdks.sdks
    report.builds += sdks.builds
    const connections = await read.repositories.list(organization.id)
    await inPages(target, connections, async (tx, connection) => { await tx.repositories.put(connection) })
    report.connections += connections.length
    const webhooks = await copyWebhooks(read, target, organization)
    report.webhook_endpoints += webhooks.endpoints
    report.webhook_deliveries += webhooks.deliveries
    progress('sites, SDKs, connections, webhooks', i + 1, organizations.length)
  }

  const sessions = await read.sessions.expired(FAR_FUTURE, SESSIONS)
  const records = (await Promise.all(sessions.map(async (hash) => ({ hash, session: await read.sessions.get(hash) }))))
    .filter((entry) => entry.session !== undefined)
  await inPages(target, records, async (tx, { hash, session }) => tx.sessions.put(hash, session!))
  report.sessions = records.length

  for (const [i, organization] of organizations.entries()) {
    const [history, pending, head, remote] = await Promise.all([
      read.mirror.history(organization.id), read.mirror.pendingOf(organization.id),
      read.mirror.head(organization.id), read.mirror.remote(organization.id),
    ])
    // The history in pages (it grows with every change), the pending entries with the last page.
    for (let start = 0; start < Math.max(history.length, 1); start += PAGE) {
      const last = start + PAGE >= history.length
      await target.transaction((tx) => tx.mirror.copyIn(organization.id, history.slice(start, start + PAGE), last ? pending : []))
    }
    await target.transaction(async (tx) => {
      if (head) await tx.mirror.markApplied(organization.id, [], head)
      if (remote) await tx.mirror.putRemote(organization.id, remote)
    })
    report.mirror_history += history.length
    report.mirror_pending += pending.length
    progress('git mirror history', i + 1, organizations.length)
  }
  return report
}

/**
 * Every blob a version or the mirror history names (a deleted resource's documents stay in the git
 * history), byte for byte; the target's blob tally counts those it did not have.
 */
async function copyBlobs(source: Storage, target: Storage, progress: ProgressListener): Promise<number> {
  const refs = new Map<string, BlobRef>()
  const add = ({ checksum, digest, format }: BlobRef) => refs.set(refKey({ checksum, digest, format }), { checksum, digest, format })
  for (let page: VersionRecord[] = []; ;) {
    page = await source.read.versions.scan(page.at(-1), PAGE)
    page.forEach(add)
    progress('listing blobs', refs.size)
    if (page.length < PAGE) break
  }
  let after: HistoryPosition | undefined
  do {
    const page = await source.read.mirror.historyVersions(after, PAGE)
    page.versions.forEach(add)
    after = page.next
  } while (after !== undefined)

  let created = 0
  let bytes = 0
  let copied = 0
  for (const ref of refs.values()) {
    const content = await source.blobs.get(ref)
    const written = await target.blobs.put(ref, content)
    if (written.created) {
      created += 1
      bytes += written.size
    }
    copied += 1
    progress('copying blobs', copied, refs.size)
  }
  await target.transaction((tx) => tx.tallies.addBlobs(created, bytes))
  return copied
}

/** One organization's resources: rulesets first (an API names its ruleset), each with its versions in number order. */
async function copyResources(
  source: Storage, target: Storage, organization: OrganizationRecord, progress: ProgressListener,
): Promise<{ resources: number; versions: number }> {
  let resources = 0
  let versions = 0
  for (const kind of KINDS) {
    const listed = await all((page) => source.read.resources.list(organization.id, kind, page))
    for (const [i, resource] of listed.entries()) {
      // Newest first from the port: the target takes them oldest first, numbers 1, 2, 3… as they were.
      const stored = (await all((page) => source.read.versions.list(resource.id, page))).reverse()
      await target.transaction((tx) => tx.resources.create({ ...resource, last_number: 0 }))
      await inPages(target, stored, async (tx, version) => { await tx.versions.append(version) })
      // Appending moved `updated_at` to the last version's date: the record as it was, a later update's date included.
      await target.transaction(async (tx) => {
        const copied = await tx.resources.get(resource.id)
        if (JSON.stringify(copied) !== JSON.stringify(resource)) await tx.resources.update(resource)
      })
      resources += 1
      versions += stored.length
      progress(`${organization.slug}: ${kind}s`, i + 1, listed.length)
    }
  }
  return { resources, versions }
}

/**
 * What is kept by checksum and read back as the version's own: its lint findings (a version's findings
 * are only there) and the search terms of each document. Diffs are not copied: they are computed again.
 */
async function copyContentResults(source: Storage, target: Storage, progress: ProgressListener): Promise<void> {
  const lint = new Map<string, { ruleset: string; document: string; findings: Finding[] }>()
  const terms = new Map<string, SearchTerms>()
  for (let page: VersionRecord[] = []; ;) {
    page = await source.read.versions.scan(page.at(-1), PAGE)
    for (const version of page) {
      if (version.lint && !lint.has(`${version.lint.ruleset_checksum} ${version.checksum}`)) {
        const findings = await source.read.results.lint(version.lint.ruleset_checksum, version.checksum)
        if (findings) lint.set(`${version.lint.ruleset_checksum} ${version.checksum}`, { ruleset: version.lint.ruleset_checksum, document: version.checksum, findings })
      }
      if (!terms.has(version.checksum)) {
        const found = await source.read.search.getTerms(version.checksum)
        if (found) terms.set(version.checksum, found)
      }
    }
    progress('lint findings and search terms', lint.size + terms.size)
    if (page.length < PAGE) break
  }
  await inPages(target, [...lint.values()], (tx, { ruleset, document, findings }) => tx.results.putLint(ruleset, document, findings))
  await inPages(target, [...terms.entries()], (tx, [checksum, found]) => tx.search.putTerms(checksum, found))
}

async function copySites(read: ReadStores, target: Storage, organization: OrganizationRecord): Promise<{ sites: number; guides: number }> {
  const sites = await all((page) => read.sites.list(organization.id, page))
  let guides = 0
  for (const site of sites) {
    const pages = await all((page) => read.sites.guides(site.id, page))
    await target.transaction(async (tx) => {
      await tx.sites.create(site)
      for (const guide of pages) await tx.sites.putGuide(guide)
    })
    guides += pages.length
  }
  return { sites: sites.length, guides }
}

/** SDKs created without builds, their builds added in number order (gapless, as the target requires), with logs and artifacts. */
async function copySdks(read: ReadStores, target: Storage, organization: OrganizationRecord): Promise<{ sdks: number; builds: number }> {
  const sdks = await all((page) => read.sdks.list(organization.id, page))
  let builds = 0
  for (const sdk of sdks) {
    const repositories = await read.sdks.repositories(sdk.id)
    const stored: BuildRecord[] = (await all((page) => read.sdks.builds({ sdkId: sdk.id }, page))).sort((a, b) => a.number - b.number)
    await target.transaction(async (tx) => {
      await tx.sdks.create({ ...sdk, last_build_number: 0 } satisfies SdkRecord)
      for (const repository of repositories) await tx.sdks.putRepository(repository)
    })
    for (const build of stored) {
      const [log, artifact] = await Promise.all([read.sdks.log(build.id), read.sdks.artifact(build.id)])
      await target.transaction(async (tx) => {
        await tx.sdks.addBuild(build)
        if (log !== undefined) await tx.sdks.putLog(build.id, log)
        if (artifact !== undefined) await tx.sdks.putArtifact(build.id, artifact)
      })
    }
    builds += stored.length
  }
  return { sdks: sdks.length, builds }
}

/** Endpoints, then each delivery with the event it delivers (an event is read through its deliveries). */
async function copyWebhooks(read: ReadStores, target: Storage, organization: OrganizationRecord): Promise<{ endpoints: number; deliveries: number }> {
  const endpoints = await read.webhooks.endpoints(organization.id)
  let count = 0
  for (const endpoint of endpoints) {
    await target.transaction((tx) => tx.webhooks.putEndpoint(endpoint))
    const deliveries: WebhookDeliveryRecord[] = (await all((page) => read.webhooks.deliveries(endpoint.id, page))).reverse()
    const events = new Map<string, WebhookEventRecord>()
    for (const delivery of deliveries) {
      if (events.has(delivery.event_id)) continue
      const event = await read.webhooks.event(delivery.event_id)
      if (!event) throw new Error(`webhook delivery ${delivery.id}: its event ${delivery.event_id} is missing`)
      events.set(event.id, event)
    }
    await inPages(target, deliveries, async (tx, delivery) => {
      // An event goes to every endpoint that wanted it: written once, with its first delivery.
      if (!(await tx.webhooks.event(delivery.event_id))) await tx.webhooks.putEvent(events.get(delivery.event_id)!)
      await tx.webhooks.putDelivery(delivery)
    })
    count += deliveries.length
  }
  return { endpoints: endpoints.length, deliveries: count }
}
