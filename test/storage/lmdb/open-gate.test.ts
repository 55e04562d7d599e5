import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { OpenGate } from '../../../src/storage/lmdb/open-gate.js'
import { BOOT } from '../../../src/storage/lmdb/writer-lock.js'
import { nodeCommand, ROOT, userEnv } from '../../process/spawn.js'
import { tempDir } from '../../temp.js'
import { appendNext } from '../contract/contract.js'
import { storageWithApi } from './with-api.js'

/** Opens the storage in another process: `starting` once it is about to open, `opened` when it had it open. */
function openElsewhere(storage: string): { starting: Promise<void>; opened: Promise<number> } {
  const child = spawn(...nodeCommand(['--import', 'tsx', 'test/fixtures/storage/open-storage.ts', storage]), {
    cwd: ROOT, env: userEnv(), stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  let started: () => void
  const starting = new Promise<void>((resolve) => { started = resolve })
  child.stdout.on('data', (chunk) => {
    out += chunk
    if (out.includes('opening\n')) started()
  })
  child.stderr.on('data', (chunk) => { err += chunk })
  const opened = new Promise<number>((resolve, reject) => child.on('close', (code) => {
    started()
    if (code === 0) resolve(Number(out.split('\n')[1]))
    else reject(new Error(`the other process exited ${code}: ${err}`))
  }))
  return { starting, opened }
}

t.test('another process opens the storage only once no commit of this one is in flight', async (t) => {
  const { directory, storage, api } = await storageWithApi(t)
  // A commit held in flight from before the other process tries to open until half a second after.
  let released = 0
  let other: ReturnType<typeof openElsewhere> | undefined
  await OpenGate.of(directory).committing(async () => {
    other = openElsewhere(directory)
    await other.starting
    await sleep(500)
    released = Date.now()
  })
  t.ok((await other!.opened) >= released, 'opened after the commit was done')
  // And the storage is whole for both: this process appends after the other one's open.
  t.equal((await storage.transaction((tx) => appendNext(tx, api.id))).number, 1)
})

t.test('a gate left by a process that is gone (killed in a commit) does not keep the storage from opening', async (t) => {
  const directory = tempDir()
  t.teardown(() => rmSync(directory, { recursive: true, force: true }))
  const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString()
  mkdirSync(join(directory, 'index'), { recursive: true })
  writeFileSync(join(directory, 'index', 'open.lock'), `${gone} ${BOOT}`)
  t.ok((await openElsewhere(directory).opened) > 0, 'opened')
})
