/**
 * The sync worker: fetching a branch (pack parsing is CPU work), reading its files and bundling the
 * document all run here, never on the server's event loop. Answers a `SnapshotFailure` for a
 * RegistryError (so the code, items and commit cross the thread boundary); anything else is thrown.
 */
import { readSnapshotDocument, type SnapshotDocument, type SnapshotFailure, type SnapshotTask } from './snapshot.js'

export default function run(task: SnapshotTask): Promise<SnapshotDocument | SnapshotFailure> {
  return readSnapshotDocument(task)
}
