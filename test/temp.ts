import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const made = new Set<string>()

// A test that fails, or forgets its teardown, still leaves nothing behind in the machine's /tmp.
process.on('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/** A fresh temporary directory: every test gets its own storage. Removed when the process exits, at the latest. */
export function tempDir(prefix = 'registry-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.add(dir)
  return dir
}
