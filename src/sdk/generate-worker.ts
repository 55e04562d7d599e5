/** The worker thread of one generator run: receives a GenerateTask, posts back the files or an error. */
import { parentPort, workerData } from 'node:worker_threads'
import { generatePhp } from './php/generator.js'
import type { GenerateTask, GeneratedFile } from './types.js'

export type GenerateReply = { files: GeneratedFile[] } | { error: string }

async function run(task: GenerateTask): Promise<GeneratedFile[]> {
  if (task.target === 'php') return generatePhp(task)
  // Loaded only for TypeScript: hey-api is most of a worker's start-up time.
  const { generateTypeScript } = await import('./typescript.js')
  return generateTypeScript(task)
}

run(workerData as GenerateTask).then(
  (files) => parentPort!.postMessage({ files } satisfies GenerateReply),
  (error: unknown) => parentPort!.postMessage({ error: error instanceof Error ? error.message : String(error) } satisfies GenerateReply),
)
