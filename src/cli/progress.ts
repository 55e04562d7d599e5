/** Progress bars of the long commands, on a terminal only. */
import cliProgress from 'cli-progress'
import type { ProgressListener } from '../domain/operations/progress.js'

/**
 * Progress is drawn on stderr when it is a terminal, and never with --json: a pipe, a file or a
 * program reading the JSON gets the result and nothing else.
 */
export function showsProgress(stderr: { isTTY?: boolean }, json: boolean): boolean {
  return stderr.isTTY === true && !json
}

/** Redraws at most this often: a phase of a million steps calls the listener a million times. */
const REDRAW_MS = 100

export interface ProgressBars {
  /** For the domain: undefined when nothing is drawn. */
  listener: ProgressListener | undefined
  /** Clears the last bar's line state (the bar stays on screen, completed). */
  stop(): void
}

/**
 * One bar per phase, `<command>: <phase> [████░░░░] 40/100` (or a count while the total is unknown),
 * each left complete on its own line when the next phase begins.
 */
export function progressBars(command: string, enabled: boolean): ProgressBars {
  if (!enabled) return { listener: undefined, stop: () => undefined }
  let bar: cliProgress.SingleBar | undefined
  let phase: string | undefined
  let lastDraw = 0
  let lastDone = 0
  const stop = () => {
    bar?.update(lastDone) // the phase's last step, which the redraw limit may have skipped
    bar?.stop()
    bar = undefined
  }
  const listener: ProgressListener = (next, done, total) => {
    if (next !== phase) {
      stop()
      lastDone = done
      phase = next
      const format = total === undefined
        ? `${command}: ${next} {value}`
        : `${command}: ${next} [{bar}] {value}/{total}`
      bar = new cliProgress.SingleBar({ format, hideCursor: false }, cliProgress.Presets.shades_classic)
      bar.start(total ?? 0, done)
      lastDraw = Date.now()
      return
    }
    lastDone = done
    const now = Date.now()
    if (now - lastDraw < REDRAW_MS && done !== total) return
    lastDraw = now
    if (total !== undefined) bar?.setTotal(total)
    bar?.update(done)
  }
  return { listener, stop }
}
