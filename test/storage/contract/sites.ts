/** The port's sites section, run against every adapter by contract.ts. */
import type { Test } from 'tap'
import type { OpenStorage } from './contract.js'

export function siteContract(t: Test, open: OpenStorage): void {
}
