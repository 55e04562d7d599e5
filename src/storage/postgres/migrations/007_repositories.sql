-- Up Migration
-- Repository sync (issue 5): each API's connection to a file in a git repository (with its sealed
-- token and webhook secret, and its last sync, all in `record`), and the inbound webhook deliveries
-- already handled. Records are kept whole in `record`, as in 001; the columns beside it are what the
-- constraints and queries need.

-- One connection per API, gone with its API (as LMDB's delete hook removes it in the delete's transaction).
CREATE TABLE repository_connections (
  api_id text COLLATE "C" PRIMARY KEY REFERENCES resources (id) ON DELETE CASCADE,
  -- The connection's own id: its secrets are sealed for (api_id, id).
  id text COLLATE "C" NOT NULL UNIQUE,
  organization_id text COLLATE "C" NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  provider text COLLATE "C" NOT NULL CHECK (provider IN ('github', 'gitlab')),
  -- `host[:port]/path` lowercased: what a webhook's payload is matched on.
  normalized_url text COLLATE "C" NOT NULL CHECK (normalized_url <> ''),
  branch text COLLATE "C" NOT NULL CHECK (branch <> ''),
  record json NOT NULL
);
-- A webhook's push: the connections to its repository (LMDB's `repository-branches`, same order).
CREATE INDEX repository_connections_by_repository ON repository_connections (normalized_url, branch, api_id);
CREATE INDEX repository_connections_by_organization ON repository_connections (organization_id, api_id);

-- Inbound webhook delivery ids already handled (a provider's redelivery is not processed again); the
-- newest are kept (10,000 by default), the oldest by time first seen dropped as new ones come.
-- (`webhook_deliveries`, from 002, are the registry's own outbound deliveries.)
CREATE TABLE repository_webhook_deliveries (
  provider text COLLATE "C" NOT NULL CHECK (provider IN ('github', 'gitlab')),
  id text COLLATE "C" NOT NULL,
  -- Milliseconds since the epoch, when first seen.
  seen_at_ms bigint NOT NULL,
  PRIMARY KEY (provider, id)
);
CREATE INDEX repository_webhook_deliveries_by_age ON repository_webhook_deliveries (seen_at_ms, provider, id);
