/**
 * Temporary directories of builds (a delivery's git objects, hey-api's output). Their names carry the
 * process id, so that directories left by a process that was killed can be found and removed when a
 * registry starts its build runner.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const PREFIX = 'registry-build-'

export function makeWorkDir(kind: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `${PREFIX}${process.pid}-${kind}-`))
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Removes the work directories of processes that no longer run. */
export async function removeStaleWorkDirs(): Promise<void> {
  for (const name of await readdir(tmpdir())) {
    const pid = name.startsWith(PREFIX) ? Number(name.slice(PREFIX.length).split('-')[0]) : 0
    if (pid && pid !== process.pid && !alive(pid)) await rm(join(tmpdir(), name), { recursive: true, force: true })
  }
}
