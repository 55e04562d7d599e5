/**
 * What long maintenance work (backup, verify, gc, a mirror rebuild) tells whoever runs it: a step of a
 * named phase, out of `total` when it is known. The CLI draws it on a terminal; nothing else listens.
 */
export type ProgressListener = (phase: string, done: number, total?: number) => void

export const NO_PROGRESS: ProgressListener = () => undefined
