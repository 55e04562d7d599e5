/**
 * What the storage port stores. The records are today's (src/store/records.ts and the mirror's journal
 * types), re-exported here so that code written against the port imports its types from one place and
 * the on-disk shape of an existing `./storage` stays exactly what it was.
 */
export type {
  KeyRecord, ListFilter, OrganizationRecord, Page, PageRequest, ResourceKind, ResourceRecord, VersionRecord,
} from '../store/records.js'
export type { BlobRef, BlobStore } from '../store/interfaces.js'
export type { JournalChange, JournalEntry } from '../store/mirror-store.js'
