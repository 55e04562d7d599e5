/** The port's sdks section, run against every adapter by contract.ts. */
import type { Test } from 'tap'
import type { OpenStorage } from './contract.js'

export function sdkContract(t: Test, open: OpenStorage): void {
}
