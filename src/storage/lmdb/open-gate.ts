/**
 * Keeps the opening of the LMDB environment apart from commits, across every process that opens it
 * (the server, the CLI, a second server on the same directory).
 *
 * Why: the LMDB that lmdb-js 3.5.6 builds sets the lock region's last transaction id from the meta page
 * it has just read whenever any process opens the environment (its `mdb_env_open2`; upstream LMDB does
 * so only when opening the previous snapshot). A commit by another process between that read and that
 * write is undone: the next transaction starts from the meta page before it, takes the same id and
 * writes over it. That commit was acknowledged, and is lost (found by test/storage/lmdb/cross-process,
 * two versions numbered alike; reproduced with processes opening the environment while another one
 * commits, under load).
 *
 * How: a lock file `index/open.lock` (writer-lock.ts: process id and boot, taken over from a process
 * that is gone). A process holds it while it opens the environment, and while any commit of its own is
 * in flight: commits of one process share it, and it is let go as soon as none is. That costs a commit
 * about 0.7 ms of file creation and removal when no other commit of its process is in flight. Keeping
 * the file between commits would save that, but a process whose event loop is busy (a test waiting on
 * the CLI with spawnSync) would then keep every other process from opening.
 */
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { WriterLock } from './writer-lock.js'

/** How long a waiting process sleeps between attempts, in milliseconds. */
const RETRY_MS = 1
/**
 * How long a process waits at most. An open or a commit takes milliseconds; a gate held longer names a
 * process id that a new, unrelated process took after the holder died. Past this, the process goes on
 * without the gate (as every process did before it) rather than hang, and says so.
 */
const WAIT_LIMIT_MS = 10_000

export class OpenGate {
  private static readonly gates = new Map<string, OpenGate>()
  private readonly lock: WriterLock
  /** Commits of this process in flight (and opens), which hold the lock file together. */
  private holders = 0

  private warned = false

  private constructor(private readonly path: string) {
    this.lock = new WriterLock(path)
  }

  /** The gate of `<storage>/index`, one per process. */
  static of(storage: string): OpenGate {
    const path = join(storage, 'index', 'open.lock')
    let gate = OpenGate.gates.get(path)
    if (!gate) OpenGate.gates.set(path, gate = new OpenGate(path))
    return gate
  }

  /** Runs `open` while holding the gate; waits (blocking: opening is synchronous) until it is free. */
  opening<T>(open: () => T): T {
    const pause = new Int32Array(new SharedArrayBuffer(4))
    const until = Date.now() + WAIT_LIMIT_MS
    while (!this.enter(until)) Atomics.wait(pause, 0, 0, RETRY_MS)
    try {
      return open()
    } finally {
      this.leave()
    }
  }

  /** Runs `commit` while holding the gate; waits until it is free. */
  async committing<T>(commit: () => Promise<T>): Promise<T> {
    const until = Date.now() + WAIT_LIMIT_MS
    while (!this.enter(until)) await sleep(RETRY_MS)
    try {
      return await commit()
    } finally {
      this.leave()
    }
  }

  private enter(until: number): boolean {
    if (this.holders === 0 && !this.lock.tryAcquire()) {
      if (Date.now() < until) return false
      if (!this.warned) console.warn(`${this.path} held for ${WAIT_LIMIT_MS / 1000} s by a process that is not done: going on without it`)
      this.warned = true
    }
    this.holders++
    return true
  }

  private leave(): void {
    // Releasing is a no-op when this process went on without the lock file.
    if (--this.holders === 0) void this.lock.release()
  }
}
