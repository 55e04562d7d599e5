/**
 * Runs a generator off the request event loop: each run gets its own worker thread, which is ended
 * when the build is canceled (the abort signal) or runs past its time limit.
 */
import { Worker } from 'node:worker_threads'
import { PHP_GENERATOR } from './php/generator.js'
import type { GenerateReply } from './generate-worker.js'
import { sortFiles, type GenerateTask, type GeneratedFile } from './types.js'
import type { SdkTarget } from '../storage/records.js'
import { execArgvOption, workerModule } from '../worker-exec-argv.js'

/**
 * The worker module (workerModule), imported from a one-line script. The TypeScript source (under tsx,
 * the tests) is imported after the script registers tsx's loader in the new thread, which does not
 * inherit it.
 */
function workerScript(execArgv: readonly string[] | undefined): string {
  const file = workerModule(import.meta.url, 'generate-worker', execArgv)
  if (!file.endsWith('.ts')) return `import(${JSON.stringify(file)})`
  return `import('tsx/esm/api').then(({ register }) => { register() }).then(() => import(${JSON.stringify(file)}))`
}

/** Name and version of the generator of a target (recorded in each build's inputs). */
export async function generatorOf(target: SdkTarget): Promise<{ name: string; version: string }> {
  if (target === 'php') return PHP_GENERATOR
  // Loaded on demand: hey-api is large, and only this needs its version on the main thread.
  const { TYPESCRIPT_GENERATOR } = await import('./typescript.js')
  return TYPESCRIPT_GENERATOR
}

export function generate(task: GenerateTask, options: { signal: AbortSignal; timeoutMs: number; memoryMb?: number; execArgv?: readonly string[] }): Promise<GeneratedFile[]> {
  return new Promise((resolve, reject) => {
    if (options.signal.aborted) return reject(options.signal.reason)
    const worker = new Worker(workerScript(options.execArgv), {
      eval: true,
      workerData: task,
      resourceLimits: { maxOldGenerationSizeMb: options.memoryMb ?? 1024 },
      ...execArgvOption(options.execArgv),
    })
    let settled = false
    const finish = (outcome: () => void) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      options.signal.removeEventListener('abort', onAbort)
      void worker.terminate()
      outcome()
    }
    const onAbort = () => finish(() => reject(options.signal.reason))
    const timer = setTimeout(() => finish(() => reject(new Error(`the generator ran longer than ${options.timeoutMs} ms`))), options.timeoutMs)
    options.signal.addEventListener('abort', onAbort, { once: true })
    worker.once('message', (reply: GenerateReply) => finish(() =>
      'files' in reply ? resolve(sortFiles(reply.files)) : reject(new Error(`the generator failed: ${reply.error}`))))
    worker.once('error', (error) => finish(() => reject(new Error(`the generator stopped: ${error.message}`))))
    worker.once('exit', (code) => finish(() => reject(new Error(`the generator exited (code ${code}) without an answer`))))
  })
}
