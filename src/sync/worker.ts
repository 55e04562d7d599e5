/**
 * The sync worker: fetching a branch (pack parsing is CPU work), reading its files and bundling the
 * document all run here, never on the server's event loop. Answers a `SnapshotFailure` for a
 * RegistryError (so the code, items and commit cross the thread boundary); anything else is thrown.
 * This is the thread's entry point: it rebuilds the outbound host policy from the task's data, and
 * every HTTP request of the fetch (redirects included, and the address each connects to) is checked
 * against it.
 */
import { OutboundPolicy } from '../domain/outbound/outbound.js'
import { withOutboundFetch } from '../domain/outbound/outbound-fetch.js'
import { readSnapshotDocument, type SnapshotDocument, type SnapshotFailure, type SnapshotTask } from './snapshot.js'

export default function run(task: SnapshotTask): Promise<SnapshotDocument | SnapshotFailure> {
  return withOutboundFetch(OutboundPolicy.of(task.outboundHosts ?? []), (fetch) => readSnapshotDocument(task, fetch))
}
