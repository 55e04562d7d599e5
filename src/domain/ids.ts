import { monotonicFactory } from 'ulid'

const ulid = monotonicFactory()

export const ULID_PATTERN = '^[0-9A-HJKMNP-TV-Z]{26}$'
const ULID = new RegExp(ULID_PATTERN)

export const newId = (): string => ulid()
export const isUlid = (value: string): boolean => ULID.test(value)
/** RFC 3339 UTC with milliseconds. */
export const now = (): string => new Date().toISOString()
