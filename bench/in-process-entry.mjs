// A JavaScript entry for the in-process worker: tsx's own API loads the TypeScript module (the
// inherited `--import tsx` registers its loader asynchronously in a new thread, after this entry).
import { tsImport } from 'tsx/esm/api'

await tsImport('./in-process.ts', import.meta.url)
