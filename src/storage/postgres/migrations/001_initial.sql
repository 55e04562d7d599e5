-- Up Migration
-- The registry's first schema: organizations and keys, resources and versions, the blobs of their
-- documents and the git mirror's journal. Each record is kept whole in `record` (json keeps the text and
-- its key order, so answers are the same as on LMDB); the columns beside it are what the constraints
-- and queries need. Text that is sorted or compared is COLLATE "C": byte order, as LMDB's keys.

CREATE TABLE organizations (
  id text COLLATE "C" PRIMARY KEY,
  slug text COLLATE "C" NOT NULL UNIQUE,
  record json NOT NULL
);

CREATE TABLE keys (
  id text COLLATE "C" PRIMARY KEY,
  organization_id text COLLATE "C" NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  hash text COLLATE "C" NOT NULL UNIQUE,
  record json NOT NULL
);
CREATE INDEX keys_by_organization ON keys (organization_id, id);

CREATE TABLE resources (
  id text COLLATE "C" PRIMARY KEY,
  organization_id text COLLATE "C" NOT NULL REFERENCES organizations (id),
  kind text COLLATE "C" NOT NULL CHECK (kind IN ('api', 'schema', 'ruleset')),
  slug text COLLATE "C" NOT NULL,
  name text COLLATE "C" NOT NULL,
  visibility text COLLATE "C" NOT NULL CHECK (visibility IN ('private', 'public')),
  -- An API's ruleset: a ruleset still attached cannot be removed.
  ruleset_id text COLLATE "C" REFERENCES resources (id),
  -- Highest version number handed out; numbers are never reused.
  last_number integer NOT NULL CHECK (last_number >= 0),
  -- The current version: always the last one appended (a restore appends a copy).
  current_number integer,
  record json NOT NULL,
  UNIQUE (organization_id, kind, slug),
  CHECK ((last_number = 0 AND current_number IS NULL) OR current_number = last_number)
);
CREATE INDEX resources_by_name ON resources (organization_id, kind, name, id);
CREATE INDEX resources_by_ruleset ON resources (ruleset_id) WHERE ruleset_id IS NOT NULL;

CREATE TABLE versions (
  id text COLLATE "C" PRIMARY KEY,
  resource_id text COLLATE "C" NOT NULL REFERENCES resources (id) ON DELETE CASCADE,
  number integer NOT NULL CHECK (number >= 1),
  kind text COLLATE "C" NOT NULL,
  checksum text COLLATE "C" NOT NULL,
  record json NOT NULL,
  UNIQUE (resource_id, number)
);

-- The current version exists (checked at commit: the version and its resource's new number are
-- written in one transaction).
ALTER TABLE resources ADD CONSTRAINT resources_current_version
  FOREIGN KEY (id, current_number) REFERENCES versions (resource_id, number) DEFERRABLE INITIALLY DEFERRED;

-- (kind, checksum) once a version with that content was committed for that kind; kept after deletes.
CREATE TABLE valid_documents (
  kind text COLLATE "C" NOT NULL,
  checksum text COLLATE "C" NOT NULL,
  PRIMARY KEY (kind, checksum)
);

-- Content-addressed documents: the same text is stored once however often it is uploaded.
CREATE TABLE blobs (
  checksum text COLLATE "C" NOT NULL,
  digest text COLLATE "C" NOT NULL,
  format text COLLATE "C" NOT NULL CHECK (format IN ('json', 'yaml')),
  bytes bytea NOT NULL,
  -- Last written or found again by an upload: gc keeps blobs younger than its grace period.
  touched_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (checksum, digest, format)
);

-- The git mirror's journal: numbered by a sequence as entries are written, so concurrent writers never
-- conflict over it. `xid` is the writing transaction: a reader takes entries whose transactions are all
-- finished (below the snapshot's xmin), since sequence order is not commit order.
CREATE TABLE mirror_journal (
  seq bigint PRIMARY KEY,
  organization_id text COLLATE "C" NOT NULL,
  xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
  entry json NOT NULL
);
CREATE SEQUENCE mirror_journal_seq OWNED BY mirror_journal.seq;

-- Every change ever journaled, kept after it is applied (a mirror rebuild replays it).
CREATE TABLE mirror_history (
  organization_id text COLLATE "C" NOT NULL,
  seq bigint NOT NULL,
  entry json NOT NULL,
  PRIMARY KEY (organization_id, seq)
);
