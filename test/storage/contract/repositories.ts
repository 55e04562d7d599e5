/** The port's repositories section, run against every adapter by contract.ts. */
import type { Test } from 'tap'
import type { OpenStorage } from './contract.js'

export function repositoryContract(t: Test, open: OpenStorage): void {
}
