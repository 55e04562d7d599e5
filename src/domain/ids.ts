import { monotonicFactory } from 'ulid'

const ulid = monotonicFactory()

export const ULID_PATTERN = '^[0-9A-HJKMNP-TV-Z]{26}$'

export const newId = (): string => ulid()
/** RFC 3339 UTC with milliseconds. */
export const now = (): string => new Date().toISOString()
