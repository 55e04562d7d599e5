import type { PageRequest } from '../../storage/registry-records.js'

export const DEFAULT_LIMIT = 20
export const MAX_LIMIT = 100

/** `page` is 1-based; the HTTP layer has already checked the ranges. */
export function toPageRequest(page = 1, limit = DEFAULT_LIMIT): PageRequest {
  return { offset: (page - 1) * limit, limit }
}
