-- Up Migration
-- Repository syncs claimed across replicas (issue 16, item 8): one row per connection while a sync of
-- it runs or waits. `record` (features/repositories.ts, SyncLeaseRecord) holds the running sync with its
-- holder and lease end, and the sync asked for meanwhile (run after it). A row of its own, not the
-- connection's record: that record's `updated_at` is the connection's version, which a lease renewal
-- must not move. Gone with the connection (a disconnect, or its API's deletion).
CREATE TABLE repository_sync_leases (
  api_id text COLLATE "C" PRIMARY KEY REFERENCES repository_connections (api_id) ON DELETE CASCADE,
  -- When another runner may claim it (RFC 3339, compared as text): the running sync's lease end, or,
  -- with none running, when the waiting one was asked for.
  due text COLLATE "C" NOT NULL,
  record json NOT NULL
);
-- What a runner claims next: the oldest due.
CREATE INDEX repository_sync_leases_by_due ON repository_sync_leases (due, api_id);
