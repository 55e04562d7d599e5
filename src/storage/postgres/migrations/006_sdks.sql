-- Up Migration
-- SDKs (issue 7): generation configs attaching APIs of their organization, one output repository per
-- SDK and target, and builds (numbered per SDK) with their queue, logs and artifacts. Records are kept
-- whole in `record`, as in 001; the columns beside it are what the constraints and queries need.

CREATE TABLE sdks (
  id text COLLATE "C" PRIMARY KEY,
  organization_id text COLLATE "C" NOT NULL REFERENCES organizations (id),
  slug text COLLATE "C" NOT NULL,
  -- Highest build number handed out; numbers are never reused.
  last_build_number integer NOT NULL CHECK (last_build_number >= 0),
  record json NOT NULL,
  UNIQUE (organization_id, slug),
  -- What a build's (sdk_id, organization_id) refers to: a build is of its SDK's organization.
  UNIQUE (id, organization_id)
);
-- An organization's SDKs, newest first (ids are ULIDs).
CREATE INDEX sdks_by_organization ON sdks (organization_id, id);

-- The APIs an SDK attaches (the reverse index LMDB keeps in `sdk-apis`): an attached API cannot be
-- removed (its resource row is referenced), as the LMDB delete guard refuses it with 409.
CREATE TABLE sdk_apis (
  sdk_id text COLLATE "C" NOT NULL REFERENCES sdks (id) ON DELETE CASCADE,
  api_id text COLLATE "C" NOT NULL REFERENCES resources (id),
  -- A pinned version (of that API: checked by the adapter); null: the API's current version.
  version_id text COLLATE "C" REFERENCES versions (id),
  PRIMARY KEY (sdk_id, api_id)
);
CREATE INDEX sdk_apis_by_api ON sdk_apis (api_id, sdk_id);

-- One output repository per SDK and target (its record holds the sealed token).
CREATE TABLE sdk_repositories (
  sdk_id text COLLATE "C" NOT NULL REFERENCES sdks (id) ON DELETE CASCADE,
  target text COLLATE "C" NOT NULL CHECK (target IN ('typescript', 'php')),
  record json NOT NULL,
  PRIMARY KEY (sdk_id, target)
);

CREATE TABLE builds (
  id text COLLATE "C" PRIMARY KEY,
  organization_id text COLLATE "C" NOT NULL,
  sdk_id text COLLATE "C" NOT NULL,
  number integer NOT NULL CHECK (number >= 1),
  status text COLLATE "C" NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'canceled')),
  record json NOT NULL,
  UNIQUE (sdk_id, number),
  -- Removed with their SDK, as LMDB's removeSdk does.
  FOREIGN KEY (sdk_id, organization_id) REFERENCES sdks (id, organization_id) ON DELETE CASCADE
);
-- Newest first: an organization's builds, an SDK's builds.
CREATE INDEX builds_by_organization ON builds (organization_id, id);
CREATE INDEX builds_by_sdk ON builds (sdk_id, id);
-- The queue (LMDB's `build-queue`): builds queued or running, oldest first.
CREATE INDEX builds_queue ON builds (id) WHERE status IN ('queued', 'running');

-- A build's log: text (bounded by the runner), replaced as the build goes on.
CREATE TABLE build_logs (
  build_id text COLLATE "C" PRIMARY KEY REFERENCES builds (id) ON DELETE CASCADE,
  log text NOT NULL
);

-- A build's generated files, a deterministic .tar.gz: its own row, removed with its build (not the
-- content-addressed blobs, which hold documents and are collected by what versions refer to).
CREATE TABLE build_artifacts (
  build_id text COLLATE "C" PRIMARY KEY REFERENCES builds (id) ON DELETE CASCADE,
  bytes bytea NOT NULL
);
