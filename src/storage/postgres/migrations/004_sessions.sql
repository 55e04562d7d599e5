-- Up Migration
-- Console sign-in sessions (issue 17) by the SHA-256 hex of their id; swept in order of expiry.

CREATE TABLE sessions (
  hash text COLLATE "C" PRIMARY KEY,
  -- ISO 8601 UTC, one format: sorts as it compares.
  expires_at text COLLATE "C" NOT NULL,
  record json NOT NULL
);
CREATE INDEX sessions_by_expiry ON sessions (expires_at, hash);
