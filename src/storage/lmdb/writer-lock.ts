/**
 * The git mirror writer's election on LMDB: one writer per storage directory, elected by an exclusive
 * lock file (`git/writer.lock`) holding the writer's process id and boot. A lock left by a process that
 * is gone (`kill -9`), or by another boot (a restored copy of the directory), is taken over.
 */
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import type { Election } from '../port.js'

/** This machine's boot: a lock written by another boot or machine is stale whatever its process id. */
export const BOOT = (() => {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
  } catch {
    return hostname()
  }
})()

export class WriterLock implements Election {
  held = false
  /** The locks this process holds: its own process id in a lock is alive only if one of its WriterLocks holds it. */
  private static readonly inProcess = new Set<string>()

  constructor(private readonly path: string) {}

  /** `<storage>/git/writer.lock`. */
  static of(storage: string): WriterLock {
    return new WriterLock(join(storage, 'git', 'writer.lock'))
  }

  acquire(): Promise<boolean> {
    return Promise.resolve(this.tryAcquire())
  }

  /** Takes the lock if it is free or its holder is gone; answers whether this process holds it. */
  tryAcquire(): boolean {
    if (this.held) return true
    mkdirSync(join(this.path, '..'), { recursive: true })
    for (let attempt = 0; attempt < 2; attempt++) {
      // Written whole, then linked into place: the lock never exists without its content.
      const temporary = `${this.path}.${process.pid}`
      writeFileSync(temporary, `${process.pid} ${BOOT}`)
      try {
        linkSync(temporary, this.path)
        this.held = true
        WriterLock.inProcess.add(this.path)
        return true
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
        if (this.ownerAlive()) return false
        try { unlinkSync(this.path) } catch { /* taken over by another process meanwhile */ }
      } finally {
        unlinkSync(temporary)
      }
    }
    return false
  }

  private ownerAlive(): boolean {
    let content: string
    try {
      content = readFileSync(this.path, 'utf8')
    } catch {
      return true // removed by its owner just now: try again next round
    }
    const [pidText, boot] = content.split(' ')
    const pid = Number.parseInt(pidText, 10)
    if (!Number.isInteger(pid) || pid <= 0 || boot !== BOOT) return false
    if (pid === process.pid) return WriterLock.inProcess.has(this.path)
    try {
      process.kill(pid, 0)
      return true
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM'
    }
  }

  release(): Promise<void> {
    if (!this.held) return Promise.resolve()
    this.held = false
    WriterLock.inProcess.delete(this.path)
    try { unlinkSync(this.path) } catch { /* already gone */ }
    return Promise.resolve()
  }
}
