import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A fresh temporary directory: every test gets its own storage. */
export function tempDir(prefix = 'registry-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}
