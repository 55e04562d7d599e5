/**
 * When a failed delivery is tried again, and when an endpoint that keeps failing is disabled: the
 * schedule Standard Webhooks recommends (and Svix uses), which retries for about 27 hours.
 */

/** Seconds after the failed attempt before the next one: attempt 2 waits 5 s, … attempt 8 waits 10 h. */
export const RETRY_DELAYS_SECONDS = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600] as const

/** An endpoint whose every attempt failed for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000

/** When to try again after `attempts` attempts failed; null when none is left. */
export function nextAttemptAt(attempts: number, failedAt: Date): Date | null {
  const delay = RETRY_DELAYS_SECONDS[attempts - 1]
  return delay === undefined ? null : new Date(failedAt.getTime() + delay * 1000)
}

/** True when an endpoint failing since `failingSince` has failed long enough to be disabled. */
export function failedTooLong(failingSince: string | null, at: Date): boolean {
  return failingSince !== null && at.getTime() - Date.parse(failingSince) >= DISABLE_AFTER_MS
}
